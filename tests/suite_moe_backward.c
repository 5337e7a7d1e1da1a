/* The layer backward's host side on the CPU (k5_backward/k5_moe_backward.h): the router's
 * gradient and SwiGLU's against finite differences, the fp64 references' routed-row forward, the combine's scatter and the gather-sum as
 * the adjoints of the forward's combine and gather on a routing built like k4_permute's, the
 * workspace carving, what can_implement refuses, the FLOPs and the floor. (The kernels and the
 * layer's check: tests/test_gpu.c, case moe_backward.) */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/gg_wgrad.h"
#include "gg_moe.h"
#include "k5_backward/k5_backward.h"
#include "k5_backward/k5_moe_backward.h"

static double uniform(unsigned *state) { /* [-1, 1), a small LCG: the same numbers everywhere */
    *state = *state * 1664525u + 1013904223u;
    return (*state >> 8) / (double)(1u << 23) - 1.0;
}

/* The routing weights of chosen experts at logits z, the choice held fixed: raw softmax or
 * renormalised over the chosen, in double. */
static void weights(const double *z, int experts, const int *chosen, int topk, int renorm, double *w) {
    double top = -INFINITY, sum = 0, chosen_sum = 0;
    for (int e = 0; e < experts; ++e) top = fmax(top, z[e]);
    for (int e = 0; e < experts; ++e) sum += exp(z[e] - top);
    for (int s = 0; s < topk; ++s) chosen_sum += (w[s] = exp(z[chosen[s]] - top) / sum);
    if (renorm)
        for (int s = 0; s < topk; ++s) w[s] /= chosen_sum;
}

/* dLoss/dz with Loss = sum_s dw_s w_s(z): k5_moe_router_grad_token against central differences
 * of the forward, for raw and renormalised weights, top-1 to top-E; an expert not chosen gets
 * -p_j c raw and exactly 0 renormalised. */
START_TEST(router_grad_matches_finite_differences) {
    static const int shapes[][2] = {{1, 1}, {2, 1}, {5, 2}, {8, 2}, {8, 8}, {64, 8}, {128, 4}};
    unsigned st = 7;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int renorm = 0; renorm <= 1; ++renorm) {
            const int E = shapes[i][0], K = shapes[i][1];
            double z[128], zp[128], w[128], wp[128], wm[128], dz[128];
            float zf[128], wf[128], dwf[128];
            int chosen[128], taken[128] = {0};
            for (int e = 0; e < E; ++e) zf[e] = (float)(2 * uniform(&st)), z[e] = zf[e];
            for (int s = 0; s < K; ++s) { /* top-k, ties to the lower expert */
                int best = -1;
                for (int e = 0; e < E; ++e)
                    if (!taken[e] && (best < 0 || z[e] > z[best])) best = e;
                taken[best] = 1;
                chosen[s] = best;
                dwf[s] = (float)uniform(&st);
            }
            weights(z, E, chosen, K, renorm, w);
            for (int s = 0; s < K; ++s) wf[s] = (float)w[s];
            k5_moe_router_grad_token(zf, E, chosen, wf, dwf, K, renorm, dz);
            const double h = 1e-5;
            for (int j = 0; j < E; ++j) {
                memcpy(zp, z, sizeof z);
                zp[j] = z[j] + h;
                weights(zp, E, chosen, K, renorm, wp);
                zp[j] = z[j] - h;
                weights(zp, E, chosen, K, renorm, wm);
                double fd = 0;
                for (int s = 0; s < K; ++s) fd += dwf[s] * (wp[s] - wm[s]) / (2 * h);
                ck_assert_msg(fabs(dz[j] - fd) <= 1e-6 + 1e-5 * fabs(fd), "E=%d k=%d renorm=%d: dz[%d] = %.9g, FD %.9g",
                              E, K, renorm, j, dz[j], fd);
                if (renorm && !taken[j]) ck_assert(dz[j] == 0.0);
            }
        }
}
END_TEST

