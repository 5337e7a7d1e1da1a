// k5_backward, dgrad — dA = dC_e · B_e^T per expert (sm_90a): k5_dgrad_<config>, one for each
// configuration k3_wgmma's entry point chooses among; k5_dgrad (k5_dgrad_entry.c) picks one.
//
// What changed since k3: the operands, nothing else. The product is ragged-M again: expert e's
// m_e rows of dC [tokens x n] times B_e^T, into dA [tokens x k]. So k3's kernels compute it as
// they are: steps 2-4 (step2_persistent.cu .. step4_pingpong.cu, compiled again below), with n
// and k trading places: the reduction runs over n, the output is k wide, and the output tiles,
// their device-side schedule, the ring, the roles and the epilogue are the forward's. Only B
// changes shape. B is stored [experts x k x n] with n contiguous, and the GEMM's B operand is
// B_e^T [n x k]: element (r, w) = B_e[w][r] is contiguous along r, the reduction index, so this
// B is K-major, where the forward's was N-major. Nothing is transposed in memory or in shared
// memory: the same TMA map as the forward's B (gg_tmap_b, boxes of 64 n x 64 k of one expert)
// is asked for the box at (reduction block, output columns) instead of (output columns,
// reduction block), and each box lands as 64 rows of 128 B, one row per output column, which is
// A's layout; the consumers read it with A's descriptor and imm-trans-b 0. Those three changes
// are one policy class, k5::TransposedBLoads (k5_backward.cuh), the template argument of k3's
// kernels just before TRACE (the forward's is k3::OwnLoads).
//
// Tiles, threads, shared memory: the k3 configuration's (k3_wgmma/README.md), BLOCK_N columns of
// dA (that is, of k) per tile, 64 of n per stage. Which configuration is fastest for dgrad's
// shape is the forward's question about the GEMM (tokens, experts, K = n, N = k), and k5_dgrad
// asks k3's cost model exactly that (k5_dgrad_entry.c).
// Preconditions  k % 8 == 0, n % 8 == 0 (16-byte TMA strides and stores), both > 0; a tail of n
//          past the last whole 64-block reads zeros (both maps clip at n); 1..4096 experts (the
//          schedule's index). Pointers 16-byte aligned (checked at launch).
// Run it   build/bin/ggemm run --kernel k5_dgrad --tokens 16384 --experts 64 --k 1024 --n 2688 --skew 1.2
//          (or --kernel k5_dgrad_pingpong_m128_n192, ... : `ggemm list`)
// Next     k5_wgrad.cu: the other gradient, whose reduction is the ragged dimension.
#include <stdio.h>

#include "k5_backward/k5_backward.cuh"

// k3's step kernels, without the forward's registrations (their files' K3_KERNELS_ONLY guard).
#define K3_KERNELS_ONLY
#include "k3_wgmma/step2_persistent.cu"
#include "k3_wgmma/step3_adaptive.cu"
#include "k3_wgmma/step4_pingpong.cu"

extern "C" int k5_dgrad_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k <= 0 || s->k % 8 != 0 || s->n <= 0 || s->n % 8 != 0) {
        snprintf(why, len, "k5_dgrad needs k and n multiples of 8, > 0 (k = %d, n = %d)", s->k, s->n);
        return 0;
    }
    if (s->experts < 1 || s->experts > k3::MAX_EXPERTS) {
        snprintf(why, len, "k5_dgrad handles 1..%d experts (experts = %d)", k3::MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

// One dgrad configuration NAME: k3's KERNEL<TARGS..., TRACE>, TARGS ending in the loads policy
// k5::TransposedBLoads (B read K-major); its traced twin, its info (the pass: dgrad) and its
// preconditions (every configuration's are the same).
#define K5_DGRAD(NAME, KERNEL, SHAPE, ...)                                                   \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                \
        return k5::launch_dgrad<false>(p, KERNEL<__VA_ARGS__, false>, SHAPE, {});            \
    }                                                                                        \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {  \
        return k5::launch_dgrad<true>(p, KERNEL<__VA_ARGS__, true>, SHAPE, *t);              \
    }                                                                                        \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                 \
        k3::info_of(info, (const void *)KERNEL<__VA_ARGS__, false>, SHAPE);                  \
        info->pass = GG_PASS_DGRAD;                                                          \
        return cudaSuccess;                                                                  \
    }                                                                                        \
    extern "C" int NAME##_can_implement(const GgShape *s, char *why, size_t len) {           \
        return k5_dgrad_can_implement(s, why, len);                                          \
    }
// The shapes of k3's registrations (step2..4's COOP_M128, COOP_M64, PINGPONG), in
// k3_wgmma_entry.c's order.
#define DGRAD_M128(NAME, BLOCK_N) \
    K5_DGRAD(NAME, k3::persistent_kernel, (k3::Shape{BLOCK_N, false, false, false}), BLOCK_N, k5::TransposedBLoads)
#define DGRAD_M64(NAME, BLOCK_N) \
    K5_DGRAD(NAME, k3::adaptive_kernel, (k3::Shape{BLOCK_N, true, false, false}), BLOCK_N, k5::TransposedBLoads)
#define DGRAD_PINGPONG(NAME, BLOCK_N, ADAPTIVE)                                                       \
    K5_DGRAD(NAME, k3::pingpong_kernel, (k3::Shape{BLOCK_N, ADAPTIVE, false, true}), BLOCK_N, ADAPTIVE, \
             k5::TransposedBLoads)
DGRAD_PINGPONG(k5_dgrad_pingpong_m128_n192, 192, false)
DGRAD_PINGPONG(k5_dgrad_pingpong_m64_n192, 192, true)
DGRAD_M128(k5_dgrad_coop_m128_n192, 192)
DGRAD_M64(k5_dgrad_coop_m64_n192, 192)
DGRAD_M128(k5_dgrad_coop_m128_n256, 256)
DGRAD_M64(k5_dgrad_coop_m64_n256, 256)
DGRAD_PINGPONG(k5_dgrad_pingpong_m128_n128, 128, false)
DGRAD_PINGPONG(k5_dgrad_pingpong_m64_n128, 128, true)
DGRAD_M64(k5_dgrad_coop_m64_n128, 128)
