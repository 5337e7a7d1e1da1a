/* The layer's backward (k5_moe_backward) in the harness: buffers, dOut, the check, timing.
 *
 * The check, after an unfused forward and one backward on a fresh random dOut, gradients
 * poisoned with NaN first:
 *  0. The forward's own check (harness/moe.c: routing, permutation, output) passes first: the
 *     backward is the derivative at the layer's routing, so the reference takes that routing
 *     (checked) and recomputes everything else from X, the weights and dOut.
 *  1. The reference in fp32 on the GPU, cuBLAS per expert: U = Xg W1 (fp32), H = bf16(SwiGLU),
 *     Y = H W2 (fp32); dw = <dOut, Y>, dY = bf16(w dOut); dH = dY W2^T; dW2 = H^T dY;
 *     dU = bf16(SwiGLU'(U) dH); dXg = dU W1^T; dW1 = Xg^T dU; dlogits = bf16(the router's
 *     derivative, moe_ref.cu, written out per expert independently of the kernel's two passes);
 *     dWr = X^T dlogits; dX = dlogits Wr^T + sum_s dXg. Every tensor the layer stores in bf16
 *     as a GEMM operand is rounded here too (cuBLAS takes bf16 operands, as the layer's GEMMs).
 *     dW1 and dW2 go expert by expert through one fp32 [d x 2F] and one [F x d] on the device
 *     and one expert's block on the host, in two passes (the sums of squares for the rms, then
 *     the comparison; each expert's GEMM runs in both, and in the second a third GEMM of the
 *     squared operands for the bound's own term, 2. below, in U's and Y's fp32 scratch): the
 *     whole of them in fp32 would be 68 GB for kimi-k2. Small layers also against the same in
 *     fp64 on the CPU.
 *  2. Tolerance, per gradient, the forward's |g - ref| <= 2^-4 rms(ref) + 2^-7 |ref| (and for dW1
 *     and dW2 a third term, below), by the forward's argument one level down, the rms of dW1
 *     and dW2 taken over the blocks of the experts that have rows. The second term covers the gradient's own bf16 store. The first
 *     covers the bf16 operands that may round to neighbouring values on the two sides: H (as in
 *     the forward) for dW2; dU for dXg, dW1 and dX, from a dH and a U the layer holds in bf16
 *     (2^-9 relative each) against the reference's fp32 ones, and silu' at a G rounded the same
 *     way: each element of dU errs by about 2^-8 of its size, as H does in the forward, so a sum
 *     over 2F or m_e such terms of random sign errs by about 2^-8 of its rms. A gradient has up
 *     to 1.1e10 elements (kimi-k2's dW1, 384 x 7168 x 4096): the largest of them lies about 6.5
 *     standard deviations out, 2^-5.3 rms, 2.5 times inside 2^-4. That holds for dX and dWr
 *     (their sums run over 2F and T terms), not for dW1 and dW2, whose sums run over an expert's
 *     rows: on small 256-expert layers the worst error reached 2^-4 rms on every seed tried and
 *     passed it on several, in experts of a few rows (k5_backward/TRIALS.md and its logs; the
 *     fp64 reference sees the same errors as the fp32 one). A sum of
 *     a few terms does not average its roundings, and its largest term can be many times the
 *     rms: du and h are products of Gaussian-like factors, heavy-tailed.
 *     So dW1 and dW2 get a third term, each element's own: 2^-4 sqrt(sum_r t_r^2), the root sum
 *     of squares of its m_e terms t_r = x_r du_r (dW1) or h_r dy_r (dW2), an fp32 GEMM of the
 *     reference's squared operands. A term's other factor (x or dy) is the same on both sides,
 *     so a term errs by what du or h does: one bf16 step at most (2^-7 of it) after a difference
 *     of the values rounded of about 2^-8, under 2^-6 |t_r| in all; a sum of up to 16 terms errs
 *     by at most 2^-6 sum |t_r| <= 2^-6 sqrt(16) rss = 2^-4 rss, whatever the signs, and a
 *     longer one, of random signs, by about 2^-8 rss (6.5 deviations: 2^-5.3). The terms add
 *     (not the larger of them): the two cover errors of different sources, which add too. The rms
 *     term stays for the elements whose terms are small beside their error: dG = dh u silu'(g)
 *     where silu' crosses zero (g near -1.28), whose error follows dh u, not dG.
 *     Why the experts with rows only in the rms: an empty expert's block is zeros in both, which
 *     would only dilute it (a layer with one short expert among 1024 would have 1/32 of its rms).
 *     dWr and dX's router part: dw is a dot product with Y, which the layer holds in bf16 (2^-9)
 *     and within the forward's tolerance of the reference's: dlogits err by about 2^-8 of their
 *     size. `ggemm moe --backward` prints each gradient's worst error over its bound against
 *     each reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include <cublas_v2.h>

#include "gg_harness.h"
#include "gg_moe.h"
#include "k4_moe/k4_host.h"

const char *const gg_moe_grad_names[GG_MOE_GRADS] = {"dX", "dWr", "dW1", "dW2"};

/* Gradient `which` is checked in blocks: dX and dWr whole (one block), dW1 and dW2 one expert a
 * block, so that the reference's scratch and the host's copies are one expert's. */