/* A NaN logit, which the forward's route takes as -inf (never chosen, no weight): the gradient
 * is the one at -inf there, bit for bit, finite everywhere, 0 at the NaN expert; raw and
 * renormalised, the NaN first, last and among the others. */
START_TEST(router_grad_nan_logit_as_minus_infinity) {
    enum { E = 8, K = 2 };
    static const int nan_at[] = {0, 3, 7};
    const int chosen[K] = {5, 1};
    const float w[K] = {0.375f, 0.25f}, dw[K] = {0.5f, -1.25f};
    for (size_t i = 0; i < sizeof nan_at / sizeof nan_at[0]; ++i)
        for (int renorm = 0; renorm <= 1; ++renorm) {
            float z[E] = {0.25f, 1.5f, -0.5f, 0.75f, -2.0f, 2.0f, 0.125f, -1.0f}, zinf[E];
            double dz[E], dz_inf[E];
            memcpy(zinf, z, sizeof z);
            z[nan_at[i]] = NAN;
            zinf[nan_at[i]] = -INFINITY;
            k5_moe_router_grad_token(z, E, chosen, w, dw, K, renorm, dz);
            k5_moe_router_grad_token(zinf, E, chosen, w, dw, K, renorm, dz_inf);
            for (int e = 0; e < E; ++e) {
                ck_assert_msg(isfinite(dz[e]) && dz[e] == dz_inf[e], "NaN at %d, renorm %d: dz[%d] = %g, at -inf %g",
                              nan_at[i], renorm, e, dz[e], dz_inf[e]);
                if (e == nan_at[i]) ck_assert(dz[e] == 0.0);
            }
            ck_assert(k5_router_logit(NAN) == -INFINITY && k5_router_logit(1.5f) == 1.5f);
        }
}
END_TEST

/* SwiGLU h = silu(g) u: k5_swiglu_grad's dg and du against central differences in double, over
 * the gates a layer sees (silu' crosses zero near g = -1.28). */
START_TEST(swiglu_grad_matches_finite_differences) {
    for (double g = -8; g <= 8; g += 0.0625)
        for (double u = -2; u <= 2; u += 0.75) {
            const double h = 1e-6, dh = 0.625;
            float dg, du;
            k5_swiglu_grad((float)g, (float)u, (float)dh, &dg, &du);
#define SWIGLU(G, U) ((G) / (1 + exp(-(G))) * (U))
            const double fd_g = dh * (SWIGLU(g + h, u) - SWIGLU(g - h, u)) / (2 * h);
            const double fd_u = dh * (SWIGLU(g, u + h) - SWIGLU(g, u - h)) / (2 * h);
#undef SWIGLU
            ck_assert_msg(fabs(dg - fd_g) <= 1e-5 + 1e-5 * fabs(fd_g), "g=%g u=%g: dg %.9g, FD %.9g", g, u, dg, fd_g);
            ck_assert_msg(fabs(du - fd_u) <= 1e-5 + 1e-5 * fabs(fd_u), "g=%g u=%g: du %.9g, FD %.9g", g, u, du, fd_u);
        }
}
END_TEST

/* The fp64 references' routed-row forward (gg_moe_row_forward64): U = x W1_e with W1_e's gate
 * columns first, H = silu(gate) up rounded to bf16 (H is what both references multiply by W2 and
 * differentiate through), on values a bf16 holds exactly. */
START_TEST(row_forward64_gemm1_and_rounded_swiglu) {
    enum { D = 2, F = 2 };
    const float xs[D] = {1, 2}, w1s[D][2 * F] = {{0.5f, 0, 1, 3}, {0.25f, -1, -1, 0.5f}};
    uint16_t x[D], w1[D * 2 * F];
    for (int q = 0; q < D; ++q) {
        x[q] = gg_f32_to_bf16(xs[q]);
        for (int c = 0; c < 2 * F; ++c) w1[q * 2 * F + c] = gg_f32_to_bf16(w1s[q][c]);
    }
    double u[2 * F], h[F];
    gg_moe_row_forward64(x, w1, D, F, u, h);
    const double want_u[2 * F] = {1, -2, -1, 4};
    for (int c = 0; c < 2 * F; ++c) ck_assert_double_eq(u[c], want_u[c]);
    for (int c = 0; c < F; ++c) {
        const double exact = u[c] / (1 + exp(-u[c])) * u[F + c];
        ck_assert_double_eq(h[c], gg_bf16_to_f32(gg_f32_to_bf16((float)exact)));  /* a bf16 value */
        ck_assert(fabs(h[c] - exact) <= ldexp(fabs(exact), -8));                 /* within half a step */
        ck_assert(h[c] != exact);                                               /* and rounded */
    }
}
END_TEST

