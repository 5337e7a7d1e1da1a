/* The 128-byte shared-memory swizzle (CU_TENSOR_MAP_SWIZZLE_128B), as an address function.
 *
 * A tile of 128-byte rows (64 bf16 each) is stored in 1024-byte atoms of 8 rows. Inside an
 * atom, the 16-byte chunk that holds logical columns [8c, 8c + 8) of row r is not at chunk
 * position c but at c XOR (r & 7). Eight rows that read the same logical chunk therefore hit
 * eight different chunk positions, i.e. eight different groups of four 4-byte banks: an
 * ldmatrix phase (8 row addresses) is conflict-free without padding the rows.
 *
 * TMA applies the XOR to shared-memory address bits [6:4] using bits [9:7], so the pattern is
 * anchored to absolute addresses: the tile base must be 1024-byte aligned for this function
 * (which starts the pattern at offset 0) to agree with what TMA wrote.
 * Shared by the k2 kernel and the CPU test tests/suite_swizzle.c. */
#ifndef GG_SWIZZLE_H
#define GG_SWIZZLE_H
#include <stdint.h>
#include "gg_hd.h"

#define GG_SWIZZLE128_ROW_BYTES 128u  /* one row = one swizzle row = 8 chunks */
#define GG_SWIZZLE128_CHUNK_BYTES 16u /* one chunk = 8 bf16 = one ldmatrix row */

/* Byte offset, from a 1024-byte-aligned tile base, of logical 16-byte chunk `chunk` (0..7)
 * of row `row` (any row >= 0; rows 8..15 form the next atom, and so on). */
GG_HD uint32_t gg_swizzle128(uint32_t row, uint32_t chunk) {
    const uint32_t row_start = row * GG_SWIZZLE128_ROW_BYTES;  /* rows are packed, no padding */
    const uint32_t phase = row & 7u;                           /* row's place in its 8-row atom */
    const uint32_t physical = chunk ^ phase;                   /* where TMA put the chunk */
    return row_start + physical * GG_SWIZZLE128_CHUNK_BYTES;   /* chunk index -> bytes */
}

#endif
