/* Exercise: write lab_swizzle128, the 128-byte swizzle (k2 and k3 read every TMA box through
 * it).
 *
 * A tile of 128-byte rows (64 bf16) is stored in 1024-byte atoms of 8 rows. TMA, told
 * CU_TENSOR_MAP_SWIZZLE_128B, does not put the 16-byte chunk `chunk` (0..7) of row `row` at
 * byte row * 128 + chunk * 16: it moves the chunk within its row so that 8 consecutive rows
 * reading the same logical chunk hit 8 different groups of banks. lab_swizzle128(row, chunk)
 * returns the byte offset, from a 1024-byte-aligned tile base, where TMA put it. (CUDA
 * programming guide, "TMA Swizzle"; the repository's answer is gg_swizzle128 in
 * common/gg_swizzle.h.)
 * Grade (rebuilds first): cmake --build build --target lab_cpu && build/bin/lab_cpu swizzle */
#include "lab_cpu.h"

uint32_t lab_swizzle128(uint32_t row, uint32_t chunk) {
    (void)row;
    (void)chunk;
    return 0; /* your code here */
}
