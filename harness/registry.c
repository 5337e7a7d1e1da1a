/* The one table of every registered kernel configuration: {name, stage, config, arch,
 * tile parameters, can_implement, info, launch}. `ggemm list` prints it; `--kernel NAME`
 * selects a row. Configurations that cannot launch on the current GPU stay listed with
 * the reason (architecture, shared memory, registers); none is dropped silently. */
#include <stdio.h>
#include <string.h>

#include "gg_harness.h"
#include "k0_fma/k0_fma.h"
#include "k1_mmasync/k1_mmasync.h"
#include "k2_tma_ws/k2_tma_ws.h"
#include "k3_tcgen05/k3_tcgen05.h"
#include "k3_wgmma/k3_wgmma.h"

/* One line per configuration; each stage exports NAME_info, NAME_launch and one
 * STAGE_can_implement (see common/gg_kernel.h). */
#define ROW(NAME, STAGE, CONFIG, ARCH, SPECIFIC, BM, BN, BK, STAGES, HOST_TILES) \
    {#NAME, #STAGE, CONFIG, ARCH, SPECIFIC, BM, BN, BK, STAGES, HOST_TILES,      \
     STAGE##_can_implement, NAME##_info, NAME##_launch}

const GgKernel gg_kernels[] = {
    /*  name, stage, config, arch, 'a' target, BLOCK_M (0 = adaptive), BLOCK_N, BLOCK_K, STAGES, host tile list */
    ROW(k0_fma, k0_fma, "64x64 tile, 4x4 per thread, FP32 FFMA", 80, 0, 64, 64, 16, 1, 1),
    ROW(k1_mmasync_bm128, k1_mmasync, "mma.sync, warps 2x4 of 64x32, cp.async x2", 80, 0, 128, 128, 32, 2, 1),
    ROW(k1_mmasync_bm64, k1_mmasync, "mma.sync, warps 2x4 of 32x32, cp.async x2", 80, 0, 64, 128, 32, 2, 1),
    ROW(k1_mmasync_bm32, k1_mmasync, "mma.sync, warps 2x4 of 16x32, cp.async x2", 80, 0, 32, 128, 32, 2, 1),
    ROW(k1_mmasync_bm64_fragdb, k1_mmasync, "bm64 + register fragment double-buffering", 80, 0, 64, 128, 32, 2, 1),
    ROW(k2_tma_ws_s2, k2_tma_ws, "TMA + mbarrier ring, producer warp, 8 mma.sync warps", 90, 1, 128, 128, 64, 2, 1),
    ROW(k2_tma_ws_s3, k2_tma_ws, "TMA + mbarrier ring, producer warp, 8 mma.sync warps", 90, 1, 128, 128, 64, 3, 1),
    ROW(k2_tma_ws_s3_1blk, k2_tma_ws, "3 stages, registers uncapped (one block per SM)", 90, 1, 128, 128, 64, 3, 1),
    ROW(k2_tma_ws_bm64, k2_tma_ws, "TMA ring, BM=64, warps 2x4 of 32x32", 90, 1, 64, 128, 64, 4, 1),
    ROW(k3_wgmma_tile, k3_wgmma, "wgmma 128x192, 5 stages, one CTA per host-list tile", 90, 1, 128, 192, 64, 5, 1),
    ROW(k3_wgmma_persist, k3_wgmma, "wgmma 128x192, persistent, device schedule", 90, 1, 128, 192, 64, 5, 0),
    ROW(k3_wgmma_solo64, k3_wgmma, "wgmma 128|64x192, persistent, adaptive BM, 64-row tile on one warpgroup", 90, 1, 0, 192, 64, 5, 0),
    ROW(k3_wgmma, k3_wgmma, "wgmma 128|64x192, persistent, adaptive BM, 64-row tile split by columns", 90, 1, 0, 192, 64, 5, 0),
    ROW(k3_wgmma_n128, k3_wgmma, "wgmma 128|64x128, 6 stages, persistent, adaptive BM (split)", 90, 1, 0, 128, 64, 6, 0),
    ROW(k3_wgmma_n256, k3_wgmma, "wgmma 128|64x256, 4 stages, persistent, adaptive BM (split)", 90, 1, 0, 256, 64, 4, 0),
    ROW(k3_wgmma_mc, k3_wgmma, "k3_wgmma in 2-CTA clusters, B multicast to the row-tile pair", 90, 1, 0, 192, 64, 5, 0),
    ROW(k3_wgmma_mc_n256, k3_wgmma, "k3_wgmma_n256 in 2-CTA clusters, B multicast to the row-tile pair", 90, 1, 0, 256, 64, 4, 0),
    ROW(k3_wgmma_mca, k3_wgmma, "k3_wgmma in 2-CTA clusters, A multicast to the column-block pair", 90, 1, 0, 192, 64, 5, 0),
    ROW(k3_tcgen05, k3_tcgen05, "tcgen05 2-CTA pair 256x256, TMEM double buffer", 100, 1, 256, 256, 64, 6, 0),
};
const int gg_kernel_count = (int)(sizeof gg_kernels / sizeof gg_kernels[0]);

const GgKernel *gg_find_kernel(const char *name) {
    for (int i = 0; i < gg_kernel_count; ++i)
        if (!strcmp(gg_kernels[i].name, name)) return &gg_kernels[i];
    return NULL;
}

int gg_kernel_arch_ok(const GgKernel *k, int cc_major, int cc_minor, char *why, size_t len) {
    const int cc = cc_major * 10 + cc_minor;
    /* 'a' targets (sm_90a, sm_100a) run on exactly that compute capability; the others on
     * anything newer, through the embedded PTX. */
    const int ok = k->arch_specific ? cc == k->arch : cc >= k->arch;
    if (!ok)
        snprintf(why, len, "%s needs sm_%d%s; this GPU is sm_%d", k->name, k->arch,
                 k->arch_specific ? "a" : " or newer", cc);
    return ok;
}

const char *gg_kernel_math(const GgKernel *k) {
    if (!strncmp(k->stage, "k0", 2)) return "ffma";
    if (!strcmp(k->stage, "k3_wgmma")) return "wgmma";
    if (!strcmp(k->stage, "k3_tcgen05")) return "tcgen05";
    return "mma.sync";
}