static size_t block_count(const GgMoeShape *s, int which) { return which < 2 ? 1 : (size_t)s->experts; }
static size_t block_elements(const GgMoeShape *s, int which) {
    const size_t T = s->tokens, d = s->d, f = s->f, E = s->experts;
    const size_t n[GG_MOE_GRADS] = {T * d, d * E, d * 2 * f, f * d};
    return n[which];
}
static size_t grad_bytes(const GgMoeShape *s, int which) { /* bf16, all its blocks */
    return 2 * block_count(s, which) * block_elements(s, which);
}

int gg_moe_bwd_open(GgMoeBwdRun *b, GgMoeRun *r) {
    memset(b, 0, sizeof *b);
    const GgMoeShape *s = &r->layer.s;
    char why[512];
    if (!k5_moe_backward_can_implement(s, why, sizeof why)) {
        gg_error_set("%s", why);
        return GG_EXIT_USAGE;
    }
    size_t ws_bytes = 0;
    if (k5_moe_backward_workspace_bytes(s, r->layer.num_sms, &ws_bytes) != cudaSuccess) {
        gg_error_set("k5_moe_backward needs the layer's SM count > 0 (num_sms = %d)", r->layer.num_sms);
        return GG_EXIT_CHECK;
    }
    const size_t bytes[GG_MOE_BWD_BUFS] = {2 * (size_t)s->tokens * s->d, grad_bytes(s, 0), grad_bytes(s, 1),
                                           grad_bytes(s, 2), grad_bytes(s, 3), ws_bytes};
    for (int i = 0; i < GG_MOE_BWD_BUFS; ++i)
        if (bytes[i] && cudaMalloc(&b->buf[i], bytes[i]) != cudaSuccess) {
            gg_error_set("cudaMalloc of %zu bytes for the MoE backward failed", bytes[i]);
            gg_moe_bwd_close(b);
            return GG_EXIT_CHECK;
        }
    b->b.layer = &r->layer;
    b->b.dout = b->buf[0];
    b->b.grads = (K5MoeGrads){b->buf[1], b->buf[2], b->buf[3], b->buf[4]};
    if (b->buf[5]) GG_CUDA(k5_moe_backward_workspace(b->buf[5], s, r->layer.num_sms, &b->b.ws));
    GG_CUDA(k5_moe_backward_setup(&b->b));
    return GG_EXIT_OK;
}

void gg_moe_bwd_close(GgMoeBwdRun *b) {
    cudaStreamSynchronize(gg_stream());
    for (int i = 0; i < GG_MOE_BWD_BUFS; ++i) cudaFree(b->buf[i]);
    memset(b, 0, sizeof *b);
}

int gg_moe_bwd_fill(GgMoeBwdRun *b, unsigned long long seed) {
    const GgMoeLayer *l = b->b.layer;
    GG_CUDA(gg_fill_uniform_scaled_bf16((uint16_t *)b->b.dout, (size_t)l->s.tokens * l->s.d, 5 * seed + 4, 1.0f,
                                        l->stream));
    return gg_moe_bwd_poison(b);
}

int gg_moe_bwd_poison(GgMoeBwdRun *b) {
    const GgMoeLayer *l = b->b.layer;
    for (int i = 0; i < GG_MOE_GRADS; ++i) { /* NaN */
        const size_t bytes = grad_bytes(&l->s, i);
        if (bytes) GG_CUDA(cudaMemsetAsync(b->buf[1 + i], 0xff, bytes, l->stream));
    }
    /* and the scratch each step must write in full before the next reads it */
    void *scratch[K5_MOE_STEP_SCRATCH];
    size_t bytes[K5_MOE_STEP_SCRATCH];
    GG_CUDA(k5_moe_backward_step_scratch(&l->s, l->num_sms, &b->b.ws, scratch, bytes));
    for (int i = 0; i < K5_MOE_STEP_SCRATCH; ++i)
        if (scratch[i] && bytes[i]) GG_CUDA(cudaMemsetAsync(scratch[i], 0xff, bytes[i], l->stream));
    return GG_EXIT_OK;
}

/* ---- the reference ---- */

typedef struct Routing { /* host copies of the forward's (checked) routing */
    int *expert, *row_offsets, *row_of;
    float *weight, *logits;
} Routing;

static void routing_free(Routing *h) {
    free(h->expert);
    free(h->row_offsets);
    free(h->row_of);
    free(h->weight);
    free(h->logits);
}

