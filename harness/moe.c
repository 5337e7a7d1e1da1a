/* The MoE layer (k4_moe) in the harness: its buffers, inputs, check, timing and graph replay.
 *
 * The check, after one forward, in three parts:
 *  1. Routing. Reference logits X Wr in fp64 (exact as far as the check can tell), with
 *     sum |x w| beside each; the layer's fp32 logits lie within gg_moe_logit_bound of them
 *     (harness/gg_moe_bound.h derives it). The chosen experts are exactly the top-k of the
 *     layer's own logits, best first, ties to the lower expert (gg_moe_topk_exact): so a choice
 *     that differs from the exact logits' is one where those lie within the bounds of each
 *     other. The weights equal the softmax (renormalised or not) of the layer's own logits,
 *     recomputed in double: 1e-5 + 1e-4 |w|.
 *  2. Permutation, exactly: row offsets = the scan of the per-expert counts; each expert's
 *     rows hold its tokens in increasing order; row_of points back to the row of each (token, slot).
 *  3. Output. The layer in fp32 on the GPU (cuBLAS per expert) over the checked routing: U =
 *     Xg W1 in fp32, H = bf16(silu(gate) up) rounded like the layer's, Y = H W2 in fp32, out =
 *     sum_j w_tj Y. Tolerance |out - ref| <= 2^-4 rms(ref) + 2^-7 |ref|. The second term covers
 *     the layer's bf16 Y and out (at most 2^-8 relative each). The first covers H: where the
 *     layer's pre-rounding H differs a little from the reference's (fp32 sums in another order;
 *     the unfused path also rounds gate and up to bf16 first) the two round to neighbouring
 *     bf16 values, 2^-8 to 2^-7 relative apart, in up to about half of H's elements: about
 *     2^-8 rms(h) of error per element, so about 2^-8 rms(Y) per output after F terms of
 *     random sign. The largest of 10^7..10^8 outputs lies about six standard deviations out,
 *     2^-5.4 rms; 2^-4 leaves a factor of about 2.6 for outputs that are not Gaussian. Small
 *     shapes are also compared with an fp64 CPU reference of the same layer, same tolerance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "gg_harness.h"
#include "gg_moe.h"
#include "gg_moe_bound.h"
#include "k4_moe/k4_permutation.h"


/* Scale that keeps a K-long dot product of [-1, 1] values near 1: 4 / 2^round(log2 sqrt K). */
static float input_scale(int k) { return ldexpf(4.0f, -(int)lround(log2(sqrt((double)k)))); }

/* What open_run allocates: both paths' buffers, the unfused path's alone (no packed W1), or the
 * routing's alone. */
typedef enum { OPEN_BOTH, OPEN_UNFUSED, OPEN_ROUTING } OpenWhat;

/* Buffers of shape s: the whole layer's (without the packed W1 for the unfused path alone), or
 * (routing only) X, Wr, its padded copy and the route and permute steps' workspace (the fused
 * path's carving: no Xg, no U). */
static int open_run(GgMoeRun *r, const GgMoeShape *s, int num_sms, OpenWhat what) {
    const int routing_only = what == OPEN_ROUTING;
    memset(r, 0, sizeof *r);
    char why[512];
    if (!(routing_only ? k4_moe_can_route : k4_moe_can_implement)(s, why, sizeof why)) { /* the buffers and the check assume it */
        gg_error_set("%s", why);
        return GG_EXIT_USAGE;
    }
    if (gg_pool_open()) return GG_EXIT_CHECK;
    GgMoeLayer *l = &r->layer;
    l->s = *s;
    l->num_sms = num_sms;
    l->gather = K4_GATHER_DEFAULT;
    l->stream = gg_stream();
    const size_t t = (size_t)s->tokens, d = (size_t)s->d, f = (size_t)s->f, e = (size_t)s->experts;
    const size_t layer = routing_only ? 0 : 1, packed = what == OPEN_BOTH; /* W1, W2, out: the layer's only */
    const size_t bytes[GG_MOE_BUFS] = {2 * t * d, 2 * d * e, layer * 2 * e * d * 2 * f, packed * 2 * e * d * 2 * f,
                                       layer * 2 * e * f * d, layer * 2 * t * d,
                                       k4_moe_workspace_bytes(s, (int)routing_only), 2 * d * k4_router_n(s->experts)};
    for (int i = 0; i < GG_MOE_BUFS; ++i)
        if (bytes[i] && cudaMalloc(&r->buf[i], bytes[i]) != cudaSuccess) {
            gg_error_set("cudaMalloc of %zu bytes for the MoE layer failed", bytes[i]);
            gg_moe_close(r);
            return GG_EXIT_CHECK;
        }
    l->x = r->buf[0];
    l->wr = r->buf[1];
    l->w1 = r->buf[2];
    l->w1_packed = r->buf[3];
    l->w2 = r->buf[4];
    l->out = r->buf[5];
    if (r->buf[6]) k4_moe_workspace(r->buf[6], s, (int)routing_only, &l->ws); /* unfused: a superset */
    l->wr_padded = r->buf[7];
    return GG_EXIT_OK;
}

