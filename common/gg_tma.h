/* Host-side TMA descriptors (CUtensorMap) for bf16 tensors. Plain C.
 * cuTensorMapEncodeTiled is a driver API function; we fetch it through the runtime's
 * entry-point query so that nothing links libcuda directly (the binary still starts on
 * machines without a driver, and says so, instead of failing to load). */
#ifndef GG_TMA_H
#define GG_TMA_H
#include <stdint.h>
#include <cuda.h>

#include "gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rank 2 or 3; dims[] innermost first (elements); strides[] in bytes for dims 1..rank-1;
 * box[] elements per dimension; swizzle: CU_TENSOR_MAP_SWIZZLE_NONE/_128B...
 * Out-of-bounds elements of a box read as zero. Returns 0 on success, else prints why. */
int gg_tmap_bf16(CUtensorMap *map, const void *base, int rank, const uint64_t *dims,
                 const uint64_t *strides, const uint32_t *box, CUtensorMapSwizzle swizzle);

/* The two maps of every TMA stage, 128B-swizzled, one box row = 64 bf16 = 128 bytes:
 * A [tokens x k] in boxes of 64 k x box_rows rows (rows past `tokens` read as zeros);
 * B [experts x k x n] in boxes of 64 columns x 64 k of one expert (columns past n: zeros). */
int gg_tmap_a(CUtensorMap *map, const GgLaunch *p, uint32_t box_rows);
int gg_tmap_b(CUtensorMap *map, const GgLaunch *p);
/* Any [experts x rows x cols] bf16 tensor as B's map is built, in boxes of 64 columns x box_rows
 * rows of one expert (gg_tmap_b is this on B with 64-row boxes; k5_wgrad stores dB through it
 * in 16-row boxes). */
int gg_tmap_experts(CUtensorMap *map, const void *base, int experts, int rows, int cols, uint32_t box_rows);
/* Any row-major bf16 matrix [rows x cols] as A's map is built: boxes of 64 columns x box_rows
 * rows, 128B swizzle, rows and columns past the ends read as zeros (gg_tmap_a is this on A). */
int gg_tmap_rows(CUtensorMap *map, const void *base, int cols, int rows, uint32_t box_rows);

/* 1 if A, B and C start on 16 bytes (TMA needs it of a global address; the k3 epilogues store
 * 16 bytes at a time); else 0, after one line on stderr naming `who`. */
int gg_launch_aligned16(const GgLaunch *p, const char *who);

#ifdef __cplusplus
}
#endif
#endif