static int routing_to_host(const GgMoeLayer *l, Routing *h) {
    const GgMoeShape *s = &l->s;
    const size_t T = s->tokens, E = s->experts, R = T * s->topk;
    h->expert = malloc(4 * R);
    h->row_of = malloc(4 * R);
    h->weight = malloc(4 * R);
    h->row_offsets = malloc(4 * (E + 1));
    h->logits = malloc(4 * T * E);
    if (!(h->expert && h->row_of && h->weight && h->row_offsets && h->logits)) {
        gg_error_set("out of host memory for the backward's check");
        return GG_EXIT_CHECK;
    }
    GG_CUDA(cudaStreamSynchronize(l->stream));
    GG_CUDA(cudaMemcpy(h->expert, l->ws.topk_expert, 4 * R, cudaMemcpyDeviceToHost));
    GG_CUDA(cudaMemcpy(h->row_of, l->ws.row_of, 4 * R, cudaMemcpyDeviceToHost));
    GG_CUDA(cudaMemcpy(h->weight, l->ws.topk_weight, 4 * R, cudaMemcpyDeviceToHost));
    GG_CUDA(cudaMemcpy(h->row_offsets, l->ws.row_offsets, 4 * (E + 1), cudaMemcpyDeviceToHost));
    GG_CUDA(cudaMemcpy(h->logits, l->ws.logits, 4 * T * E, cudaMemcpyDeviceToHost));
    return GG_EXIT_OK;
}

/* The fp32 reference's device scratch, in carving order: the layer's tensors over all R routed
 * rows, dX and dWr whole, and one expert's dW1_e [d x 2F] and dW2_e [F x d] (the weight
 * gradients go expert by expert: kimi-k2's dW1 alone is 1.1e10 elements, 45 GB in fp32) and
 * the sums of squared terms of either (TERMS_E, [d x 2F] at most). */
enum { R_XG, R_U, R_H, R_Y, R_DW, R_DY, R_DH, R_DU, R_DXG, R_DLOGITS, R_DXR, R_DX, R_DWR, R_DW1_E, R_DW2_E, R_TERMS_E,
       R_BUFS };
#define P(i, type) ((type *)(dv + off[i]))

/* C = A_e W_e expert by expert over the rows each holds (form NN: W_e [k x n], NT: W_e [n x k],
 * block e of W; A [rows x k] bf16 and C [rows x n] fp32, both in the routed rows' order). */
static int per_expert(const Routing *h, int experts, GgGemmForm form, const uint16_t *a, const uint16_t *w,
                      float *c, int n, int k) {
    for (int e = 0; e < experts; ++e) {
        const int m = h->row_offsets[e + 1] - h->row_offsets[e];
        const size_t r0 = (size_t)h->row_offsets[e];
        if (m && gg_gemm_ref(form, a + r0 * k, w + (size_t)e * k * n, c + r0 * n, m, n, k)) return GG_EXIT_CHECK;
    }
    return GG_EXIT_OK;
}

/* The fp32 reference of everything but dW1 and dW2 into the scratch (ref_block computes an
 * expert's of those from the Xg, H, dY and dU it leaves). */
static int gpu_reference(const GgMoeLayer *l, const uint16_t *dout, const Routing *h, char *dv, const size_t *off) {
    const GgMoeShape *s = &l->s;
    const int T = s->tokens, E = s->experts, K = s->topk, R = T * K, d = s->d, f = s->f;
    cudaStream_t st = l->stream;
    if (gg_moe_ref_gather(l->x, l->ws.src_token, R, d, P(R_XG, uint16_t), st) ||
        per_expert(h, E, GG_GEMM_NN, P(R_XG, uint16_t), l->w1, P(R_U, float), 2 * f, d) || /* U = Xg W1 */
        gg_moe_ref_swiglu(P(R_U, float), R, f, P(R_H, uint16_t), st) ||
        per_expert(h, E, GG_GEMM_NN, P(R_H, uint16_t), l->w2, P(R_Y, float), d, f) || /* Y = H W2 */
        gg_moe_ref_combine_backward(dout, P(R_Y, float), l->ws.row_of, l->ws.topk_weight, T, K, d, P(R_DW, float),
                                    P(R_DY, uint16_t), st) ||
        per_expert(h, E, GG_GEMM_NT, P(R_DY, uint16_t), l->w2, P(R_DH, float), f, d) || /* dH = dY W2^T */
        gg_moe_ref_swiglu_backward(P(R_U, float), P(R_DH, float), R, f, P(R_DU, uint16_t), st) ||
        per_expert(h, E, GG_GEMM_NT, P(R_DU, uint16_t), l->w1, P(R_DXG, float), d, 2 * f)) /* dXg = dU W1^T */
        return GG_EXIT_CHECK;
    if (gg_moe_ref_router_backward(l->ws.logits, l->ws.topk_expert, l->ws.topk_weight, P(R_DW, float), T, E, K,
                                   s->renorm, P(R_DLOGITS, uint16_t), st) ||
        gg_gemm_ref(GG_GEMM_TN, l->x, P(R_DLOGITS, uint16_t), P(R_DWR, float), d, E, T) ||
        gg_gemm_ref(GG_GEMM_NT, P(R_DLOGITS, uint16_t), l->wr, P(R_DXR, float), T, d, E) ||
        gg_moe_ref_gather_sum(P(R_DXG, float), l->ws.row_of, P(R_DXR, float), T, K, d, P(R_DX, float), st))
        return GG_EXIT_CHECK;
    return GG_EXIT_OK;
}