int gg_moe_open(GgMoeRun *r, const GgMoeShape *s, int num_sms) { return open_run(r, s, num_sms, OPEN_BOTH); }
int gg_moe_open_unfused(GgMoeRun *r, const GgMoeShape *s, int num_sms) {
    return open_run(r, s, num_sms, OPEN_UNFUSED);
}

void gg_moe_close(GgMoeRun *r) {
    cudaStreamSynchronize(gg_stream());
    for (int i = 0; i < GG_MOE_BUFS; ++i) cudaFree(r->buf[i]);
    memset(r, 0, sizeof *r);
}

int gg_moe_fill_x(GgMoeRun *r, unsigned long long seed) {
    const GgMoeLayer *l = &r->layer;
    GG_CUDA(gg_fill_uniform_scaled_bf16((uint16_t *)l->x, (size_t)l->s.tokens * l->s.d, 5 * seed, 1.0f, l->stream));
    return GG_EXIT_OK;
}

int gg_moe_fill(GgMoeRun *r, unsigned long long seed) {
    const GgMoeLayer *l = &r->layer;
    const GgMoeShape *s = &l->s;
    const size_t d = (size_t)s->d, f = (size_t)s->f, e = (size_t)s->experts;
    if (gg_moe_fill_x(r, seed)) return GG_EXIT_CHECK;
    GG_CUDA(gg_fill_uniform_scaled_bf16((uint16_t *)l->wr, d * e, 5 * seed + 1, input_scale(s->d), l->stream));
    if (l->w1) /* the layer's weights (not there for the routing alone) */
        GG_CUDA(gg_fill_uniform_scaled_bf16((uint16_t *)l->w1, e * d * 2 * f, 5 * seed + 2, input_scale(s->d), l->stream));
    if (l->w2)
        GG_CUDA(gg_fill_uniform_scaled_bf16((uint16_t *)l->w2, e * f * d, 5 * seed + 3, input_scale(s->f), l->stream));
    if (s->tokens > 0) GG_CUDA(k4_moe_setup(l));
    return GG_EXIT_OK;
}

int gg_moe_poison(GgMoeRun *r) {
    const GgMoeLayer *l = &r->layer;
    if (l->s.tokens <= 0) return GG_EXIT_OK;
    /* NaN (0xffff) in the output and in every routed-row buffer a step writes: an unfused and a
     * fused run of one shape share the workspace's layout (often its addresses too), so a row or
     * column of H that one path forgot to write must not find the other path's values there. */
    const size_t rows = (size_t)l->s.tokens * l->s.topk, d = (size_t)l->s.d, f = (size_t)l->s.f;
    if (l->out) GG_CUDA(cudaMemsetAsync(l->out, 0xff, 2 * (size_t)l->s.tokens * d, l->stream));
    if (l->ws.xg) GG_CUDA(cudaMemsetAsync(l->ws.xg, 0xff, 2 * rows * d, l->stream));
    if (l->ws.u) GG_CUDA(cudaMemsetAsync(l->ws.u, 0xff, 2 * rows * 2 * f, l->stream));
    if (l->ws.h) GG_CUDA(cudaMemsetAsync(l->ws.h, 0xff, 2 * rows * f, l->stream));
    if (l->ws.y) GG_CUDA(cudaMemsetAsync(l->ws.y, 0xff, 2 * rows * d, l->stream));
    return GG_EXIT_OK;
}