/* The index arithmetic of the combine's scatter and the gather-sum, on routings built as
 * k4_permute builds them (each expert's rows in (token, slot) order): src_token[row_of(t, s)] = t;
 * the scatter dY[r] = w dOut[t] and dw = <dOut, Y[r]> are the adjoint of the combine
 * (<dOut, combine(Y, w)> = <dY, Y> = sum dw w), and the gather-sum is the adjoint of the gather
 * (<dXg, gather(X)> = <gathersum(dXg), X>), with empty and 1-row experts among them. */
START_TEST(scatter_and_gather_sum_are_the_adjoints) {
    static const int shapes[][4] = {{7, 16, 3, 8}, {33, 8, 5, 16}, {1, 1, 1, 8}, {20, 4, 4, 8}, {50, 64, 2, 24}};
    unsigned st = 11;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const int T = shapes[i][0], E = shapes[i][1], K = shapes[i][2], d = shapes[i][3], R = T * K;
        int *expert = malloc(sizeof(int) * R), *row_of = malloc(sizeof(int) * R), *src = malloc(sizeof(int) * R),
            *next = calloc((size_t)E + 1, sizeof(int));
        double *w = malloc(sizeof(double) * R), *dout = malloc(sizeof(double) * T * d),
               *y = malloc(sizeof(double) * R * d), *dy = malloc(sizeof(double) * R * d),
               *x = malloc(sizeof(double) * T * d), *dx = calloc((size_t)T * d, sizeof(double));
        for (int t = 0; t < T; ++t) /* k distinct experts a token, skewed to the low ones */
            for (int s = 0; s < K; ++s) {
                int e;
                do {
                    e = (int)((uniform(&st) + 1) * (uniform(&st) + 1) / 4 * E) % E;
                    for (int q = 0; q < s; ++q)
                        if (expert[t * K + q] == e) e = -1;
                } while (e < 0);
                expert[t * K + s] = e;
                w[t * K + s] = uniform(&st);
            }
        for (int a = 0; a < R; ++a) next[expert[a] + 1]++;
        for (int e = 0; e < E; ++e) next[e + 1] += next[e];
        for (int a = 0; a < R; ++a) src[row_of[a] = next[expert[a]]++] = a / K;
        for (int a = 0; a < R; ++a) ck_assert_int_eq(src[row_of[a]], a / K);
        for (int i2 = 0; i2 < T * d; ++i2) dout[i2] = uniform(&st), x[i2] = uniform(&st);
        for (int i2 = 0; i2 < R * d; ++i2) y[i2] = uniform(&st);
        double lhs = 0, rhs_dy = 0, rhs_dw = 0, gather = 0, scatter = 0;
        for (int t = 0; t < T; ++t)
            for (int s = 0; s < K; ++s) {
                const int a = t * K + s, r = row_of[a];
                double dw = 0;
                for (int c = 0; c < d; ++c) {
                    lhs += dout[t * d + c] * w[a] * y[r * d + c]; /* <dOut, combine(Y)> */
                    dy[r * d + c] = w[a] * dout[t * d + c];        /* the scatter */
                    dw += dout[t * d + c] * y[r * d + c];
                }
                rhs_dw += dw * w[a];
            }
        for (int i2 = 0; i2 < R * d; ++i2) rhs_dy += dy[i2] * y[i2];
        for (int t = 0; t < T; ++t) /* gather-sum of dXg := dy */
            for (int s = 0; s < K; ++s)
                for (int c = 0; c < d; ++c) dx[t * d + c] += dy[row_of[t * K + s] * d + c];
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < d; ++c) gather += dy[r * d + c] * x[src[r] * d + c];
        for (int i2 = 0; i2 < T * d; ++i2) scatter += dx[i2] * x[i2];
        ck_assert_msg(fabs(lhs - rhs_dy) <= 1e-9 * (1 + fabs(lhs)), "combine adjoint: %.12g vs %.12g", lhs, rhs_dy);
        ck_assert_msg(fabs(lhs - rhs_dw) <= 1e-9 * (1 + fabs(lhs)), "dw: %.12g vs %.12g", lhs, rhs_dw);
        ck_assert_msg(fabs(gather - scatter) <= 1e-9 * (1 + fabs(gather)), "gather adjoint: %.12g vs %.12g", gather,
                      scatter);
        free(expert), free(row_of), free(src), free(next), free(w), free(dout), free(y), free(dy), free(x), free(dx);
    }
}
END_TEST