/* dW1 = Xg^T dU [d x 2F] and dW2 = H^T dY [F x d] over all routed rows: the reference's two bf16
 * operands (a [R x rows], g [R x cols]) and where their fp32 squares go for the sums of squared
 * terms (header, 2.), scratch the rest of the reference no longer reads: Y's [R x d] takes the
 * operand d wide (Xg, dY), U's [R x 2F] the other (dU, H). */
typedef struct WeightGrad {
    const uint16_t *a, *g;
    float *sq_a, *sq_g;
    int rows, cols;
} WeightGrad;
static WeightGrad weight_grad(const GgMoeShape *s, char *dv, const size_t *off, int which) {
    return which == 2 ? (WeightGrad){P(R_XG, uint16_t), P(R_DU, uint16_t), P(R_Y, float), P(R_U, float), s->d, 2 * s->f}
                      : (WeightGrad){P(R_H, uint16_t), P(R_DY, uint16_t), P(R_U, float), P(R_Y, float), s->f, s->d};
}

/* Before dW1's or dW2's blocks: the squares of its two operands. */
static int square_operands(const GgMoeLayer *l, char *dv, const size_t *off, int which) {
    const size_t R = (size_t)l->s.tokens * l->s.topk;
    const WeightGrad w = weight_grad(&l->s, dv, off, which);
    GG_CUDA(gg_moe_ref_square(w.a, R * w.rows, w.sq_a, l->stream));
    GG_CUDA(gg_moe_ref_square(w.g, R * w.cols, w.sq_g, l->stream));
    return GG_EXIT_OK;
}

/* Block b of gradient `which` of the reference, on the device: dX and dWr as gpu_reference left
 * them; expert b's dW1_e = Xg_e^T dU_e or dW2_e = H_e^T dY_e computed now (zeros for an empty
 * expert, and for every weight gradient of a layer with no tokens), and where terms is asked for,
 * its sums of squared terms from square_operands' squares. */
static int ref_block(const GgMoeLayer *l, const Routing *h, char *dv, const size_t *off, int which, size_t b,
                     const float **ref, const float **terms) {
    const GgMoeShape *s = &l->s;
    if (which < 2) {
        *ref = which == 0 ? P(R_DX, float) : P(R_DWR, float);
        if (terms) *terms = NULL;
        return GG_EXIT_OK;
    }
    float *out = which == 2 ? P(R_DW1_E, float) : P(R_DW2_E, float), *sum_sq = P(R_TERMS_E, float);
    const int m = s->tokens > 0 ? h->row_offsets[b + 1] - h->row_offsets[b] : 0;
    const size_t r0 = s->tokens > 0 ? (size_t)h->row_offsets[b] : 0;
    *ref = out;
    if (terms) *terms = sum_sq;
    if (m == 0) {
        GG_CUDA(cudaMemsetAsync(out, 0, 4 * block_elements(s, which), l->stream));
        if (terms) GG_CUDA(cudaMemsetAsync(sum_sq, 0, 4 * block_elements(s, which), l->stream));
        return GG_EXIT_OK;
    }
    const WeightGrad w = weight_grad(s, dv, off, which);
    if (gg_gemm_ref(GG_GEMM_TN, w.a + r0 * w.rows, w.g + r0 * w.cols, out, w.rows, w.cols, m)) return GG_EXIT_CHECK;
    return terms ? gg_gemm_ref_f32(GG_GEMM_TN, w.sq_a + r0 * w.rows, w.sq_g + r0 * w.cols, sum_sq, w.rows, w.cols, m)
                 : GG_EXIT_OK;
}
#undef P

static double bf(uint16_t v) { return gg_bf16_to_f32(v); }
static double round_bf16(double v) { return gg_bf16_to_f32(gg_f32_to_bf16((float)v)); }

/* The same layer and backward in fp64 on the CPU, routed row by routed row (small shapes),
 * rounding to bf16 where the GPU reference does. ref64[i]: the four gradients. */