/* ---- the check ---- */

typedef struct Host {
    int *expert, *row_offsets, *src_token, *row_of;
    float *weight, *logits;
    double *exact, *abs_dot; /* the reference logits and sum |x w| of each */
    unsigned char *mark;     /* E bytes: gg_moe_topk_exact's scratch */
} Host;

static void host_free(Host *h) {
    free(h->expert);
    free(h->row_offsets);
    free(h->src_token);
    free(h->row_of);
    free(h->weight);
    free(h->logits);
    free(h->exact);
    free(h->abs_dot);
    free(h->mark);
    memset(h, 0, sizeof *h);
}

#define FAIL(...)                                                   \
    do {                                                            \
        snprintf(chk->why, sizeof chk->why, __VA_ARGS__);           \
        return GG_EXIT_OK; /* checked: wrong, not an error */       \
    } while (0)

static int check_routing(const GgMoeShape *s, const Host *h, GgMoeCheck *chk) {
    const int E = s->experts, K = s->topk;
    for (int t = 0; t < s->tokens; ++t) {
        const int *ch = h->expert + (size_t)t * K;
        const float *lg = h->logits + (size_t)t * E;
        const double *ref = h->exact + (size_t)t * E, *abs_dot = h->abs_dot + (size_t)t * E;
        for (int e = 0; e < E; ++e) {
            const double bound = gg_moe_logit_bound(abs_dot[e], s->d);
            if (!(fabs(lg[e] - ref[e]) <= bound)) /* NaN fails too */
                FAIL("routing: token %d expert %d logit %.9g, the exact (fp64) one %.9g, bound %.3g", t, e, lg[e],
                     ref[e], bound);
        }
        char why[160];
        if (!gg_moe_topk_exact(lg, E, ch, K, h->mark, why, sizeof why)) FAIL("routing: token %d: %s", t, why);
        /* weights: softmax of the layer's own fp32 logits, in double */
        double top = -INFINITY, sum = 0, chosen_sum = 0;
        for (int e = 0; e < E; ++e) top = fmax(top, lg[e]);
        for (int e = 0; e < E; ++e) sum += exp(lg[e] - top);
        for (int j = 0; j < K; ++j) chosen_sum += exp(lg[ch[j]] - top) / sum;
        for (int j = 0; j < K; ++j) {
            double w = exp(lg[ch[j]] - top) / sum;
            if (s->renorm) w /= chosen_sum;
            const double got = h->weight[(size_t)t * K + j];
            if (!(fabs(got - w) <= 1e-5 + 1e-4 * fabs(w)))
                FAIL("routing: token %d slot %d weight %.7g, softmax of its logits gives %.7g", t, j, got, w);
        }
    }
    chk->routing_ok = 1;
    return GG_EXIT_OK;
}

static int check_permutation(const GgMoeShape *s, const Host *h, GgMoeCheck *chk) {
    const int E = s->experts, R = s->tokens * s->topk;
    int *next = malloc(sizeof(int) * (2 * (size_t)E + 1 + 2 * (size_t)R)); /* next, offsets, row_of, src */
    if (!next) {
        gg_error_set("out of host memory");
        return GG_EXIT_CHECK;
    }
    int *offsets = next + E, *row_of = offsets + E + 1, *src = row_of + R;
    k4_permutation(h->expert, R, s->topk, E, next, offsets, row_of, src); /* the order it must be */
    int bad = 0;
    for (int e = 0; e <= E && !bad; ++e)
        if (h->row_offsets[e] != offsets[e]) {
            snprintf(chk->why, sizeof chk->why, "permute: row_offsets[%d] = %d, the counts give %d", e,
                     h->row_offsets[e], offsets[e]);
            bad = 1;
        }
    for (int a = 0; a < R && !bad; ++a)
        if (h->row_of[a] != row_of[a] || h->src_token[row_of[a]] != a / s->topk) {
            snprintf(chk->why, sizeof chk->why, "permute: token %d slot %d -> row %d (expected %d, holding token %d)",
                     a / s->topk, a % s->topk, h->row_of[a], row_of[a], h->src_token[row_of[a]]);
            bad = 1;
        }
    free(next);
    chk->permute_ok = !bad;
    return GG_EXIT_OK;
}

