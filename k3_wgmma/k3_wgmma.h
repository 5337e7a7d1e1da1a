/* k3_wgmma: the registered configurations of stage 3 on Hopper (k3_wgmma.cu: the lesson,
 * k3_wgmma_split64; k3_wgmma_ablations.cu: the others) and the entry point k3_wgmma
 * (k3_wgmma_entry.c), which runs the configuration its rule picks for the shape. sm_90a only.
 * All: 384 threads (producer warpgroup + two consumer warpgroups), BLOCK_K = 64, wgmma from
 * shared-memory descriptors, one CTA per SM. "adaptive" = 128-row tiles plus one 64-row tile
 * for an expert's remainder of 1..64 rows; otherwise every tile is 128 rows. "split" = both
 * consumers compute a 64-row tile, split by columns at a 64-column panel; "solo" = consumer 0
 * computes it alone. Pairs = 2-CTA clusters on two tiles that share an operand, which TMA
 * multicasts: adjacent row tiles share B (_mc), adjacent column blocks share A (_mca).
 * Every configuration has a traced twin (NAME_trace_launch, common/gg_trace.cuh). */
#ifndef K3_WGMMA_H
#define K3_WGMMA_H
#include "gg_kernel.h"
#ifdef __cplusplus
extern "C" {
#endif
GG_DECLARE_TRACED_CONFIG(k3_wgmma_tile)   /* 128 x 192, 5 stages, one CTA per host-list tile */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_persist)/* 128 x 192, 5 stages, persistent, device schedule */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_solo64) /* 128|64 x 192, 5 stages, persistent, adaptive, solo */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_split64)/* 128|64 x 192, 5 stages, persistent, adaptive, split */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_n128)   /* 128|64 x 128, 6 stages, persistent, adaptive, split */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_n256)   /* 128|64 x 256, 4 stages, persistent, adaptive, split */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_mc)     /* split64 in row-tile pairs (cluster 2), B multicast */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_mc_n256)/* k3_wgmma_n256 in row-tile pairs, B multicast */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_mca)    /* split64 in column-block pairs (cluster 2), A multicast */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_persist_n256) /* 128 x 256, 4 stages, persistent, device schedule */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong)      /* 128 x 192, fixed rows, each consumer owns whole tiles */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong_n128) /* the same at 128 x 128 */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong64)     /* k3_wgmma_pingpong with adaptive 128/64 rows */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong64_n128) /* the same at 128|64 x 128 */
/* The entry point: NAME_info / _launch / _trace_launch of the configuration k3_wgmma_choose names. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma)
/* On the current GPU; without one, on the H200 of results/h200 (why says so); NULL (why says
 * so) if the GPU is there but cannot be asked. */
const char *k3_wgmma_choose(const GgShape *s, char *why, size_t len);
/* On the GPU given. */
const char *k3_wgmma_choose_on(const GgShape *s, const GgGpu *gpu, char *why, size_t len);
/* The entry point's row rule: 1 if 64-row remainder tiles pay for this shape on this GPU, at
 * column width block_n (0: the width the rule would take with adaptive rows; k4's fused GEMM1
 * passes its own). */
int k3_wgmma_adaptive_rows(const GgShape *s, const GgGpu *gpu, int block_n);
int k3_wgmma_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