static int cpu_reference(const GgMoeLayer *l, const uint16_t *dout_dev, const Routing *h, double *ref64[GG_MOE_GRADS]) {
    const GgMoeShape *s = &l->s;
    const size_t T = s->tokens, d = s->d, f = s->f, E = s->experts, K = s->topk;
    uint16_t *x = malloc(2 * T * d), *wr = malloc(2 * d * E), *w1 = malloc(2 * E * d * 2 * f),
             *w2 = malloc(2 * E * f * d), *dout = malloc(2 * T * d);
    double *u = malloc(8 * 2 * f), *hh = malloc(8 * f), *dy = malloc(8 * d), *dh = malloc(8 * f), *du = malloc(8 * 2 * f),
           *dz = malloc(8 * E);
    float *dw = malloc(4 * T * K);
    int rc = GG_EXIT_OK;
    if (!(x && wr && w1 && w2 && dout && u && hh && dy && dh && du && dz && dw)) {
        gg_error_set("out of host memory for the backward's CPU reference");
        rc = GG_EXIT_CHECK; /* what was allocated is freed below */
    } else if (cudaStreamSynchronize(l->stream) || cudaMemcpy(x, l->x, 2 * T * d, cudaMemcpyDeviceToHost) ||
               cudaMemcpy(wr, l->wr, 2 * d * E, cudaMemcpyDeviceToHost) ||
               cudaMemcpy(w1, l->w1, 2 * E * d * 2 * f, cudaMemcpyDeviceToHost) ||
               cudaMemcpy(w2, l->w2, 2 * E * f * d, cudaMemcpyDeviceToHost) ||
               cudaMemcpy(dout, dout_dev, 2 * T * d, cudaMemcpyDeviceToHost)) {
        gg_error_set("copying the layer's inputs to the host failed");
        rc = GG_EXIT_CHECK;
    }
    double *dX = ref64[0], *dWr = ref64[1], *dW1 = ref64[2], *dW2 = ref64[3];
    if (!rc) {
        memset(dX, 0, 8 * T * d);
        memset(dWr, 0, 8 * d * E);
        memset(dW1, 0, 8 * E * d * 2 * f);
        memset(dW2, 0, 8 * E * f * d);
    }
    for (size_t t = 0; !rc && t < T; ++t) {
        for (size_t j = 0; j < K; ++j) {
            const size_t e = (size_t)h->expert[t * K + j];
            const uint16_t *xt = x + t * d, *g = dout + t * d;
            gg_moe_row_forward64(xt, w1 + e * d * 2 * f, (int)d, (int)f, u, hh);
            double dot = 0; /* dw = <dOut, Y>, Y = H W2 */
            for (size_t q = 0; q < d; ++q) {
                double y = 0;
                for (size_t c = 0; c < f; ++c) y += hh[c] * bf(w2[(e * f + c) * d + q]);
                dot += bf(g[q]) * y;
                dy[q] = round_bf16(h->weight[t * K + j] * bf(g[q]));
            }
            dw[t * K + j] = (float)dot;
            for (size_t c = 0; c < f; ++c) {
                dh[c] = 0;
                for (size_t q = 0; q < d; ++q) {
                    dh[c] += dy[q] * bf(w2[(e * f + c) * d + q]);
                    dW2[(e * f + c) * d + q] += hh[c] * dy[q];
                }
                const double gc = u[c], sg = 1 / (1 + exp(-gc));
                du[c] = round_bf16(dh[c] * u[f + c] * sg * (1 + gc * (1 - sg)));
                du[f + c] = round_bf16(dh[c] * gc * sg);
            }
            for (size_t q = 0; q < d; ++q)
                for (size_t c = 0; c < 2 * f; ++c) {
                    dX[t * d + q] += du[c] * bf(w1[(e * d + q) * 2 * f + c]);
                    dW1[(e * d + q) * 2 * f + c] += bf(xt[q]) * du[c];
                }
        }
        k5_moe_router_grad_token(h->logits + t * E, (int)E, h->expert + t * K, h->weight + t * K, dw + t * K, (int)K,
                                 s->renorm, dz);
        for (size_t e = 0; e < E; ++e) {
            const double z = round_bf16(dz[e]);
            for (size_t q = 0; q < d; ++q) {
                dWr[q * E + e] += bf(x[t * d + q]) * z;
                dX[t * d + q] += z * bf(wr[q * E + e]);
            }
        }
    }
    free(x), free(wr), free(w1), free(w2), free(dout), free(u), free(hh), free(dy), free(dh), free(du), free(dz),
        free(dw);
    return rc;
}

/* Element i against reference r: |got - ref| and its bound (the forward's rms term atol[r], the
 * relative term, and for dW1 and dW2 the element's own, from its sums of squared terms). */
static const double grad_rtol = 0x1p-7, grad_ttol = 0x1p-4;
static double grad_bound(const double atol[2], int r, double v, const float *terms, size_t i) {
    return atol[r] + grad_rtol * fabs(v) + (terms ? grad_ttol * sqrt(terms[i]) : 0);
}