void gg_moe_row_forward64(const uint16_t *x, const uint16_t *w1_e, int d, int f, double *u, double *h) {
    for (int c = 0; c < 2 * f; ++c) u[c] = 0;
    for (int q = 0; q < d; ++q) {
        const double xv = gg_bf16_to_f32(x[q]);
        const uint16_t *row = w1_e + (size_t)q * 2 * f;
        for (int c = 0; c < 2 * f; ++c) u[c] += xv * gg_bf16_to_f32(row[c]);
    }
    for (int c = 0; c < f; ++c) h[c] = gg_bf16_to_f32(gg_f32_to_bf16((float)(u[c] / (1 + exp(-u[c])) * u[f + c])));
}

/* fp64 on the CPU, for small shapes: out[t] = sum_j w_tj (bf16(silu(x W1g) (x W1u))) W2. */
static int cpu_reference(const GgMoeRun *r, const Host *h, double *out) {
    const GgMoeLayer *l = &r->layer;
    const GgMoeShape *s = &l->s;
    const size_t T = s->tokens, d = s->d, f = s->f, E = s->experts, K = s->topk;
    uint16_t *x = malloc(2 * T * d), *w1 = malloc(2 * E * d * 2 * f), *w2 = malloc(2 * E * f * d);
    double *u = malloc(sizeof(double) * 2 * f), *hh = malloc(sizeof(double) * f);
    int rc = x && w1 && w2 && u && hh ? GG_EXIT_OK : GG_EXIT_CHECK;
    if (rc) gg_error_set("out of host memory for the CPU reference");
    if (!rc && (cudaMemcpy(x, l->x, 2 * T * d, cudaMemcpyDeviceToHost) ||
                cudaMemcpy(w1, l->w1, 2 * E * d * 2 * f, cudaMemcpyDeviceToHost) ||
                cudaMemcpy(w2, l->w2, 2 * E * f * d, cudaMemcpyDeviceToHost))) {
        gg_error_set("copying the layer's inputs to the host failed");
        rc = GG_EXIT_CHECK;
    }
    for (size_t i = 0; !rc && i < T * d; ++i) out[i] = 0;
    for (size_t t = 0; !rc && t < T; ++t)
        for (size_t j = 0; j < K; ++j) {
            const size_t e = (size_t)h->expert[t * K + j];
            gg_moe_row_forward64(x + t * d, w1 + e * d * 2 * f, (int)d, (int)f, u, hh);
            const double w = h->weight[t * K + j];
            for (size_t c = 0; c < f; ++c) {
                const uint16_t *row = w2 + (e * f + c) * d;
                for (size_t q = 0; q < d; ++q) out[t * d + q] += w * hh[c] * gg_bf16_to_f32(row[q]);
            }
        }
    free(x);
    free(w1);
    free(w2);
    free(u);
    free(hh);
    return rc;
}

/* Compares out (bf16, host copy) with the reference: ref32 (fp32, GPU) or, if given, ref64 (fp64, CPU). */
static void compare(const uint16_t *out, const float *ref32, const double *ref64, size_t n, GgMoeCheck *chk) {
    double sq = 0, max_ref = 0;
    for (size_t i = 0; i < n; ++i) {
        const double v = ref64 ? ref64[i] : ref32[i];
        sq += v * v;
        max_ref = fmax(max_ref, fabs(v));
    }
    const double rms = n ? sqrt(sq / n) : 0, atol = ldexp(rms, -4), rtol = ldexp(1.0, -7);
    for (size_t i = 0; i < n; ++i) {
        const double v = ref64 ? ref64[i] : ref32[i], o = gg_bf16_to_f32(out[i]), err = fabs(o - v);
        if (!(err <= atol + rtol * fabs(v))) { /* NaN (unwritten) fails too */
            if (!chk->bad++)
                snprintf(chk->why, sizeof chk->why, "output: element %zu is %.6g, the %s reference %.6g", i, o,
                         ref64 ? "fp64 CPU" : "cuBLAS fp32", v);
        }
        if (err == err) chk->max_abs_err = fmax(chk->max_abs_err, err);
    }
    chk->rel_err = max_ref > 0 ? chk->max_abs_err / max_ref : 0;
}

