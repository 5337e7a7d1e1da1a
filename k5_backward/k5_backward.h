/* k5_backward: the training half of the grouped GEMM (sm_90a), on k3_wgmma's machinery.
 *   k5_dgrad  dA = dC_e B_e^T: the entry point (k5_dgrad_entry.c), which runs the configuration
 *             k3_wgmma's cost model picks for dgrad's GEMM (K = n, N = k)
 *   k5_dgrad_<config>  k3's configuration <config> (coop_m128_n256, pingpong_m128_n192, ...)
 *             with B read transposed (k5_dgrad.cu): ragged M again
 *   k5_wgrad  dB_e = A_e^T dC_e     (k5_wgrad.cu): the reduction runs over the ragged m_e rows
 *   k5_wgrad_pingpong  the same with ping-pong consumers (k5_wgrad_pingpong.cu): each owns whole
 *             items in turn, so one stores while the other computes
 *   k5_wgrad_m256  k5_wgrad on 256-row tiles (k5_wgrad.cu, a twin): fewer L2 bytes per FLOP
 *   k5_wgrad_pingpong_dyn, k5_wgrad_m256_dyn  the two twins with the dynamic deal (k5_wgrad.cuh):
 *             each CTA's next item from a counter, not the round robin
 * What a, b and c of GgLaunch hold in each pass: GgPass (common/gg_kernel.h). Both have a
 * traced twin (NAME_trace_launch, `ggemm trace`); wgrad's events are its work items. */
#ifndef K5_BACKWARD_H
#define K5_BACKWARD_H
#include "gg_kernel.h"

/* k5_wgrad keeps a per-expert table in shared memory beside k3's ring: at most this many. */
#define K5_WGRAD_MAX_EXPERTS 1024
/* k5_wgrad's output tile, rows of k x columns of n (k3's BLOCK_M x a Ring<192>), which
 * `ggemm tiles` builds the work list with (k5_wgrad.cu asserts they are the kernel's). */
#define K5_WGRAD_TILE_M 128
#ifndef K5_WGRAD_TILE_N /* an ablation build sets 256 (-DK5_WGRAD_TILE_N=256: k5_backward/TRIALS.md) */
#define K5_WGRAD_TILE_N 192
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* dgrad: one per configuration of k3_wgmma's entry point, and the entry point. */
#define K5_DECLARE_DGRAD(NAME) \
    GG_DECLARE_TRACED_CONFIG(NAME) \
    int NAME##_can_implement(const GgShape *s, char *why, size_t len);
K5_DECLARE_DGRAD(k5_dgrad_pingpong_m128_n192)
K5_DECLARE_DGRAD(k5_dgrad_pingpong_m64_n192)
K5_DECLARE_DGRAD(k5_dgrad_coop_m128_n192)
K5_DECLARE_DGRAD(k5_dgrad_coop_m64_n192)
K5_DECLARE_DGRAD(k5_dgrad_coop_m128_n256)
K5_DECLARE_DGRAD(k5_dgrad_coop_m64_n256)
K5_DECLARE_DGRAD(k5_dgrad_pingpong_m128_n128)
K5_DECLARE_DGRAD(k5_dgrad_pingpong_m64_n128)
K5_DECLARE_DGRAD(k5_dgrad_coop_m64_n128)
/* k5_dgrad_coop_m128_<n> with the last wave's tiles split along the reduction (k5_dgrad_tail.cu) */
K5_DECLARE_DGRAD(k5_dgrad_tail_m128_n192)
K5_DECLARE_DGRAD(k5_dgrad_tail_m128_n256)
#undef K5_DECLARE_DGRAD
GG_DECLARE_TRACED_CONFIG(k5_dgrad)
/* The configuration k5_dgrad runs for shape s (the forward's k and n), on the current GPU (as
 * k3_wgmma_choose), and the same on the GPU given (as k3_wgmma_choose_on); why: that
 * configuration's name, then k3's pick and reasons for dgrad's GEMM. */
const char *k5_dgrad_choose(const GgShape *s, char *why, size_t len);
const char *k5_dgrad_choose_on(const GgShape *s, const GgGpu *gpu, char *why, size_t len);
/* The scratch a k5_dgrad launch of l's sizes may need (its split-tail kernels' tickets and fp32
 * partials; GgLaunch.workspace), zeroed before its first launch and left zeroed by each. */
size_t k5_dgrad_workspace_bytes(const GgLaunch *l);
GG_DECLARE_TRACED_CONFIG(k5_wgrad)
GG_DECLARE_TRACED_CONFIG(k5_wgrad_pingpong)
GG_DECLARE_TRACED_CONFIG(k5_wgrad_m256)
GG_DECLARE_TRACED_CONFIG(k5_wgrad_pingpong_dyn)
GG_DECLARE_TRACED_CONFIG(k5_wgrad_m256_dyn)
int k5_dgrad_can_implement(const GgShape *s, char *why, size_t len);
int k5_wgrad_can_implement(const GgShape *s, char *why, size_t len);
int k5_wgrad_pingpong_can_implement(const GgShape *s, char *why, size_t len);
int k5_wgrad_m256_can_implement(const GgShape *s, char *why, size_t len);
int k5_wgrad_pingpong_dyn_can_implement(const GgShape *s, char *why, size_t len);
int k5_wgrad_m256_dyn_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