/* One thread's range [begin, end) of a block, into out (zeroed, first_bad = the block's n). */
typedef struct CompareJob {
    const uint16_t *got;
    const float *ref32, *terms;
    const double *ref64, *atol;
    size_t begin, end;
    GgGradCompare out;
} CompareJob;

static int compare_range(void *job) {
    CompareJob *j = job;
    const uint16_t *got = j->got;
    const float *ref32 = j->ref32, *terms = j->terms;
    const double *ref64 = j->ref64, *atol = j->atol;
    GgGradCompare *c = &j->out;
    for (size_t i = j->begin; i < j->end; ++i) {
        const double o = gg_bf16_to_f32(got[i]);
        int bad = -1; /* the first reference whose bound the element is outside: it counts once */
        for (int r = 0; r < (ref64 ? 2 : 1); ++r) {
            const double v = r ? ref64[i] : ref32[i], err = fabs(o - v), bound = grad_bound(atol, r, v, terms, i);
            c->max_ref = fmax(c->max_ref, fabs(v));
            c->margin[r] = err == err ? fmax(c->margin[r], bound > 0 ? err / bound : err > 0 ? INFINITY : 0) : INFINITY;
            if (!(err <= bound) && bad < 0) bad = r; /* NaN (unwritten) fails too */
            if (err == err) c->max_err = fmax(c->max_err, err);
        }
        if (bad >= 0 && !c->bad++) c->first_bad = i, c->first_ref = bad;
    }
    return 0;
}

/* A dW1 block of a large layer is tens of millions of elements and a layer has hundreds of
 * blocks: one thread per chunk of at least COMPARE_CHUNK, at most COMPARE_THREADS of them. Every
 * field merges by sum, min or max, so the result does not depend on the split. */
enum { COMPARE_THREADS = 16, COMPARE_CHUNK = 1 << 20 };

void gg_moe_grad_compare(const uint16_t *got, const float *ref32, const double *ref64, const float *terms, size_t n,
                         const double atol[2], int threads, GgGradCompare *out) {
    const size_t chunks = n / COMPARE_CHUNK;
    const int most = chunks < 1 ? 1 : chunks > COMPARE_THREADS ? COMPARE_THREADS : (int)chunks;
    if (threads <= 0 || threads > most) threads = most;
    CompareJob jobs[COMPARE_THREADS];
    thrd_t thread[COMPARE_THREADS];
    int started[COMPARE_THREADS] = {0};
    for (int t = 0; t < threads; ++t) {
        jobs[t] = (CompareJob){got, ref32, terms, ref64, atol, n * t / threads, n * (t + 1) / threads, {0}};
        jobs[t].out.first_bad = n; /* and first_ref 0 */
        /* job 0 on this thread; a thread that cannot start runs its job here too */
        started[t] = t > 0 && thrd_create(&thread[t], compare_range, &jobs[t]) == thrd_success;
    }
    for (int t = 0; t < threads; ++t)
        if (!started[t]) compare_range(&jobs[t]);
    *out = (GgGradCompare){0, n, 0, {0, 0}, 0, 0};
    for (int t = 0; t < threads; ++t) {
        if (started[t]) thrd_join(thread[t], NULL);
        const GgGradCompare *c = &jobs[t].out;
        out->bad += c->bad;
        if (c->first_bad < out->first_bad) out->first_bad = c->first_bad, out->first_ref = c->first_ref;
        for (int r = 0; r < 2; ++r) out->margin[r] = fmax(out->margin[r], c->margin[r]);
        out->max_ref = fmax(out->max_ref, c->max_ref);
        out->max_err = fmax(out->max_err, c->max_err);
    }
}

/* One block of gradient `which` (bf16, host, elements first.. of the gradient) against its
 * references: fp32 (ref32) and, where the CPU one ran, fp64 (ref64); atol[0], atol[1]: the
 * forward's tolerance's first term from each reference's rms; terms: dW1's or dW2's sums of
 * squared terms per element (NULL for dX and dWr). max_ref, max_err: running maxima over the
 * gradient. The gradient's first element outside a bound is named in chk->why. */
static void compare_block(int which, const uint16_t *got, const float *ref32, const double *ref64, const float *terms,
                          size_t n, size_t first, const double atol[2], double *max_ref, double *max_err,
                          GgMoeBwdCheck *chk) {
    GgGradCompare c;
    gg_moe_grad_compare(got, ref32, ref64, terms, n, atol, 0, &c);
    for (int r = 0; r < 2; ++r) chk->margin[which][r] = fmax(chk->margin[which][r], c.margin[r]);
    *max_ref = fmax(*max_ref, c.max_ref);
    *max_err = fmax(*max_err, c.max_err);
    if (c.bad && !chk->bad[which] && !chk->why[0]) {
        const size_t i = c.first_bad;
        const int r = c.first_ref;
        const double v = r ? ref64[i] : ref32[i];
        const int len = snprintf(chk->why, sizeof chk->why, "%s: element %zu is %.6g, the %s reference %.6g (bound %.3g)",
                                 gg_moe_grad_names[which], first + i, gg_bf16_to_f32(got[i]),
                                 r ? "fp64 CPU" : "cuBLAS fp32", v, grad_bound(atol, r, v, terms, i));
        if (ref64 && len > 0 && (size_t)len < sizeof chk->why) /* and the other reference's value */
            snprintf(chk->why + len, sizeof chk->why - len, "; the %s one %.6g", r ? "cuBLAS fp32" : "fp64 CPU",
                     r ? ref32[i] : ref64[i]);
    }
    chk->bad[which] += c.bad;
}