/* The work-list parameters of the backward's three wgrad launches, from their descriptions in
 * k5_moe_backward.c (experts, reduction rows, k, n), written out again here, on the layer's
 * wgrad configuration's tile. */
static void wgrad_launches(const GgMoeShape *s, int num_sms, GgWgradParams p[K5_MOE_WGRADS]) {
    const int r = s->tokens * s->topk;
    GgKernelInfo w = {0};
    ck_assert_int_eq(k5_moe_wgrad_info(&w), cudaSuccess); /* the layer's wgrad configuration's tile */
    p[K5_MOE_WGRAD_DW2] = gg_wgrad_params(s->experts, r, s->f, s->d, w.block_m, w.block_n, num_sms, 0);
    p[K5_MOE_WGRAD_DW1] = gg_wgrad_params(s->experts, r, s->d, 2 * s->f, w.block_m, w.block_n, num_sms, 0);
    p[K5_MOE_WGRAD_DWR] = gg_wgrad_params(1, s->tokens, s->d, k4_router_n(s->experts), w.block_m, w.block_n, num_sms, 0);
}

/* Layers whose wgrad launches split (long experts beside few output tiles): the one that showed
 * the shared scratch's fault (a launch's tickets on another's partials), and more. */
static const GgMoeShape splitting[] = {
    {100000, 128, 128, 8, 2, 1}, {20000, 128, 128, 8, 2, 0}, {50000, 256, 192, 4, 1, 1}, {4096, 64, 64, 1, 1, 1}};
static const int sm_counts[] = {132, 16}; /* the chunk rule, and so the split, depends on the grid */

/* The carving: every buffer 256-byte aligned, inside the bytes, disjoint, each wgrad launch's
 * slice as large as that launch asks (gg_wgrad.h; never empty: the deal's counters), the
 * steps' scratch (k5_moe_backward_step_scratch) its first six buffers; for the
 * models at T = 4096 and for the splitting layers, on 132 and on 16 SMs. */