/* The router's logits in fp64 on the CPU, with sum |x w| (small shapes; gg_moe_ref_logits is
 * the same sum on the GPU). */
static int cpu_logits(const GgMoeLayer *l, double *exact, double *abs_dot) {
    const GgMoeShape *s = &l->s;
    const size_t T = s->tokens, d = s->d, E = s->experts;
    uint16_t *x = malloc(2 * T * d), *wr = malloc(2 * d * E);
    int rc = x && wr ? GG_EXIT_OK : GG_EXIT_CHECK;
    if (rc) gg_error_set("out of host memory for the CPU logits");
    if (!rc && (cudaStreamSynchronize(l->stream) || cudaMemcpy(x, l->x, 2 * T * d, cudaMemcpyDeviceToHost) ||
                cudaMemcpy(wr, l->wr, 2 * d * E, cudaMemcpyDeviceToHost))) {
        gg_error_set("copying X and Wr to the host failed");
        rc = GG_EXIT_CHECK;
    }
    for (size_t t = 0; !rc && t < T; ++t)
        for (size_t e = 0; e < E; ++e) {
            double sum = 0, abs_sum = 0;
            for (size_t q = 0; q < d; ++q) {
                const double p = (double)gg_bf16_to_f32(x[t * d + q]) * gg_bf16_to_f32(wr[q * E + e]);
                sum += p;
                abs_sum += fabs(p);
            }
            exact[t * E + e] = sum;
            abs_dot[t * E + e] = abs_sum;
        }
    free(x);
    free(wr);
    return rc;
}

/* Parts 1 and 2 of the check: the routing buffers to the host (h), the reference logits (fp64,
 * on the CPU where cpu_ref and T E d <= 2^28, else on the GPU), check_routing, then
 * check_permutation. */