/* Gradient `which` against the references, block by block, in two passes: the sums of squares
 * (the fp32 reference's on the device, cuBLAS's norm; the fp64 one's on the host) for the rms
 * over the active blocks (an empty expert's adds 0 to the sum, nothing to the count), then each
 * block's reference and the layer's values to the host and compared. */
static int check_gradient(const GgMoeLayer *l, const GgMoeBwdRun *b, const Routing *h, char *dv, const size_t *off,
                          double *const ref64[GG_MOE_GRADS], int which, uint16_t *got, float *ref,
                          float *terms, GgMoeBwdCheck *chk) {
    const GgMoeShape *s = &l->s;
    const size_t blocks = block_count(s, which), n = block_elements(s, which);
    if (n == 0) return GG_EXIT_OK;
    double sq[2] = {0, 0}, atol[2], max_ref = 0, max_err = 0;
    size_t active = 0; /* blocks in the rms: dX's and dWr's, and the experts with rows (header, 2.) */
    for (size_t k = 0; k < blocks; ++k) {
        const float *dref;
        float norm = 0;
        if (!(which < 2 || (s->tokens > 0 && h->row_offsets[k + 1] > h->row_offsets[k]))) continue; /* zeros */
        ++active;
        if (ref_block(l, h, dv, off, which, k, &dref, NULL)) return GG_EXIT_CHECK;
        GG_BLAS(cublasSnrm2_64(gg_blas(), (int64_t)n, dref, 1, &norm)); /* a host result: waits for the stream */
        sq[0] += (double)norm * norm;
        for (size_t i = 0; ref64[which] && i < n; ++i) sq[1] += ref64[which][k * n + i] * ref64[which][k * n + i];
    }
    for (int r = 0; r < 2; ++r) atol[r] = active ? ldexp(sqrt(sq[r] / (double)(active * n)), -4) : 0;
    const uint16_t *layer = (const uint16_t *)b->buf[1 + which];
    if (which >= 2 && s->tokens > 0 && square_operands(l, dv, off, which)) return GG_EXIT_CHECK;
    for (size_t k = 0; k < blocks; ++k) {
        const float *dref, *dterms;
        if (ref_block(l, h, dv, off, which, k, &dref, &dterms)) return GG_EXIT_CHECK;
        /* The reference runs on the layer's stream, which does not order with cudaMemcpy's. */
        GG_CUDA(cudaStreamSynchronize(l->stream));
        GG_CUDA(cudaMemcpy(ref, dref, 4 * n, cudaMemcpyDeviceToHost));
        GG_CUDA(cudaMemcpy(got, layer + k * n, 2 * n, cudaMemcpyDeviceToHost));
        if (dterms) GG_CUDA(cudaMemcpy(terms, dterms, 4 * n, cudaMemcpyDeviceToHost));
        const int first_failure = !chk->why[0];
        compare_block(which, got, ref, ref64[which] ? ref64[which] + k * n : NULL, dterms ? terms : NULL, n, k * n,
                      atol, &max_ref, &max_err, chk);
        if (first_failure && chk->why[0] && which >= 2) { /* which expert, and how long its reduction */
            const size_t len = strlen(chk->why);
            snprintf(chk->why + len, sizeof chk->why - len, ", expert %zu of %d rows",
                     k, s->tokens > 0 ? h->row_offsets[k + 1] - h->row_offsets[k] : 0);
        }
    }
    const double rel = max_ref > 0 ? max_err / max_ref : 0;
    if (rel >= chk->rel_err) {
        chk->rel_err = rel;
        chk->max_abs_err = max_err;
    }
    return GG_EXIT_OK;
}

