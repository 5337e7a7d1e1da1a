/* k5_moe_backward: the backward of k4_moe's layer, on k5's two grouped GEMMs.
 *
 * Given dOut [T x d] and the state an unfused forward leaves (routing, Xg, U = [G | U], H, Y):
 *
 *   combine   dw[t, s] = <dOut[t], Y[r]>, dY[r] = w[t, s] dOut[t]        r = row_of(t, s)
 *   GEMM2     dH = dY W2_e^T [R x F] (k5_dgrad), dW2_e = H_e^T dY_e [F x d] (k5_wgrad_m256_dyn)
 *   GEMM1     dG = dH U silu'(G), dU = dH silu(G): dU_cat [R x 2F]; dXg = dU_cat W1_e^T [R x d]
 *             (k5_dgrad), dW1_e = Xg_e^T dU_cat_e [d x 2F] (k5_wgrad_m256_dyn)
 *   route     dlogits [T x E] from dw through the top-k weights (k5_router_dlogit), then
 *             dWr = X^T dlogits [d x E] (k5_wgrad_m256_dyn, one expert) and dX_r = dlogits Wr^T (k5_dgrad)
 *   permute   dX[t] = dX_r[t] + sum_s dXg[row_of(t, s)]
 *
 * The steps run in that order (route needs only dw, permute needs dX_r); k5_moe_bwd_step_of
 * says which forward step's column of moe.csv each one's time goes to. Everything after
 * k5_moe_backward_setup is enqueued on the layer's stream without a host synchronisation.
 * k5_backward/README.md ("The layer's backward") derives the router's gradient. */
#ifndef K5_MOE_BACKWARD_H
#define K5_MOE_BACKWARD_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "gg_hd.h"
#include "gg_kernel.h" /* GgKernelInfo: the layer's wgrad configuration */
#include "k4_moe/k4_moe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backward's steps in the order they run; marks[i] is recorded before step i. */
typedef enum { K5_MOE_BWD_COMBINE, K5_MOE_BWD_GEMM2, K5_MOE_BWD_GEMM1, K5_MOE_BWD_ROUTE, K5_MOE_BWD_PERMUTE,
               K5_MOE_BWD_STEPS } K5MoeBwdStep;
extern const GgMoeStep k5_moe_bwd_step_of[K5_MOE_BWD_STEPS]; /* the forward step it is the backward of */

typedef struct K5MoeGrads {
    uint16_t *dx;   /* [T x d] */
    uint16_t *dwr;  /* [d x E] */
    uint16_t *dw1;  /* [E x d x 2F], gate columns first as W1 */
    uint16_t *dw2;  /* [E x F x d] */
} K5MoeGrads;

/* The backward's three wgrad launches, in the order they run. Each has its own slice of wgrad
 * scratch (the deal's counters, tickets, then fp32 partials, gg_wgrad.h): the ticket area's size differs between
 * them, so in one shared slice a later launch's tickets could lie on an earlier launch's partial
 * floats, which nothing clears. */
typedef enum { K5_MOE_WGRAD_DW2, K5_MOE_WGRAD_DW1, K5_MOE_WGRAD_DWR, K5_MOE_WGRADS } K5MoeWgrad;

/* Scratch of one backward, carved from one allocation by k5_moe_backward_workspace. */
typedef struct K5MoeBackwardWorkspace {
    float *dw;            /* [T x topk] dLoss / d(routing weight) */
    uint16_t *dy;         /* [R x d] dY; then dXg (dY is dead once dH and dW2 are written) */
    uint16_t *dh;         /* [R x F] */
    uint16_t *du;         /* [R x 2F] dG | dU */
    uint16_t *dlogits;    /* [T x k4_router_n(E)] bf16 (the router GEMMs' operand); the router kernel
                             writes every column each call, the pad columns 0 */
    uint16_t *dx_router;  /* [T x d] dlogits Wr^T */
    uint16_t *dwr_padded; /* [d x k4_router_n(E)] */
    int *router_offsets;  /* [2] = {0, T}: the router GEMMs' one expert (the dlogits kernel writes it) */
    void *wgrad[K5_MOE_WGRADS]; /* each launch's wgrad workspace; its counters and tickets
                                   zeroed once by setup, left zero by each launch */
    void *dgrad;                /* the dgrad launches' (k5_dgrad_workspace_bytes), one after another on
                                   the stream: zeroed once by setup, left zero by each launch */
} K5MoeBackwardWorkspace;

typedef struct K5MoeBackward {
    const GgMoeLayer *layer;  /* after an unfused forward (its ws.xg, ws.u, ws.h, ws.y, routing) */
    const uint16_t *dout;     /* [T x d] */
    K5MoeGrads grads;
    K5MoeBackwardWorkspace ws;
} K5MoeBackward;

/* The registry row of the layer's wgrad configuration (k5_moe_backward.c says which and why):
 * its tile sizes the work lists and so the workspace. */
cudaError_t k5_moe_wgrad_info(GgKernelInfo *info);
/* 1 if the backward can run shape s (k4_moe_can_implement's, and k5_wgrad's 1..1024 experts);
 * else 0 and one line in why. */
int k5_moe_backward_can_implement(const GgMoeShape *s, char *why, size_t len);
/* Workspace bytes for shape s on num_sms SMs (the launches' GgLaunch.num_sms: k5_wgrad's split
 * rule and so its scratch depend on it), and the carving of base. No GPU needed. num_sms <= 0
 * (which a launch would read as "this GPU's count", unknown here) is cudaErrorInvalidValue, as is
 * a layer's num_sms <= 0 in setup and in the backward. */