START_TEST(workspace_disjoint_aligned_inside) {
    const int models = gg_moe_model_count, count = models + (int)(sizeof splitting / sizeof splitting[0]);
    for (int m = 0; m < count; ++m)
        for (int g = 0; g < 2; ++g) {
            const int sms = sm_counts[g];
            const GgMoeModel *md = m < models ? &gg_moe_models[m] : NULL;
            const GgMoeShape s = md ? (GgMoeShape){4096, md->d, md->f, md->experts, md->topk, md->renorm}
                                    : splitting[m - models];
            size_t bytes = 0;
            ck_assert_int_eq(k5_moe_backward_workspace_bytes(&s, sms, &bytes), cudaSuccess);
            K5MoeBackwardWorkspace ws;
            char *base = (char *)(uintptr_t)4096;
            ck_assert_int_eq(k5_moe_backward_workspace(base, &s, sms, &ws), cudaSuccess);
            const size_t t = (size_t)s.tokens, r = t * s.topk, np = (size_t)k4_router_n(s.experts);
            GgWgradParams p[K5_MOE_WGRADS];
            wgrad_launches(&s, sms, p);
            const struct {
                void *p;
                size_t n;
            } b[] = {{ws.dw, 4 * r},
                     {ws.dy, 2 * r * s.d},
                     {ws.dh, 2 * r * s.f},
                     {ws.du, 4 * r * s.f},
                     {ws.dlogits, 2 * t * np},
                     {ws.dx_router, 2 * t * s.d},
                     {ws.dwr_padded, 2 * np * s.d},
                     {ws.router_offsets, 8},
                     {ws.wgrad[K5_MOE_WGRAD_DW2], (size_t)gg_wgrad_workspace_bytes(&p[K5_MOE_WGRAD_DW2])},
                     {ws.wgrad[K5_MOE_WGRAD_DW1], (size_t)gg_wgrad_workspace_bytes(&p[K5_MOE_WGRAD_DW1])},
                     {ws.wgrad[K5_MOE_WGRAD_DWR], (size_t)gg_wgrad_workspace_bytes(&p[K5_MOE_WGRAD_DWR])}};
            const int nb = (int)(sizeof b / sizeof b[0]);
            for (int i = 0; i < nb; ++i) {
                const char *q = b[i].p;
                ck_assert_ptr_nonnull(q);
                ck_assert_int_eq((uintptr_t)q % 256, 0);
                ck_assert(q >= base && q + b[i].n <= base + bytes);
                for (int j = 0; j < i; ++j)
                    if (b[j].n) ck_assert((const char *)b[j].p + b[j].n <= q || q + b[i].n <= (const char *)b[j].p);
            }
            /* the steps' scratch, as the check poisons it: the first six buffers above */
            void *scratch[K5_MOE_STEP_SCRATCH];
            size_t scratch_bytes[K5_MOE_STEP_SCRATCH];
            ck_assert_int_eq(k5_moe_backward_step_scratch(&s, sms, &ws, scratch, scratch_bytes), cudaSuccess);
            for (int i = 0; i < K5_MOE_STEP_SCRATCH; ++i) {
                ck_assert_ptr_eq(scratch[i], b[i].p);
                ck_assert_uint_eq(scratch_bytes[i], b[i].n);
            }
        }
}
END_TEST

/* The three wgrad launches run in turn on one stream, each leaving its own tickets at zero and its
 * partials as they are: so no launch's ticket range may overlap any byte another launch writes
 * (its tickets or partials). On the splitting layers (which must split: dW1 and dW2 both). */
START_TEST(wgrad_tickets_apart_from_other_launches) {
    for (size_t m = 0; m < sizeof splitting / sizeof splitting[0]; ++m)
        for (int g = 0; g < 2; ++g) {
            const int sms = sm_counts[g];
            const GgMoeShape *s = &splitting[m];
            K5MoeBackwardWorkspace ws;
            char *base = (char *)(uintptr_t)4096;
            ck_assert_int_eq(k5_moe_backward_workspace(base, s, sms, &ws), cudaSuccess);
            GgWgradParams p[K5_MOE_WGRADS];
            wgrad_launches(s, sms, p);
            ck_assert_msg(gg_wgrad_max_slots(&p[K5_MOE_WGRAD_DW1]) > 0 && gg_wgrad_max_slots(&p[K5_MOE_WGRAD_DW2]) > 0,
                          "layer %zu on %d SMs does not split", m, sms);
            for (int i = 0; i < K5_MOE_WGRADS; ++i) {
                const char *tickets = ws.wgrad[i];
                const long ticket_bytes = gg_wgrad_ticket_bytes(&p[i]);
                ck_assert_ptr_nonnull(tickets);
                for (int j = 0; j < K5_MOE_WGRADS; ++j) {
                    const char *other = ws.wgrad[j];
                    const long other_bytes = gg_wgrad_workspace_bytes(&p[j]);
                    if (j == i || !other_bytes) continue;
                    ck_assert_msg(other + other_bytes <= tickets || tickets + ticket_bytes <= other,
                                  "layer %zu, %d SMs: launch %d's tickets overlap launch %d's scratch", m, sms, i, j);
                }
            }
        }
}
END_TEST