static int check_route_permute(const GgMoeLayer *l, int cpu_ref, Host *h, GgMoeCheck *chk) {
    const GgMoeShape *s = &l->s;
    const size_t T = s->tokens, E = s->experts, R = T * s->topk;
    GG_CUDA(cudaStreamSynchronize(l->stream));
    h->expert = malloc(4 * R);
    h->weight = malloc(4 * R);
    h->row_of = malloc(4 * R);
    h->src_token = malloc(4 * R);
    h->row_offsets = malloc(4 * (E + 1));
    h->logits = malloc(4 * T * E);
    h->exact = malloc(8 * T * E);
    h->abs_dot = malloc(8 * T * E);
    h->mark = malloc(E);
    if (!(h->expert && h->weight && h->row_of && h->src_token && h->row_offsets && h->logits && h->exact &&
          h->abs_dot && h->mark)) {
        gg_error_set("out of host memory for the MoE check");
        return GG_EXIT_CHECK;
    }
    int rc = GG_EXIT_OK;
    void *dev = NULL;
    if (cpu_ref && (double)T * E * s->d <= (double)(1 << 28)) {
        rc = cpu_logits(l, h->exact, h->abs_dot);
    } else if (cudaMalloc(&dev, 16 * T * E) != cudaSuccess) {
        gg_error_set("cudaMalloc of %zu bytes for the reference logits failed", 16 * T * E);
        rc = GG_EXIT_CHECK;
    } else if (gg_moe_ref_logits(l->x, l->wr, (int)T, (int)E, s->d, dev, (double *)dev + T * E, l->stream) ||
               cudaStreamSynchronize(l->stream) ||
               cudaMemcpy(h->exact, dev, 8 * T * E, cudaMemcpyDeviceToHost) ||
               cudaMemcpy(h->abs_dot, (double *)dev + T * E, 8 * T * E, cudaMemcpyDeviceToHost)) {
        gg_error_set("the fp64 reference logits failed");
        rc = GG_EXIT_CHECK;
    }
    cudaFree(dev);
    const struct {
        void *dst;
        const void *src;
        size_t bytes;
    } copies[] = {{h->logits, l->ws.logits, 4 * T * E}, {h->expert, l->ws.topk_expert, 4 * R},
                  {h->weight, l->ws.topk_weight, 4 * R}, {h->row_of, l->ws.row_of, 4 * R},
                  {h->src_token, l->ws.src_token, 4 * R}, {h->row_offsets, l->ws.row_offsets, 4 * (E + 1)}};
    for (size_t i = 0; !rc && i < sizeof copies / sizeof copies[0]; ++i)
        if (cudaMemcpy(copies[i].dst, copies[i].src, copies[i].bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
            gg_error_set("copying the routing buffers to the host failed");
            rc = GG_EXIT_CHECK;
        }
    if (!rc) rc = check_routing(s, h, chk);
    if (!rc && chk->routing_ok) rc = check_permutation(s, h, chk);
    return rc;
}

int gg_moe_check(GgMoeRun *r, int cpu_ref, GgMoeCheck *chk) {
    const GgMoeLayer *l = &r->layer;
    const GgMoeShape *s = &l->s;
    memset(chk, 0, sizeof *chk);
    const size_t T = s->tokens, E = s->experts, K = s->topk, R = T * K, d = s->d, f = s->f;
    if (T == 0) { /* nothing to write, nothing written */
        chk->pass = chk->routing_ok = chk->permute_ok = 1;
        return GG_EXIT_OK;
    }
    Host h = {0};
    int rc = check_route_permute(l, cpu_ref, &h, chk);
    uint16_t *out = malloc(2 * T * d);
    float *ref = malloc(4 * T * d);
    double *ref64 = NULL;
    void *dev = NULL;
    if (!rc && !(out && ref)) {
        gg_error_set("out of host memory for the MoE check");
        rc = GG_EXIT_CHECK;
    }
    /* device scratch: Xg [R x d] bf16, U [R x 2F] fp32, H [R x F] bf16, Y [R x d] fp32, out fp32 */
    const size_t o_xg = 0, o_u = o_xg + 2 * R * d, o_h = o_u + 4 * R * 2 * f, o_y = o_h + 2 * R * f,
                 o_out = o_y + 4 * R * d, total = o_out + 4 * T * d;
    if (!rc && chk->permute_ok && cudaMalloc(&dev, total) != cudaSuccess) {
        gg_error_set("cudaMalloc of %zu bytes for the MoE reference failed", total);
        rc = GG_EXIT_CHECK;
    }
    char *dv = dev;
    /* The reference kernels and cuBLAS run on the layer's stream, which does not order with
     * the legacy default stream of cudaMemcpy: wait for it before each copy. */
#define D2H(dst, src, bytes) \
    if (!rc && (cudaStreamSynchronize(l->stream) != cudaSuccess || \
                cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)) { \
        gg_error_set("copying %s to the host failed", #src); \
        rc = GG_EXIT_CHECK; \
    }
    D2H(out, l->out, 2 * T * d);
    if (!rc && chk->permute_ok) { /* the layer in fp32 over the checked routing and permutation */
        cudaStream_t st = l->stream;
        if (gg_moe_ref_gather(l->x, l->ws.src_token, (int)R, (int)d, (uint16_t *)(dv + o_xg), st)) rc = GG_EXIT_CHECK;
        for (size_t e = 0; !rc && e < E; ++e) {
            const int m = h.row_offsets[e + 1] - h.row_offsets[e], row0 = h.row_offsets[e];
            if (m == 0) continue;
            rc = gg_gemm_ref(GG_GEMM_NN, (const uint16_t *)(dv + o_xg) + (size_t)row0 * d, l->w1 + e * d * 2 * f,
                          (float *)(dv + o_u) + (size_t)row0 * 2 * f, m, (int)(2 * f), (int)d);
        }
        if (!rc && gg_moe_ref_swiglu((const float *)(dv + o_u), (int)R, (int)f, (uint16_t *)(dv + o_h), st))
            rc = GG_EXIT_CHECK;
        for (size_t e = 0; !rc && e < E; ++e) {
            const int m = h.row_offsets[e + 1] - h.row_offsets[e], row0 = h.row_offsets[e];
            if (m == 0) continue;
            rc = gg_gemm_ref(GG_GEMM_NN, (const uint16_t *)(dv + o_h) + (size_t)row0 * f, l->w2 + e * f * d,
                          (float *)(dv + o_y) + (size_t)row0 * d, m, (int)d, (int)f);
        }
        if (!rc && gg_moe_ref_combine((const float *)(dv + o_y), l->ws.row_of, l->ws.topk_weight, (int)T, (int)K,
                                      (int)d, (float *)(dv + o_out), st))
            rc = GG_EXIT_CHECK;
        D2H(ref, dv + o_out, 4 * T * d);
        if (!rc) compare(out, ref, NULL, T * d, chk);
        /* fp64 CPU reference: up to GG_MOE_CPU_REF_MACS multiply-adds */
        if (!rc && cpu_ref && (double)R * d * f * 3 <= (double)GG_MOE_CPU_REF_MACS) {
            ref64 = malloc(sizeof(double) * T * d);
            if (!ref64) {
                gg_error_set("out of host memory for the CPU reference");
                rc = GG_EXIT_CHECK;
            }
            if (!rc) rc = cpu_reference(r, &h, ref64);
            if (!rc) {
                GgMoeCheck c2 = {0};
                compare(out, NULL, ref64, T * d, &c2);
                chk->cpu_ref = 1;
                if (c2.bad && !chk->bad) memcpy(chk->why, c2.why, sizeof chk->why);
                chk->bad += c2.bad;
            }
        }
        chk->pass = !rc && chk->bad == 0;
    }
#undef D2H
    cudaFree(dev);
    host_free(&h);
    free(out);
    free(ref);
    free(ref64);
    return rc;
}

int gg_moe_routing_check(const GgMoeShape *s, int num_sms, unsigned long long seed, int cpu_ref, GgMoeCheck *chk) {
    GgMoeRun r;
    memset(chk, 0, sizeof *chk);
    int rc = open_run(&r, s, num_sms, OPEN_ROUTING);
    if (rc) return rc;
    const GgMoeWorkspace *w = &r.layer.ws;
    const size_t t = (size_t)s->tokens, rows = t * s->topk;
    rc = gg_moe_fill(&r, seed);
    /* poison what the two steps write: NaN logits, -1 indices (0xff bytes) */
    if (!rc && t > 0 &&
        (cudaMemsetAsync(w->logits, 0xff, 4 * t * s->experts, r.layer.stream) ||
         cudaMemsetAsync(w->topk_expert, 0xff, 4 * rows, r.layer.stream) ||
         cudaMemsetAsync(w->src_token, 0xff, 4 * rows, r.layer.stream) ||
         cudaMemsetAsync(w->row_of, 0xff, 4 * rows, r.layer.stream) ||
         cudaMemsetAsync(w->row_offsets, 0xff, 4 * ((size_t)s->experts + 1), r.layer.stream))) {
        gg_error_set("poisoning the routing buffers failed");
        rc = GG_EXIT_CHECK;
    }
    cudaError_t err = cudaSuccess;
    if (!rc && ((err = k4_moe_route_permute(&r.layer)) != cudaSuccess ||
                (err = cudaStreamSynchronize(r.layer.stream)) != cudaSuccess)) {
        gg_error_set("route and permute failed: %s", cudaGetErrorString(err));
        rc = GG_EXIT_CHECK;
    }
    Host h = {0};
    if (!rc && t > 0) rc = check_route_permute(&r.layer, cpu_ref, &h, chk);
    chk->pass = !rc && (t == 0 || (chk->routing_ok && chk->permute_ok));
    host_free(&h);
    gg_moe_close(&r);
    return rc;
}

/* ---- timing ---- */

typedef struct {
    GgMoeRun *r;
    int fused;
} Ctx;
static cudaError_t forward_marked(void *p, cudaEvent_t *marks) {
    Ctx *c = p;
    return k4_moe_forward(&c->r->layer, c->fused, marks);
}
static cudaError_t forward(void *p) { return forward_marked(p, NULL); }

int gg_moe_time_steps(cudaError_t (*run)(void *ctx, cudaEvent_t *marks), void *ctx, const char *what, int steps,
                      int tokens, int reps, GgTiming *step, GgTelemetry *power) {
    enum { MOST = 16 };
    cudaEvent_t marks[MOST + 1];
    int made = 0, rc = GG_EXIT_OK;
    for (; made <= steps && steps <= MOST; ++made)
        if (cudaEventCreate(&marks[made]) != cudaSuccess) break;
    double *t = malloc(sizeof(double) * reps * steps);
    if (made <= steps || !t) {
        gg_error_set("events or host memory for the step timing");
        rc = GG_EXIT_CHECK;
    }
    GgTelemetryMark start;
    gg_telemetry_mark(&start);
    for (int i = 0; !rc && i < reps; ++i) {
        if (gg_flush_l2() || run(ctx, marks) != cudaSuccess || cudaEventSynchronize(marks[steps]) != cudaSuccess) {
            gg_error_set("a %s failed while timing its steps", what);
            rc = GG_EXIT_CHECK;
            break;
        }
        for (int s = 0; s < steps; ++s) {
            float ms = 0;
            if (tokens > 0 && cudaEventElapsedTime(&ms, marks[s], marks[s + 1]) != cudaSuccess) {
                gg_error_set("reading the step events failed");
                rc = GG_EXIT_CHECK;
            }
            t[s * reps + i] = ms * 1e3;
        }
    }
    gg_telemetry_since(&start, power);
    for (int s = 0; !rc && s < steps; ++s) gg_timing_summarize(t + s * reps, reps, &step[s]);
    for (int i = 0; i < made; ++i) cudaEventDestroy(marks[i]);
    free(t);
    return rc;
}

int gg_moe_time(GgMoeRun *r, int fused, int warmup, int reps, GgTiming *tm, GgTiming step[GG_MOE_STEPS],
                GgTelemetry *steps_power) {
    Ctx c = {r, fused};
    if (gg_time(forward, &c, warmup, reps, 1, tm)) return GG_EXIT_CHECK;
    /* The breakdown: the same protocol, events between the steps, each step's median and spread. */
    return gg_moe_time_steps(forward_marked, &c, "forward", GG_MOE_STEPS, r->layer.s.tokens, reps, step,
                             steps_power);
}

uint64_t gg_fnv1a64(const void *data, size_t bytes) {
    uint64_t h = 14695981039346656037ull; /* FNV's 64-bit offset basis and prime */
    for (size_t i = 0; i < bytes; ++i) h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
    return h;
}

/* ---- graph replay ---- */

int gg_moe_graph_replay_check(GgMoeRun *r, int fused, unsigned long long seed2, GgMoeCheck *first,
                              GgMoeCheck *second) {
    cudaStream_t st = r->layer.stream;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (gg_moe_poison(r)) return GG_EXIT_CHECK;
    GG_CUDA(cudaStreamSynchronize(st));
    GG_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const cudaError_t fe = k4_moe_forward(&r->layer, fused, NULL);
    const cudaError_t ce = cudaStreamEndCapture(st, &graph);
    if (fe != cudaSuccess || ce != cudaSuccess) {
        gg_error_set("capturing the layer in a graph failed: %s", cudaGetErrorString(fe != cudaSuccess ? fe : ce));
        if (graph) cudaGraphDestroy(graph);
        return GG_EXIT_CHECK;
    }
    int rc = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess ? GG_EXIT_OK : GG_EXIT_CHECK;
    if (rc) gg_error_set("cudaGraphInstantiate failed for the layer");
    if (!rc && cudaGraphLaunch(exec, st) != cudaSuccess) rc = GG_EXIT_CHECK;
    if (!rc) rc = gg_moe_check(r, 0, first);
    /* New X: new routing, new rows per expert; the same graph. */
    if (!rc) rc = gg_moe_fill_x(r, seed2) || gg_moe_poison(r);
    if (!rc && cudaGraphLaunch(exec, st) != cudaSuccess) rc = GG_EXIT_CHECK;
    if (!rc) rc = gg_moe_check(r, 0, second);
    if (rc && !*gg_error()) gg_error_set("graph launch failed");
    if (exec) cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return rc;
}