const char *gg_moe_bwd_margins(const GgMoeBwdCheck *chk, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int g = 0; g < GG_MOE_GRADS && used < len; ++g) {
        char fp64[32] = "-"; /* where the CPU reference did not run */
        if (chk->cpu_ref) snprintf(fp64, sizeof fp64, "%.3g", chk->margin[g][1]);
        const int n = snprintf(buf + used, len - used, "%s%s %.3g/%s", g ? " " : "", gg_moe_grad_names[g],
                               chk->margin[g][0], fp64);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

int gg_moe_bwd_check(GgMoeRun *r, GgMoeBwdRun *b, int cpu_ref, GgMoeBwdCheck *chk) {
    const GgMoeLayer *l = &r->layer;
    const GgMoeShape *s = &l->s;
    memset(chk, 0, sizeof *chk);
    const size_t T = s->tokens, E = s->experts, R = T * s->topk, d = s->d, f = s->f;
    GgMoeCheck fwd;
    int rc = gg_moe_check(r, cpu_ref, &fwd);
    if (rc) return rc;
    if (!fwd.pass) {
        snprintf(chk->why, sizeof chk->why, "the forward: %.200s", fwd.why);
        return GG_EXIT_OK;
    }
    chk->forward_ok = 1;
    double *ref64[GG_MOE_GRADS] = {0};
    Routing h = {0};
    void *dev = NULL;
    size_t off[R_BUFS + 1] = {0}, most = 0;
    const size_t b_[R_BUFS] = {2 * R * d, 4 * R * 2 * f, 2 * R * f,     4 * R * d, 4 * R,     2 * R * d,
                               4 * R * f, 2 * R * 2 * f, 4 * R * d,     2 * T * E, 4 * T * d, 4 * T * d,
                               4 * d * E, 4 * d * 2 * f, 4 * f * d,     4 * d * 2 * f};
    for (int i = 0; i < R_BUFS; ++i) off[i + 1] = off[i] + k4_carve(NULL, &b_[i], 1, NULL);
    for (int i = 0; i < GG_MOE_GRADS; ++i)
        if (block_elements(s, i) > most) most = block_elements(s, i);
    uint16_t *got = malloc(2 * most + 1); /* one block of the layer's gradient and of the reference */
    float *ref = malloc(4 * most + 1), *terms = malloc(4 * most + 1);
    if (!got || !ref || !terms) {
        gg_error_set("out of host memory for the backward's check");
        rc = GG_EXIT_CHECK;
    }
    if (!rc && T > 0) rc = routing_to_host(l, &h);
    if (!rc && cudaMalloc(&dev, off[R_BUFS]) != cudaSuccess) {
        gg_error_set("cudaMalloc of %zu bytes for the backward's reference failed", off[R_BUFS]);
        rc = GG_EXIT_CHECK;
    }
    if (!rc && T > 0) rc = gpu_reference(l, b->b.dout, &h, dev, off);
    if (!rc && T == 0 && /* an empty layer: every weight gradient is zero */
        cudaMemsetAsync((char *)dev + off[R_DWR], 0, b_[R_DWR], l->stream) != cudaSuccess) {
        gg_error_set("zeroing the reference's dWr failed");
        rc = GG_EXIT_CHECK;
    }
    if (!rc && T > 0 && cpu_ref && (double)R * d * f * 9 <= (double)GG_MOE_BWD_CPU_REF_MACS) {
        for (int i = 0; i < GG_MOE_GRADS && !rc; ++i)
            if (!(ref64[i] = malloc(8 * block_count(s, i) * block_elements(s, i) + 1))) {
                gg_error_set("out of host memory for the backward's CPU reference");
                rc = GG_EXIT_CHECK;
            }
        if (!rc) rc = cpu_reference(l, b->b.dout, &h, ref64);
        chk->cpu_ref = !rc;
    }
    for (int i = 0; i < GG_MOE_GRADS && !rc; ++i) rc = check_gradient(l, b, &h, dev, off, ref64, i, got, ref, terms, chk);
    long bad = 0;
    for (int i = 0; i < GG_MOE_GRADS; ++i) bad += chk->bad[i];
    chk->pass = !rc && bad == 0;
    if (rc && !*gg_error()) gg_error_set("the backward's reference failed");
    cudaFree(dev);
    routing_free(&h);
    free(got);
    free(ref);
    free(terms);
    for (int i = 0; i < GG_MOE_GRADS; ++i) free(ref64[i]);
    return rc;
}

/* ---- timing ---- */

static cudaError_t backward(void *p) { return k5_moe_backward(p, NULL); }
static cudaError_t backward_marked(void *p, cudaEvent_t *marks) { return k5_moe_backward(p, marks); }

int gg_moe_bwd_time(GgMoeBwdRun *b, int warmup, int reps, GgTiming *tm, GgTiming step[GG_MOE_STEPS],
                    GgTelemetry *steps_power) {
    if (gg_time(backward, &b->b, warmup, reps, 1, tm)) return GG_EXIT_CHECK;
    GgTiming own[K5_MOE_BWD_STEPS];
    if (gg_moe_time_steps(backward_marked, &b->b, "backward", K5_MOE_BWD_STEPS, b->b.layer->s.tokens, reps, own,
                          steps_power))
        return GG_EXIT_CHECK;
    for (int s = 0; s < K5_MOE_BWD_STEPS; ++s) step[k5_moe_bwd_step_of[s]] = own[s];
    return GG_EXIT_OK;
}
