/* Shared-memory banks, for the swizzle diagram and its test: 32 banks of 4 bytes, so a 16-byte
 * access (one ldmatrix row, one swizzle chunk) covers one of 8 groups of four banks, and the
 * 8 row reads of an ldmatrix phase are conflict-free exactly when they use 8 different groups. */
#ifndef GG_BANKS_H
#define GG_BANKS_H
#include <stdint.h>
#include "gg_hd.h"
#include "gg_swizzle.h"

#define GG_BANK_GROUPS 8u /* 32 banks x 4 bytes / 16 bytes */

/* The group of four banks a 16-byte-aligned access at this byte offset uses: 0..7. */
GG_HD uint32_t gg_bank_group(uint32_t offset) {
    return offset / GG_SWIZZLE128_CHUNK_BYTES % GG_BANK_GROUPS;
}

/* The layout the swizzle replaces: 128-byte rows, row-major, no padding, so chunk `chunk` of
 * every row sits at the same place in its row, and so in the same bank group. */
GG_HD uint32_t gg_rowmajor128(uint32_t row, uint32_t chunk) {
    return row * GG_SWIZZLE128_ROW_BYTES + chunk * GG_SWIZZLE128_CHUNK_BYTES;
}

#endif
