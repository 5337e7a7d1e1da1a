/* The one table of every registered kernel configuration ({name, stage, description, arch,
 * can_implement, info, launch}) and of the peers. `ggemm list` prints it; `--kernel NAME`
 * resolves a name once (gg_impl_find). Configurations that cannot launch on the current GPU
 * stay listed with the reason (architecture, shared memory, registers); none is dropped
 * silently. Tile parameters are the kernels' own constants, read through NAME_info. TRACED rows
 * also have a traced twin, which `ggemm trace` runs. */
#include <stdio.h>
#include <string.h>

#include "gg_harness.h"
#include "k0_fma/k0_fma.h"
#include "k1_mmasync/k1_mmasync.h"
#include "k2_tma_ws/k2_tma_ws.h"
#include "k3_tcgen05/k3_tcgen05.h"
#include "k3_wgmma/k3_wgmma.h"
#include "k5_backward/k5_backward.h"

/* One line per configuration; each stage exports NAME_info, NAME_launch and one
 * STAGE_can_implement (see common/gg_kernel.h). Tile parameters come from NAME_info. */
#define ROW(NAME, STAGE, CONFIG) \
    {#NAME, #STAGE, CONFIG, GG_ARCHS_##STAGE, STAGE##_can_implement, NAME##_info, NAME##_launch, NULL, NULL, NULL, 0}
/* A configuration with a traced twin (NAME_trace_launch, common/gg_trace.h): `ggemm trace`. */
#define TRACED(NAME, STAGE, CONFIG)                                                              \
    {#NAME, #STAGE, CONFIG, GG_ARCHS_##STAGE, STAGE##_can_implement, NAME##_info, NAME##_launch, \
     NAME##_trace_launch, NULL, NULL, 0}
/* A lesson step of its stage (`ggemm list` marks it): a TRACED row with its step number. */
#define LESSON(NAME, STAGE, STEP, CONFIG)                                                        \
    {#NAME, #STAGE, CONFIG, GG_ARCHS_##STAGE, STAGE##_can_implement, NAME##_info, NAME##_launch, \
     NAME##_trace_launch, NULL, NULL, STEP}
/* A TRACED row built only with -DGG_ABLATIONS=ON (tests/CMakeLists.txt counts them apart). */
#define ABLATION(NAME, STAGE, CONFIG) TRACED(NAME, STAGE, CONFIG)
/* A TRACED row with its own can_implement (NAME_can_implement): k5's two passes differ. */
#define TRACED_OWN(NAME, STAGE, CONFIG)                                                         \
    {#NAME, #STAGE, CONFIG, GG_ARCHS_##STAGE, NAME##_can_implement, NAME##_info, NAME##_launch, \
     NAME##_trace_launch, NULL, NULL, 0}
/* An entry point (NAME_choose names the configuration it runs for a shape, gg_impl_resolve;
 * NAME_choose_on the same for a GPU given). */
#define ENTRY(NAME, STAGE, CONFIG)                                                               \
    {#NAME, #STAGE, CONFIG, GG_ARCHS_##STAGE, STAGE##_can_implement, NAME##_info, NAME##_launch, \
     NAME##_trace_launch, NAME##_choose, NAME##_choose_on, 0}
/* An entry point with its own can_implement (k5_dgrad). */
#define ENTRY_OWN(NAME, STAGE, CONFIG)                                                          \
    {#NAME, #STAGE, CONFIG, GG_ARCHS_##STAGE, NAME##_can_implement, NAME##_info, NAME##_launch, \
     NAME##_trace_launch, NAME##_choose, NAME##_choose_on, 0}

const GgKernel gg_kernels[] = {
    /*  name, stage, config (what it was built for: GG_ARCHS_<stage>, from CMake) */
    ROW(k0_fma, k0_fma, "FP32 FFMA from shared memory, a register micro-tile per thread"),
    ROW(k1_mmasync_bm128, k1_mmasync, "ldmatrix + mma.sync, cp.async double buffer"),
    ROW(k1_mmasync_bm64, k1_mmasync, "ldmatrix + mma.sync, cp.async double buffer"),
    ROW(k1_mmasync_bm32, k1_mmasync, "ldmatrix + mma.sync, cp.async double buffer"),
    ROW(k1_mmasync_bm64_fragdb, k1_mmasync, "bm64 + register fragment double-buffering"),
    TRACED(k2_tma_ws_s2, k2_tma_ws, "TMA + mbarrier ring, producer warp, mma.sync warps"),
    TRACED(k2_tma_ws_s3, k2_tma_ws, "TMA + mbarrier ring, producer warp, mma.sync warps"),
    TRACED(k2_tma_ws_s3_1blk, k2_tma_ws, "s3 with registers uncapped (one block per SM)"),
    TRACED(k2_tma_ws_bm64, k2_tma_ws, "TMA + mbarrier ring, producer warp, mma.sync warps"),
    LESSON(k3_wgmma_tile_m128_n192, k3_wgmma, 1, "wgmma, producer/consumer warpgroups, one CTA per host-list tile"),
    LESSON(k3_wgmma_coop_m128_n192, k3_wgmma, 2, "+ persistent grid, device-side schedule"),
    TRACED(k3_wgmma_coop_m128_n256, k3_wgmma, "step 2 at a wider tile"),
    LESSON(k3_wgmma_coop_m64_n192, k3_wgmma, 3, "+ adaptive rows: a 64-row tile split by columns over both consumers"),
    TRACED(k3_wgmma_coop_m64_n128, k3_wgmma, "step 3 at a narrower tile"),
    TRACED(k3_wgmma_coop_m64_n256, k3_wgmma, "step 3 at a wider tile"),
    LESSON(k3_wgmma_pingpong_m128_n192, k3_wgmma, 4, "ping-pong: each consumer warpgroup owns whole tiles in turn"),
    TRACED(k3_wgmma_pingpong_m64_n192, k3_wgmma, "step 4 with adaptive rows: a 64-row tile on its owner alone"),
    TRACED(k3_wgmma_pingpong_m128_n128, k3_wgmma, "step 4 at a narrower tile"),
    TRACED(k3_wgmma_pingpong_m64_n128, k3_wgmma, "step 4 with adaptive rows at a narrower tile"),
#ifdef GG_ABLATIONS
    ABLATION(k3_wgmma_coop_m64_n192_solo, k3_wgmma, "step 3 with the 64-row tile on one consumer"),
    ABLATION(k3_wgmma_coop_m64_n192_mcb, k3_wgmma, "step 3 in 2-CTA clusters, B multicast to a row-tile pair"),
    ABLATION(k3_wgmma_coop_m64_n256_mcb, k3_wgmma, "n256 in 2-CTA clusters, B multicast to a row-tile pair"),
    ABLATION(k3_wgmma_coop_m64_n192_mca, k3_wgmma, "step 3 in 2-CTA clusters, A multicast to a column-block pair"),
#endif
    ENTRY(k3_wgmma, k3_wgmma, "the entry point: picks one of steps 2-4's configurations per shape"),
    ROW(k3_tcgen05, k3_tcgen05, "tcgen05 in 2-CTA pairs, TMEM double buffer"),
    TRACED_OWN(k5_dgrad_pingpong_m128_n192, k5_backward, "dA = dC B_e^T on k3's pingpong_m128_n192, B read K-major"),
    TRACED_OWN(k5_dgrad_pingpong_m64_n192, k5_backward, "dA = dC B_e^T on k3's pingpong_m64_n192, B read K-major"),
    TRACED_OWN(k5_dgrad_coop_m128_n192, k5_backward, "dA = dC B_e^T on k3's coop_m128_n192, B read K-major"),
    TRACED_OWN(k5_dgrad_coop_m64_n192, k5_backward, "dA = dC B_e^T on k3's coop_m64_n192, B read K-major"),
    TRACED_OWN(k5_dgrad_coop_m128_n256, k5_backward,
        "dA = dC B_e^T on k3's coop_m128_n256 (step 2), B read K-major (imm-trans-b 0): the first dgrad"),
    TRACED_OWN(k5_dgrad_coop_m64_n256, k5_backward, "dA = dC B_e^T on k3's coop_m64_n256, B read K-major"),
    TRACED_OWN(k5_dgrad_pingpong_m128_n128, k5_backward, "dA = dC B_e^T on k3's pingpong_m128_n128, B read K-major"),
    TRACED_OWN(k5_dgrad_pingpong_m64_n128, k5_backward, "dA = dC B_e^T on k3's pingpong_m64_n128, B read K-major"),
    TRACED_OWN(k5_dgrad_coop_m64_n128, k5_backward, "dA = dC B_e^T on k3's coop_m64_n128, B read K-major"),
    TRACED_OWN(k5_dgrad_tail_m128_n192, k5_backward, "k5_dgrad_coop_m128_n192, the last wave's tiles split along n"),
    TRACED_OWN(k5_dgrad_tail_m128_n256, k5_backward, "k5_dgrad_coop_m128_n256, the last wave's tiles split along n"),
    ENTRY_OWN(k5_dgrad, k5_backward, "the dgrad entry point: k3's model picks the configuration for K = n, N = k"),
    TRACED_OWN(k5_wgrad, k5_backward,
        "backward, dB_e = A_e^T dC: tiles of dB_e, ragged reduction in 64-row stages, split experts, ticketed fix-up"),
    TRACED_OWN(k5_wgrad_pingpong, k5_backward, "k5_wgrad with ping-pong consumers: each owns whole items in turn"),
    TRACED_OWN(k5_wgrad_m256, k5_backward, "k5_wgrad on 256-row tiles, two accumulators per consumer: fewer L2 bytes per FLOP"),
    TRACED_OWN(k5_wgrad_pingpong_dyn, k5_backward, "k5_wgrad_pingpong with the dynamic deal: the next item from a counter"),
    TRACED_OWN(k5_wgrad_m256_dyn, k5_backward, "k5_wgrad_m256 with the dynamic deal: the next item from a counter"),
};
const int gg_kernel_count = (int)(sizeof gg_kernels / sizeof gg_kernels[0]);

/* What a user would otherwise call. The cuBLAS peers run in-process (peers.c); torch runs
 * from Python on the same case list and appends to the same CSV; its backward forms are rows
 * of their own, the pass each computes read by the script from the case list's kernel column. */
const GgPeer gg_peers[] = {
    {"cublas_loop", "cublasGemmEx per expert, replayed from a CUDA graph", NULL, GG_PASS_FORWARD},
    {"cublas_grouped", "cublasGemmGroupedBatchedEx, one group per non-empty expert", NULL, GG_PASS_FORWARD},
    {"torch_grouped_mm", "torch._grouped_mm (CUTLASS grouped GEMM in PyTorch)", "harness/peers/torch_grouped_mm.py",
     GG_PASS_FORWARD},
    {"torch_grouped_mm_dgrad", "torch._grouped_mm(dC, B^T view, offs): dA", "harness/peers/torch_grouped_mm.py",
     GG_PASS_DGRAD},
    {"torch_grouped_mm_wgrad", "torch._grouped_mm(A^T view, dC, offs), 2D x 2D: dB per expert",
     "harness/peers/torch_grouped_mm.py", GG_PASS_WGRAD},
};
const int gg_peer_count = (int)(sizeof gg_peers / sizeof gg_peers[0]);

const char *gg_impl_name(int i) {
    if (i < gg_kernel_count) return gg_kernels[i].name;
    i -= gg_kernel_count;
    return i < gg_lab_count ? gg_labs[i].name : gg_peers[i - gg_lab_count].name;
}

int gg_impl_find(const char *name, GgImpl *impl) {
    memset(impl, 0, sizeof *impl);
    for (int i = 0; i < gg_kernel_count + gg_lab_count; ++i)
        if (!strcmp(gg_impl_name(i), name)) {
            const GgKernel *k = i < gg_kernel_count ? &gg_kernels[i] : &gg_labs[i - gg_kernel_count];
            impl->name = k->name;
            impl->config = k->config;
            impl->stage = k->stage;
            impl->kernel = k;
            k->info(&impl->info); /* host-side constants: no GPU needed */
            return GG_EXIT_OK;
        }
    for (int i = 0; i < gg_peer_count; ++i)
        if (!strcmp(gg_peers[i].name, name)) {
            impl->name = gg_peers[i].name;
            impl->config = gg_peers[i].config;
            impl->stage = "peer";
            impl->peer = &gg_peers[i];
            impl->info.block_m = 1; /* a library's tiling is its own: no row padding assumed */
            impl->info.block_n = 8;
            impl->info.pass = gg_peers[i].pass;
            return GG_EXIT_OK;
        }
    gg_error_set("unknown kernel '%s' (see 'ggemm list')", name);
    return GG_EXIT_USAGE;
}

GgPass gg_impl_pass(const char *name) {
    GgImpl impl;
    if (gg_impl_find(name, &impl)) {
        gg_error_clear();
        return GG_PASS_FORWARD;
    }
    return impl.info.pass;
}

int gg_impl_resolve(GgImpl *impl, const GgShape *shape) {
    if (!impl->kernel || !impl->kernel->choose) return GG_EXIT_OK;
    GgImpl chosen;
    const char *name = impl->kernel->choose(shape, impl->chose, sizeof impl->chose);
    if (!name) { /* a GPU that cannot be asked: a failure of the run, like a CUDA error */
        gg_error_set("%s: %s", impl->name, impl->chose);
        return GG_EXIT_CHECK;
    }
    if (gg_impl_find(name, &chosen)) return GG_EXIT_USAGE;
    impl->kernel = chosen.kernel;
    impl->info = chosen.info;
    return GG_EXIT_OK;
}

const GgImpl *gg_impl_for(const GgImpl *impl, const GgProblem *p, GgImpl *copy) {
    const GgShape shape = {p->tokens, p->experts, p->k, p->n};
    *copy = *impl;
    gg_impl_resolve(copy, &shape);
    return copy;
}

int gg_unknown_kernel(const char *list, char separator, char *bad, size_t len) {
    const char seps[2] = {separator, '\0'};
    for (const char *p = list; p && *p;) {
        const size_t n = strcspn(p, seps);
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)(n < 95 ? n : 95), p);
        GgImpl impl;
        const size_t prefix = strlen(name) > 1 ? strlen(name) - 1 : 0; /* NAME*: every name it starts */
        int matched = 0;
        if (prefix > 0 && name[prefix] == '*') { /* some kernel starts with NAME */
            for (int i = 0; i < gg_kernel_count + gg_lab_count + gg_peer_count && !matched; ++i)
                matched = !strncmp(gg_impl_name(i), name, prefix);
            if (!matched) {
                snprintf(bad, len, "%s", name);
                return 1;
            }
        } else if (gg_impl_find(name, &impl)) {
            gg_error_clear();
            snprintf(bad, len, "%s", name);
            return 1;
        }
        p += n;
        if (*p) ++p;
        if (separator == ' ') p += strspn(p, " "); /* a case file's field: spaces line names up */
    }
    return 0;
}

int gg_check_kernel_names(const char *list) {
    char bad[96];
    if (!gg_unknown_kernel(list, ',', bad, sizeof bad)) return GG_EXIT_OK;
    gg_error_set("unknown kernel '%s' in --kernels (see 'ggemm list')", bad);
    return GG_EXIT_USAGE;
}

void gg_impl_arch(const GgImpl *impl, char *buf, size_t len) {
    if (!impl->kernel) snprintf(buf, len, "peer");
    else snprintf(buf, len, "%s", impl->kernel->archs);
}

int gg_impl_runs_here(const GgImpl *impl, int cc_major, int cc_minor, char *why, size_t len) {
    if (!impl->kernel) return 1;
    /* The binary decides: the loader finds code for this device (a cubin for it, or PTX it can
     * compile) or it does not. Arch-specific code (sm_90a, sm_100a, sm_103a) loads on exactly
     * that compute capability. */
    struct cudaFuncAttributes attr;
    const cudaError_t err = cudaFuncGetAttributes(&attr, impl->info.kernel);
    if (err == cudaSuccess) return 1;
    cudaGetLastError();
    char arch[64];
    gg_impl_arch(impl, arch, sizeof arch);
    snprintf(why, len, "%s has no code for this GPU (sm_%d%d): built for %s (%s)", impl->name, cc_major, cc_minor,
             arch, cudaGetErrorString(err));
    return 0;
}

const char *gg_impl_math(const GgImpl *impl) {
    if (!impl->kernel) return "peer";
    if (!strncmp(impl->stage, "k0", 2)) return "ffma";
    if (!strcmp(impl->stage, "k3_wgmma") || !strcmp(impl->stage, "k5_backward")) return "wgmma";
    if (!strcmp(impl->stage, "k3_tcgen05")) return "tcgen05";
    return "mma.sync";
}
