/* The MoE layer (k4_moe) in the harness (moe.c): buffers, inputs, the check, timing, graph
 * replay. Used by `ggemm moe` (cmd_moe.c) and the GPU tests. */
#ifndef GG_MOE_H
#define GG_MOE_H
#include <stddef.h>
#include <stdint.h>

#include "gg_harness.h"
#include "k4_moe/k4_moe.h"
#include "k5_backward/k5_moe_backward.h"

/* The fp64 CPU reference (moe.c) runs where routed rows x d x F x 3 (GEMM1's two halves and
 * GEMM2) stays within this many multiply-adds: about a second. */
#define GG_MOE_CPU_REF_MACS (1 << 29)

/* The layer's edge shapes (edge_shapes.c), for the GPU tests: small enough for the CPU reference. */
typedef struct GgMoeEdgeLayer {
    const char *what;
    GgMoeShape s;
} GgMoeEdgeLayer;
extern const GgMoeEdgeLayer gg_moe_edge_layers[];
extern const int gg_moe_edge_layer_count;

/* The reference's elementwise steps (moe_ref.cu) and the scaled input fill (fill.cu). */
cudaError_t gg_fill_uniform_scaled_bf16(uint16_t *p, size_t n, unsigned long long seed, float scale,
                                        cudaStream_t stream);
cudaError_t gg_moe_ref_gather(const uint16_t *x, const int *src_token, int rows, int d, uint16_t *xg, cudaStream_t st);
cudaError_t gg_moe_ref_swiglu(const float *u, int rows, int f, uint16_t *h, cudaStream_t st);
cudaError_t gg_moe_ref_combine(const float *y, const int *row_of, const float *w, int tokens, int topk, int d,
                               float *out, cudaStream_t st);
/* One routed row's GEMM1 and SwiGLU in fp64 on the CPU, for the fp64 references of the forward
 * (moe.c) and the backward (moe_backward.c): u [2F] = x W1_e from bf16 x [d] and W1_e [d x 2F],
 * h [F] = bf16(silu(gate) up), rounded to bf16 as the layer stores H. */
void gg_moe_row_forward64(const uint16_t *x, const uint16_t *w1_e, int d, int f, double *u, double *h);
/* The router's logits X Wr in fp64 [T x E] and sum |x w| of each (gg_moe_bound.h). */
cudaError_t gg_moe_ref_logits(const uint16_t *x, const uint16_t *wr, int tokens, int experts, int d, double *exact,
                              double *abs_dot, cudaStream_t st);

enum { GG_MOE_BUFS = 8 }; /* X, Wr, W1, W1 packed, W2, out, workspace, Wr padded */

typedef struct GgMoeRun {
    GgMoeLayer layer;       /* device pointers, shape, stream (gg_stream) */
    void *buf[GG_MOE_BUFS];
} GgMoeRun;

typedef struct GgMoeCheck {
    int pass;
    int routing_ok, permute_ok;
    long bad;               /* output elements outside tolerance (or NaN: unwritten) */
    double max_abs_err, rel_err;
    int cpu_ref;            /* 1: also compared with the fp64 CPU reference */
    char why[256];          /* the first thing that was wrong */
} GgMoeCheck;

/* Buffers for both paths of shape s. 0 or GG_EXIT_CHECK (gg_error()). gg_moe_open_unfused: the
 * unfused path's alone, without the packed W1 (the size of W1, which the fused path alone reads):
 * the backward's runs (k4_moe_forward(fused = 1) on it is cudaErrorInvalidValue). */
int gg_moe_open(GgMoeRun *r, const GgMoeShape *s, int num_sms);
int gg_moe_open_unfused(GgMoeRun *r, const GgMoeShape *s, int num_sms);
void gg_moe_close(GgMoeRun *r);
/* Fresh random X and weights from seed (scaled so activations stay near 1), then
 * k4_moe_setup; gg_moe_fill_x: a new X only (new routing). */
int gg_moe_fill(GgMoeRun *r, unsigned long long seed);
int gg_moe_fill_x(GgMoeRun *r, unsigned long long seed);
/* out = NaN, so that an unwritten element fails the check. */
int gg_moe_poison(GgMoeRun *r);
/* After one forward: routing, permutation and output (moe.c's header says how); cpu_ref adds
 * the fp64 CPU reference for small shapes. Returns 0 (chk says pass or not) or GG_EXIT_CHECK. */
int gg_moe_check(GgMoeRun *r, int cpu_ref, GgMoeCheck *chk);
/* The route and permute steps alone, any E up to K4_ROUTE_MAX_EXPERTS (k4_moe_can_route): X
 * and Wr from seed, their buffers poisoned, the two steps, then parts 1 and 2 of the check
 * (fp64 logits on the CPU where cpu_ref and small). GG_EXIT_USAGE for a shape it cannot route. */
int gg_moe_routing_check(const GgMoeShape *s, int num_sms, unsigned long long seed, int cpu_ref, GgMoeCheck *chk);
/* The layer timed with gg_time's protocol, then each step's median and p10/p90 (events between
 * steps); steps_power: the board's power state over the second series (tm->telemetry: the first's). */
int gg_moe_time(GgMoeRun *r, int fused, int warmup, int reps, GgTiming *tm, GgTiming step[GG_MOE_STEPS],
                GgTelemetry *steps_power);
/* The per-step breakdown of either direction: reps runs of run(ctx, marks) (steps + 1 events, at
 * most 16 steps), each after the L2 flush; step[s]: the median and p10/p90 of step s (its
 * telemetry left empty); power: the board's power state over the series. */
int gg_moe_time_steps(cudaError_t (*run)(void *ctx, cudaEvent_t *marks), void *ctx, const char *what, int steps,
                      int tokens, int reps, GgTiming *step, GgTelemetry *power);
