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
 * STAGE_can_implement (see common/gg_kernel.h). Tile parameters come from NAME_info. */
#define ROW(NAME, STAGE, CONFIG, ARCH, SPECIFIC) \
    {#NAME, #STAGE, CONFIG, ARCH, SPECIFIC, STAGE##_can_implement, NAME##_info, NAME##_launch}

const GgKernel gg_kernels[] = {
    /*  name, stage, config, arch it was built for, 'a' target */
    ROW(k0_fma, k0_fma, "FP32 FFMA from shared memory, a register micro-tile per thread", 80, 0),
    ROW(k1_mmasync_bm128, k1_mmasync, "ldmatrix + mma.sync, cp.async double buffer", 80, 0),
    ROW(k1_mmasync_bm64, k1_mmasync, "ldmatrix + mma.sync, cp.async double buffer", 80, 0),
    ROW(k1_mmasync_bm32, k1_mmasync, "ldmatrix + mma.sync, cp.async double buffer", 80, 0),
    ROW(k1_mmasync_bm64_fragdb, k1_mmasync, "bm64 + register fragment double-buffering", 80, 0),
    ROW(k2_tma_ws_s2, k2_tma_ws, "TMA + mbarrier ring, producer warp, mma.sync warps", 90, 1),
    ROW(k2_tma_ws_s3, k2_tma_ws, "TMA + mbarrier ring, producer warp, mma.sync warps", 90, 1),
    ROW(k2_tma_ws_s3_1blk, k2_tma_ws, "s3 with registers uncapped (one block per SM)", 90, 1),
    ROW(k2_tma_ws_bm64, k2_tma_ws, "TMA + mbarrier ring, producer warp, mma.sync warps", 90, 1),
    ROW(k3_wgmma_tile, k3_wgmma, "wgmma, producer/consumer warpgroups, one CTA per host-list tile", 90, 1),
    ROW(k3_wgmma_persist, k3_wgmma, "+ persistent grid, device-side schedule", 90, 1),
    ROW(k3_wgmma_solo64, k3_wgmma, "+ adaptive BM, a 64-row tile on one consumer", 90, 1),
    ROW(k3_wgmma, k3_wgmma, "+ a 64-row tile split by columns over both consumers", 90, 1),
    ROW(k3_wgmma_n128, k3_wgmma, "k3_wgmma at a narrower tile", 90, 1),
    ROW(k3_wgmma_n256, k3_wgmma, "k3_wgmma at a wider tile", 90, 1),
    ROW(k3_wgmma_mc, k3_wgmma, "k3_wgmma in 2-CTA clusters, B multicast to a row-tile pair", 90, 1),
    ROW(k3_wgmma_mc_n256, k3_wgmma, "k3_wgmma_n256 in 2-CTA clusters, B multicast to a row-tile pair", 90, 1),
    ROW(k3_wgmma_mca, k3_wgmma, "k3_wgmma in 2-CTA clusters, A multicast to a column-block pair", 90, 1),
    ROW(k3_tcgen05, k3_tcgen05, "tcgen05 in 2-CTA pairs, TMEM double buffer", 100, 1),
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