cudaError_t k5_moe_backward_workspace_bytes(const GgMoeShape *s, int num_sms, size_t *bytes);
cudaError_t k5_moe_backward_workspace(void *base, const GgMoeShape *s, int num_sms, K5MoeBackwardWorkspace *ws);
/* The steps' scratch in ws, with its bytes: dw, dY, dH, dU, dlogits, dX_router, each written in
 * full by one step before the next reads it (a check poisons them to see that). */
enum { K5_MOE_STEP_SCRATCH = 6 };
cudaError_t k5_moe_backward_step_scratch(const GgMoeShape *s, int num_sms, const K5MoeBackwardWorkspace *ws,
                                         void *ptr[K5_MOE_STEP_SCRATCH], size_t bytes[K5_MOE_STEP_SCRATCH]);
/* Once per workspace: zero each wgrad launch's tickets (they stay zero: the last split of a
 * tile resets its ticket, so a graph of the backward replays). */
cudaError_t k5_moe_backward_setup(const K5MoeBackward *b);
/* One backward (after k4_moe_forward(layer, fused = 0)). marks: NULL, or K5_MOE_BWD_STEPS + 1
 * events recorded before each step and after the last. */
cudaError_t k5_moe_backward(const K5MoeBackward *b, cudaEvent_t *marks);

/* FLOPs of the backward's GEMMs (the router's two, dgrad and wgrad of GEMM2 and of GEMM1) and
 * their roofline floor in microseconds, as k4_moe_floor_us: per GEMM max(FLOPs / gemm_tflops,
 * compulsory bytes / bw), summed. */
double k5_moe_backward_gemm_flops(const GgMoeShape *s);
double k5_moe_backward_floor_us(const GgMoeShape *s, double gemm_tflops, double bw_gbps);

/* The small kernels' launchers (k5_moe_backward_steps.cu). */
cudaError_t k5_moe_combine_backward(const uint16_t *dout, const uint16_t *y, const int *row_of,
                                    const float *topk_weight, int tokens, int topk, int d, float *dw, uint16_t *dy,
                                    cudaStream_t st);
cudaError_t k5_moe_swiglu_backward(const uint16_t *u, const uint16_t *dh, int rows, int f, uint16_t *du,
                                   cudaStream_t st);
cudaError_t k5_moe_router_backward(const float *logits, const int *topk_expert, const float *topk_weight,
                                   const float *dw, int tokens, int experts, int topk, int renorm,
                                   uint16_t *dlogits, int *router_offsets, cudaStream_t st);
cudaError_t k5_moe_gather_sum(const uint16_t *dxg, const int *row_of, const uint16_t *dx_router, int tokens,
                              int topk, int d, uint16_t *dx, cudaStream_t st);

/* ---- The elementwise derivatives, shared by the kernels, the fp64 CPU reference and the CPU
 * tests (tests/suite_moe_backward.c checks them against finite differences). ---- */

/* SwiGLU h = silu(g) u, silu(g) = g sigmoid(g):
 *   dh/du = silu(g),   dh/dg = u silu'(g),   silu'(g) = sigmoid(g) (1 + g (1 - sigmoid(g))). */
GG_HD float k5_sigmoid(float g) { return 1.0f / (1.0f + expf(-g)); }
GG_HD void k5_swiglu_grad(float g, float u, float dh, float *dg, float *du) {
    const float s = k5_sigmoid(g);
    *du = dh * g * s;
    *dg = dh * u * s * (1.0f + g * (1.0f - s));
}

/* The router. p = softmax(z) over all E logits; the chosen experts e_s, s < k, are fixed (top-k
 * is piecewise constant in z); weights w_s = p_{e_s} (raw) or p_{e_s} / P, P = sum_s p_{e_s}
 * (renormalised: the softmax of the chosen logits alone, so the others drop out). Given
 * dw_s = dLoss / dw_s and c = sum_s dw_s w_s:
 *   raw:     dz_j = p_j (g_j - c),  g_j = dw_s if j = e_s, else 0 (every logit: p_j is in P's
 *            denominator, so an expert not chosen still gets -p_j c)
 *   renorm:  dz_j = w_s (dw_s - c) for j = e_s; 0 for an expert not chosen
 * In both, a chosen expert's gradient is w_s (dw_s - c) with the weight the layer used:
 * k5_router_dlogit(w_s, dw_s, c); an expert not chosen: k5_router_dlogit(p_j, 0, c) raw, 0
 * renormalised. */
GG_HD float k5_router_dlogit(float q, float g, float c) { return q * (g - c); }
/* A logit as the softmax reads it: NaN as -inf (p = 0), the forward's convention (k4_moe_steps.cu's
 * route_kernel never chooses it and gives it no weight), so that one NaN logit does not make the
 * token's every dlogit NaN. */
GG_HD float k5_router_logit(float z) { return isnan(z) ? -INFINITY : z; }

/* One token's dz [E] in double from its fp32 logits z [E], chosen experts, weights and dw (the
 * fp64 CPU reference and the tests; the kernel is the same two passes, a warp per token). */
void k5_moe_router_grad_token(const float *z, int experts, const int *chosen, const float *w, const float *dw,
                              int topk, int renorm, double *dz);

#ifdef __cplusplus
}
#endif
#endif