/* 64-bit FNV-1a over `bytes` bytes: moe.csv's routing_digest hashes the chosen experts [T x topk]
 * (int32) with it, as harness/peers/peer_common.py's fnv1a64 does the peers'. */
uint64_t gg_fnv1a64(const void *data, size_t bytes);
/* Capture one forward in a CUDA graph, replay it and check; new X (seed2), replay, check. */
int gg_moe_graph_replay_check(GgMoeRun *r, int fused, unsigned long long seed2, GgMoeCheck *first,
                              GgMoeCheck *second);

/* ---- The layer's backward (k5_moe_backward, harness/moe_backward.c) ---- */

/* The backward's reference steps (moe_ref.cu). */
cudaError_t gg_moe_ref_combine_backward(const uint16_t *dout, const float *y, const int *row_of, const float *w,
                                        int tokens, int topk, int d, float *dw, uint16_t *dy, cudaStream_t st);
cudaError_t gg_moe_ref_swiglu_backward(const float *u, const float *dh, int rows, int f, uint16_t *du,
                                       cudaStream_t st);
cudaError_t gg_moe_ref_router_backward(const float *logits, const int *expert, const float *w, const float *dw,
                                       int tokens, int experts, int topk, int renorm, uint16_t *dlogits,
                                       cudaStream_t st);
cudaError_t gg_moe_ref_gather_sum(const float *dxg, const int *row_of, const float *dxr, int tokens, int topk, int d,
                                  float *dx, cudaStream_t st);
/* sq[i] = x[i]^2 in fp32 (bf16 x): the terms' sizes of a weight gradient's bound. */
cudaError_t gg_moe_ref_square(const uint16_t *x, size_t n, float *sq, cudaStream_t st);

/* The fp64 CPU reference of the backward runs up to this many multiply-adds (R d F x 9: the
 * forward's three and the backward's six products). */
#define GG_MOE_BWD_CPU_REF_MACS (1 << 29)

enum { GG_MOE_GRADS = 4 }; /* dX, dWr, dW1, dW2: the order of GgMoeBwdCheck's fields */
extern const char *const gg_moe_grad_names[GG_MOE_GRADS];

enum { GG_MOE_BWD_BUFS = 6 }; /* dOut, dX, dWr, dW1, dW2, workspace */
typedef struct GgMoeBwdRun {
    K5MoeBackward b;         /* .layer points at the forward run's layer */
    void *buf[GG_MOE_BWD_BUFS];
} GgMoeBwdRun;

typedef struct GgMoeBwdCheck {
    int pass;
    int forward_ok;          /* the forward (gg_moe_check) passed first */
    long bad[GG_MOE_GRADS];  /* elements outside tolerance (or NaN: unwritten), per gradient */
    double margin[GG_MOE_GRADS][2]; /* worst |g - ref| / bound, [0] the cuBLAS fp32 reference, [1] the fp64 one (> 1: outside) */
    double max_abs_err, rel_err; /* the worst gradient's (rel_err: max abs err / max |ref|) */
    int cpu_ref;             /* 1: also compared with the fp64 CPU reference */
    char why[256];
} GgMoeBwdCheck;

/* The backward's buffers beside r (which must stay open). 0, GG_EXIT_USAGE (one line: a shape
 * k5_moe_backward_can_implement refuses) or GG_EXIT_CHECK. */
int gg_moe_bwd_open(GgMoeBwdRun *b, GgMoeRun *r);
void gg_moe_bwd_close(GgMoeBwdRun *b);
/* A fresh random dOut (uniform [-1, 1]); the gradients and the backward's scratch (dw, dY, dH,
 * dU, dlogits, dX_r) = NaN, so that a step that leaves any of it unwritten fails the check. */
int gg_moe_bwd_fill(GgMoeBwdRun *b, unsigned long long seed);
int gg_moe_bwd_poison(GgMoeBwdRun *b);
/* After an unfused forward and a backward: the forward's check, then every gradient against
 * the fp32 reference (cuBLAS per expert) and, where cpu_ref and small, the fp64 CPU one. */
int gg_moe_bwd_check(GgMoeRun *r, GgMoeBwdRun *b, int cpu_ref, GgMoeBwdCheck *chk);
/* "dX a/b dWr .. dW1 .. dW2 ..": each gradient's worst error / bound against the fp32 reference,
 * then the fp64 one (or "-" where it did not run), into buf. */
const char *gg_moe_bwd_margins(const GgMoeBwdCheck *chk, char *buf, size_t len);
/* One block of a gradient (n bf16 elements, host) against its fp32 reference and, where not NULL,
 * its fp64 one, with the check's bound (harness/moe_backward.c's header; atol: each reference's
 * rms term; terms: the elements' sums of squared terms, or NULL): the elements outside either
 * bound (NaN included), the first of them (n if none) and the first reference (0 fp32, 1 fp64)
 * whose bound it is outside, the worst error / bound per reference,
 * max |ref| and the largest error. Large blocks are split over up to `threads` threads (0: the
 * default); the result does not depend on the split. */
typedef struct GgGradCompare {
    long bad;
    size_t first_bad;
    int first_ref;
    double margin[2], max_ref, max_err;
} GgGradCompare;
void gg_moe_grad_compare(const uint16_t *got, const float *ref32, const double *ref64, const float *terms, size_t n,
                         const double atol[2], int threads, GgGradCompare *out);
/* The backward timed with gg_time's protocol (the forward's state in place), then per step;
 * step[s] is the backward of forward step s (k5_moe_bwd_step_of), moe.csv's columns. */
int gg_moe_bwd_time(GgMoeBwdRun *b, int warmup, int reps, GgTiming *tm, GgTiming step[GG_MOE_STEPS],
                    GgTelemetry *steps_power);
#endif