/* The workspace's size depends on the SM count (k5_wgrad's chunk rule): without one (<= 0, which
 * a launch would read as this GPU's count) the sizing, the carving, the setup and the backward
 * refuse with cudaErrorInvalidValue before touching the GPU. */
START_TEST(workspace_needs_an_sm_count) {
    const GgMoeShape s = {100000, 128, 128, 8, 2, 1};
    for (int sms = 0; sms >= -1; --sms) {
        size_t bytes = 12345;
        K5MoeBackwardWorkspace ws;
        ck_assert_int_eq(k5_moe_backward_workspace_bytes(&s, sms, &bytes), cudaErrorInvalidValue);
        ck_assert_uint_eq(bytes, 12345); /* left alone */
        ck_assert_int_eq(k5_moe_backward_workspace((void *)(uintptr_t)4096, &s, sms, &ws), cudaErrorInvalidValue);
        GgMoeLayer layer;
        memset(&layer, 0, sizeof layer);
        layer.s = s;
        layer.num_sms = sms;
        K5MoeBackward b;
        memset(&b, 0, sizeof b);
        b.layer = &layer;
        ck_assert_int_eq(k5_moe_backward_setup(&b), cudaErrorInvalidValue);
        ck_assert_int_eq(k5_moe_backward(&b, NULL), cudaErrorInvalidValue);
    }
}
END_TEST

START_TEST(can_implement_flops_and_floor) {
    char why[256];
    GgMoeShape s = {256, 2048, 768, 1024, 8, 1};
    ck_assert(k5_moe_backward_can_implement(&s, why, sizeof why));
    s.experts = 1025;
    ck_assert(!k5_moe_backward_can_implement(&s, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "k5_moe_backward needs experts <= 1024"));
    s.experts = 64;
    s.d = 100; /* k4's refusals come first */
    ck_assert(!k5_moe_backward_can_implement(&s, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "d % 64 == 0"));
    for (int m = 0; m < gg_moe_model_count; ++m) {
        const GgMoeModel *md = &gg_moe_models[m];
        const GgMoeShape t = {4096, md->d, md->f, md->experts, md->topk, md->renorm};
        ck_assert_msg(k5_moe_backward_can_implement(&t, why, sizeof why), "%s: %s", md->name, why);
        /* every forward product has two gradients of its size */
        ck_assert(fabs(k5_moe_backward_gemm_flops(&t) - 2 * k4_moe_gemm_flops(&t)) <= 1e-9 * k4_moe_gemm_flops(&t));
        ck_assert(k5_moe_backward_floor_us(&t, 800, 4000) > k4_moe_floor_us(&t, 800, 4000));
    }
    /* each backward step's time lands in a distinct forward column */
    int seen[GG_MOE_STEPS] = {0};
    for (int i = 0; i < K5_MOE_BWD_STEPS; ++i) ck_assert_int_eq(seen[k5_moe_bwd_step_of[i]]++, 0);
}
END_TEST

/* The check's block comparison (gg_moe_grad_compare) on a block large enough to be split over
 * threads (three at most at this size): planted failures (an unwritten NaN, an element outside the
 * fp32 reference's bound, one outside only the fp64 one's) are counted once each, the first of them
 * and its reference found, and every field is the same whether one thread, two or the default
 * number compare it, with the NaN (infinite margins) and without it (finite ones: a merge that
 * added the ranges' margins instead of taking the largest would differ). */
START_TEST(grad_compare_split_independent) {
    const size_t n = 3 * ((size_t)1 << 20) + 17, nan_at = 1500000, fp32_at = 2900000, fp64_at = n - 12;
    uint16_t *got = malloc(2 * n);
    float *ref32 = malloc(4 * n), *terms = malloc(4 * n);
    double *ref64 = malloc(8 * n);
    ck_assert(got && ref32 && terms && ref64);
    unsigned state = 7;
    for (size_t i = 0; i < n; ++i) {
        ref32[i] = (float)uniform(&state);
        ref64[i] = ref32[i] + 1e-9 * uniform(&state);
        got[i] = gg_f32_to_bf16(ref32[i]); /* within 2^-8 relative: inside the 2^-7 term */
        terms[i] = (float)(1e-6 * (1 + uniform(&state)));
    }
    const uint16_t written = got[nan_at];
    ref32[fp32_at] += 1.0f;
    ref64[fp64_at] += 1.0;
    const double atol[2] = {1e-3, 1e-3};
    for (int case_ = 0; case_ < 4; ++case_) {
        const int with64 = case_ & 1, nan = case_ >> 1;
        got[nan_at] = nan ? 0x7fc0 : written;
        GgGradCompare one;
        gg_moe_grad_compare(got, ref32, with64 ? ref64 : NULL, with64 ? terms : NULL, n, atol, 1, &one);
        ck_assert_int_eq(one.bad, 1 + with64 + nan);
        ck_assert_uint_eq(one.first_bad, nan ? nan_at : fp32_at);
        ck_assert_int_eq(one.first_ref, 0);
        ck_assert(nan ? isinf(one.margin[0]) : isfinite(one.margin[0]) && one.margin[0] > 1);
        ck_assert(!with64 ? one.margin[1] == 0 : nan ? isinf(one.margin[1]) : isfinite(one.margin[1]) && one.margin[1] > 1);
        ck_assert(one.max_err > 0.9 && one.max_err < 1.1 && one.max_ref > 0.99);
        const int threads[] = {2, 0};
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; ++k) {
            GgGradCompare split;
            gg_moe_grad_compare(got, ref32, with64 ? ref64 : NULL, with64 ? terms : NULL, n, atol, threads[k], &split);
            ck_assert_msg(split.bad == one.bad && split.first_bad == one.first_bad &&
                              split.margin[0] == one.margin[0] && split.margin[1] == one.margin[1] &&
                              split.max_ref == one.max_ref && split.max_err == one.max_err,
                          "%d threads differ from one", threads[k]);
        }
    }
    /* the fp64 reference alone failing: the first failure names it */
    GgGradCompare last;
    gg_moe_grad_compare(got + fp32_at + 1, ref32 + fp32_at + 1, ref64 + fp32_at + 1, terms + fp32_at + 1,
                        n - fp32_at - 1, atol, 0, &last);
    ck_assert(last.bad == 1 && last.first_bad == fp64_at - fp32_at - 1 && last.first_ref == 1);
    /* a block with nothing outside: no failure, first_bad = n */
    got[nan_at] = written;
    GgGradCompare clean;
    gg_moe_grad_compare(got, ref32, NULL, NULL, nan_at, atol, 0, &clean);
    ck_assert(clean.bad == 0 && clean.first_bad == nan_at && clean.margin[0] <= 1);
    free(got), free(ref32), free(terms), free(ref64);
}
END_TEST

Suite *moe_backward_suite(void) {
    Suite *s = suite_create("moe_backward");
    TCase *t = tcase_create("host");
    tcase_add_test(t, router_grad_matches_finite_differences);
    tcase_add_test(t, router_grad_nan_logit_as_minus_infinity);
    tcase_add_test(t, swiglu_grad_matches_finite_differences);
    tcase_add_test(t, row_forward64_gemm1_and_rounded_swiglu);
    tcase_add_test(t, scatter_and_gather_sum_are_the_adjoints);
    tcase_add_test(t, workspace_disjoint_aligned_inside);
    tcase_add_test(t, wgrad_tickets_apart_from_other_launches);
    tcase_add_test(t, workspace_needs_an_sm_count);
    tcase_add_test(t, can_implement_flops_and_floor);
    tcase_add_test(t, grad_compare_split_independent);
    suite_add_tcase(s, t);
    return s;
}
