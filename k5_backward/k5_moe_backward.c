/* k5_moe_backward: the layer backward's host side (C11). The steps of k5_moe_backward.h on the
 * layer's stream; the four expert GEMMs and the router's two through k5_dgrad and k5_wgrad_m256_dyn's
 * launchers, every size known from the shape, so nothing here waits for the GPU. */
#include <math.h>
#include <stdio.h>

#include "common/gg_wgrad.h"
#include "k5_backward.h"
#include "k5_moe_backward.h"
#include "k4_moe/k4_host.h"

_Static_assert((int)K5_MOE_BWD_STEPS == (int)GG_MOE_STEPS, "one backward step per forward step");
const GgMoeStep k5_moe_bwd_step_of[K5_MOE_BWD_STEPS] = {GG_MOE_COMBINE, GG_MOE_GEMM2, GG_MOE_GEMM1, GG_MOE_ROUTE,
                                                        GG_MOE_PERMUTE};

int k5_moe_backward_can_implement(const GgMoeShape *s, char *why, size_t len) {
    if (!k4_moe_can_implement(s, why, len)) return 0;
    if (s->experts > K5_WGRAD_MAX_EXPERTS) {
        snprintf(why, len, "k5_moe_backward needs experts <= %d (k5_wgrad's table) (experts = %d)",
                 K5_WGRAD_MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

/* The layer's wgrad configuration: 256-row tiles on the dynamic deal, the fastest of the
 * registered wgrad configurations on four model shapes and the worklog's cases in one H200
 * sweep (k5_backward/TRIALS.md, the `k5-dyn2-*` blocks). Its tile comes from its own registry row. */
static cudaError_t (*const wgrad_launch)(const GgLaunch *) = k5_wgrad_m256_dyn_launch;
cudaError_t k5_moe_wgrad_info(GgKernelInfo *info) { return k5_wgrad_m256_dyn_info(info); } /* constants: no error */

/* The launch description of each wgrad (experts, reduction rows, k, n), as k5_moe_backward
 * issues them, and its work list's parameters (gg_wgrad.h's rule, as the kernel asks it), for
 * the sizes: the tiles' order, which L2 picks, changes none. */
static GgWgradParams wgrad_params(const GgMoeShape *s, int num_sms, K5MoeWgrad which) {
    GgKernelInfo info = {0};
    k5_moe_wgrad_info(&info);
    const int rows = s->tokens * s->topk;
    const int experts = which == K5_MOE_WGRAD_DWR ? 1 : s->experts, m = which == K5_MOE_WGRAD_DWR ? s->tokens : rows;
    const int k = which == K5_MOE_WGRAD_DW2 ? s->f : s->d;
    const int n = which == K5_MOE_WGRAD_DW2 ? s->d : which == K5_MOE_WGRAD_DW1 ? 2 * s->f : k4_router_n(s->experts);
    return gg_wgrad_params(experts, m, k, n, info.block_m, info.block_n, num_sms, 0);
}

enum { WS_DW, WS_DY, WS_DH, WS_DU, WS_DLOGITS, WS_DX_ROUTER, WS_DWR_PADDED, WS_ROUTER_OFFSETS, WS_DGRAD, WS_WGRAD,
       BUFS = WS_WGRAD + K5_MOE_WGRADS };
/* Bytes of each buffer; tickets[i]: the ticket bytes at the start of wgrad launch i's slice. */
static void sizes(const GgMoeShape *s, int num_sms, size_t bytes[BUFS], size_t tickets[K5_MOE_WGRADS]) {
    const size_t t = (size_t)s->tokens, r = t * s->topk, d = (size_t)s->d, f = (size_t)s->f;
    const size_t np = (size_t)k4_router_n(s->experts);
    bytes[WS_DW] = 4 * r;
    bytes[WS_DY] = 2 * r * d;
    bytes[WS_DH] = 2 * r * f;
    bytes[WS_DU] = 2 * r * 2 * f;
    bytes[WS_DLOGITS] = 2 * t * np;
    bytes[WS_DX_ROUTER] = 2 * t * d;
    bytes[WS_DWR_PADDED] = 2 * d * np;
    bytes[WS_ROUTER_OFFSETS] = 2 * 4;
    bytes[WS_DGRAD] = k5_dgrad_workspace_bytes(&(GgLaunch){.num_sms = num_sms}); /* sized by the SMs alone */
    for (int i = 0; i < K5_MOE_WGRADS; ++i) { /* a slice each, with rows or not: the deal's counters */
        const GgWgradParams p = wgrad_params(s, num_sms, (K5MoeWgrad)i);
        bytes[WS_WGRAD + i] = (size_t)gg_wgrad_workspace_bytes(&p);
        tickets[i] = (size_t)gg_wgrad_ticket_bytes(&p);
    }
}

cudaError_t k5_moe_backward_workspace_bytes(const GgMoeShape *s, int num_sms, size_t *bytes) {
    if (num_sms <= 0) return cudaErrorInvalidValue;
    size_t b[BUFS], tickets[K5_MOE_WGRADS];
    sizes(s, num_sms, b, tickets);
    *bytes = k4_carve(NULL, b, BUFS, NULL);
    return cudaSuccess;
}

cudaError_t k5_moe_backward_workspace(void *base, const GgMoeShape *s, int num_sms, K5MoeBackwardWorkspace *ws) {
    if (num_sms <= 0) return cudaErrorInvalidValue;
    size_t b[BUFS], tickets[K5_MOE_WGRADS];
    void *slot[BUFS];
    sizes(s, num_sms, b, tickets);
    k4_carve(base, b, BUFS, slot);
    ws->dw = slot[WS_DW];
    ws->dy = slot[WS_DY];
    ws->dh = slot[WS_DH];
    ws->du = slot[WS_DU];
    ws->dlogits = slot[WS_DLOGITS];
    ws->dx_router = slot[WS_DX_ROUTER];
    ws->dwr_padded = slot[WS_DWR_PADDED];
    ws->router_offsets = slot[WS_ROUTER_OFFSETS];
    ws->dgrad = slot[WS_DGRAD];
    for (int i = 0; i < K5_MOE_WGRADS; ++i) ws->wgrad[i] = slot[WS_WGRAD + i];
    return cudaSuccess;
}

cudaError_t k5_moe_backward_step_scratch(const GgMoeShape *s, int num_sms, const K5MoeBackwardWorkspace *ws,
                                         void *ptr[K5_MOE_STEP_SCRATCH], size_t bytes[K5_MOE_STEP_SCRATCH]) {
    if (num_sms <= 0) return cudaErrorInvalidValue;
    _Static_assert(WS_DX_ROUTER + 1 == K5_MOE_STEP_SCRATCH, "the step scratch is sizes()' first buffers");
    size_t b[BUFS], tickets[K5_MOE_WGRADS];
    sizes(s, num_sms, b, tickets);
    void *const p[K5_MOE_STEP_SCRATCH] = {ws->dw, ws->dy, ws->dh, ws->du, ws->dlogits, ws->dx_router};
    for (int i = 0; i < K5_MOE_STEP_SCRATCH; ++i) {
        ptr[i] = p[i];
        bytes[i] = b[i];
    }
    return cudaSuccess;
}

cudaError_t k5_moe_backward_setup(const K5MoeBackward *b) {
    if (b->layer->num_sms <= 0) return cudaErrorInvalidValue; /* the workspace was sized for a count */
    size_t bytes[BUFS], tickets[K5_MOE_WGRADS];
    sizes(&b->layer->s, b->layer->num_sms, bytes, tickets);
    for (int i = 0; i < K5_MOE_WGRADS; ++i) { /* every launch has a slice: the deal's counters */
        cudaError_t e = cudaMemsetAsync(b->ws.wgrad[i], 0, tickets[i], b->layer->stream);
        if (e != cudaSuccess) return e;
    }
    return bytes[WS_DGRAD] ? cudaMemsetAsync(b->ws.dgrad, 0, bytes[WS_DGRAD], b->layer->stream) : cudaSuccess;
}

/* One k5 launch: a, b, c as GgPass says for the configuration's pass; workspace: a wgrad's slice,
 * or dgrad's. */
static cudaError_t k5_gemm(const K5MoeBackward *b, GgPass pass, void *workspace, const uint16_t *a,
                           const uint16_t *bb, uint16_t *c, int rows, int experts, int k, int n, const int *offsets) {
    GgLaunch g = {0};
    g.a = a;
    g.b = bb;
    g.c = c;
    g.pass = pass;
    g.workspace = workspace;
    g.tokens = rows;
    g.experts = experts;
    g.k = k;
    g.n = n;
    g.row_offsets = offsets;
    g.num_sms = b->layer->num_sms;
    g.stream = b->layer->stream;
    return pass == GG_PASS_WGRAD ? wgrad_launch(&g) : k5_dgrad_launch(&g);
}

cudaError_t k5_moe_backward(const K5MoeBackward *b, cudaEvent_t *marks) {
    const GgMoeLayer *l = b->layer;
    const GgMoeShape *s = &l->s;
    const GgMoeWorkspace *f = &l->ws;
    const K5MoeBackwardWorkspace *w = &b->ws;
    const K5MoeGrads *g = &b->grads;
    const int T = s->tokens, R = s->tokens * s->topk, E = s->experts, d = s->d, F = s->f;
    const int np = k4_router_n(E);
    if (l->num_sms <= 0) return cudaErrorInvalidValue; /* k5_wgrad would size its split for another grid */
    if (T == 0) { /* no rows: dX is empty and every weight gradient an empty sum, zeros */
        STEP(cudaMemsetAsync(g->dw1, 0, 2 * (size_t)E * d * 2 * F, l->stream));
        STEP(cudaMemsetAsync(g->dw2, 0, 2 * (size_t)E * F * d, l->stream));
        return cudaMemsetAsync(g->dwr, 0, 2 * (size_t)d * E, l->stream);
    }
    if (!f->xg || !f->u) return cudaErrorInvalidValue; /* needs the unfused forward's Xg and U */
    MARK(K5_MOE_BWD_COMBINE);
    STEP(k5_moe_combine_backward(b->dout, f->y, f->row_of, f->topk_weight, T, s->topk, d, w->dw, w->dy, l->stream));
    MARK(K5_MOE_BWD_GEMM2);
    STEP(k5_gemm(b, GG_PASS_DGRAD, w->dgrad, w->dy, l->w2, w->dh, R, E, F, d, f->row_offsets)); /* dH = dY W2^T */
    STEP(k5_gemm(b, GG_PASS_WGRAD, w->wgrad[K5_MOE_WGRAD_DW2], f->h, w->dy, g->dw2, R, E, F, d, /* dW2 = H^T dY */
                 f->row_offsets));
    MARK(K5_MOE_BWD_GEMM1);
    STEP(k5_moe_swiglu_backward(f->u, w->dh, R, F, w->du, l->stream));
    uint16_t *dxg = w->dy; /* dY is dead: dXg takes its place */
    STEP(k5_gemm(b, GG_PASS_DGRAD, w->dgrad, w->du, l->w1, dxg, R, E, d, 2 * F, f->row_offsets)); /* dXg = dU W1^T */
    STEP(k5_gemm(b, GG_PASS_WGRAD, w->wgrad[K5_MOE_WGRAD_DW1], f->xg, w->du, g->dw1, R, E, d, 2 * F, /* dW1 = Xg^T dU */
                 f->row_offsets));
    MARK(K5_MOE_BWD_ROUTE);
    STEP(k5_moe_router_backward(f->logits, f->topk_expert, f->topk_weight, w->dw, T, E, s->topk, s->renorm,
                                w->dlogits, w->router_offsets, l->stream));
    /* The router as one expert of T rows, on the padded width (k4_router_n: 16- or 128-byte rows;
     * the pad columns of dlogits and Wr_padded are zero, so they add nothing, and dWr's are not
     * copied out). */
    STEP(k5_gemm(b, GG_PASS_WGRAD, w->wgrad[K5_MOE_WGRAD_DWR], l->x, w->dlogits, w->dwr_padded, T, 1, d, np,
                 w->router_offsets));
    STEP(k5_gemm(b, GG_PASS_DGRAD, w->dgrad, w->dlogits, l->wr_padded, w->dx_router, T, 1, d, np, w->router_offsets));
    STEP(cudaMemcpy2DAsync(g->dwr, 2 * (size_t)E, w->dwr_padded, 2 * (size_t)np, 2 * (size_t)E, (size_t)d,
                           cudaMemcpyDeviceToDevice, l->stream));
    MARK(K5_MOE_BWD_PERMUTE);
    STEP(k5_moe_gather_sum(dxg, f->row_of, w->dx_router, T, s->topk, d, g->dx, l->stream));
    MARK(K5_MOE_BWD_STEPS);
    return cudaSuccess;
}
#undef MARK
#undef STEP

void k5_moe_router_grad_token(const float *z, int experts, const int *chosen, const float *w, const float *dw,
                              int topk, int renorm, double *dz) {
    double c = 0, top = -INFINITY, sum = 0;
    for (int s = 0; s < topk; ++s) c += (double)dw[s] * w[s];
    for (int e = 0; e < experts; ++e) top = fmax(top, k5_router_logit(z[e]));
    for (int e = 0; e < experts; ++e) sum += exp(k5_router_logit(z[e]) - top);
    /* pass 1: every logit as if not chosen; pass 2: the chosen ones */
    for (int e = 0; e < experts; ++e) dz[e] = renorm ? 0.0 : exp(k5_router_logit(z[e]) - top) / sum * (0.0 - c);
    for (int s = 0; s < topk; ++s) dz[chosen[s]] = (double)w[s] * (dw[s] - c);
}

/* ---- the floor ---- */

/* The six GEMMs, FLOPs and compulsory bytes (bf16, 2 bytes an element; min(R, E) experts'
 * weights read or written once, as k4_moe's floor counts them):
 *   router wgrad dWr = X^T dlogits, router dgrad dX_r = dlogits Wr^T,
 *   GEMM2 dgrad dH = dY W2^T, GEMM2 wgrad dW2 = H^T dY,
 *   GEMM1 dgrad dXg = dU W1^T, GEMM1 wgrad dW1 = Xg^T dU. */
enum { GEMMS = 6 };
static void gemms(const GgMoeShape *s, double flops[GEMMS], double bytes[GEMMS]) {
    const double t = s->tokens, r = (double)s->tokens * s->topk, d = s->d, f = s->f, e = s->experts;
    const double active = r < e ? r : e;
    flops[0] = flops[1] = 2 * t * d * e;
    bytes[0] = 2 * (t * d + t * e + d * e);
    bytes[1] = 2 * (t * e + d * e + t * d);
    flops[2] = flops[3] = 2 * r * f * d;
    bytes[2] = 2 * (r * d + active * f * d + r * f);
    bytes[3] = 2 * (r * f + r * d + active * f * d);
    flops[4] = flops[5] = 2 * r * d * 2 * f;
    bytes[4] = 2 * (r * 2 * f + active * d * 2 * f + r * d);
    bytes[5] = 2 * (r * d + r * 2 * f + active * d * 2 * f);
}

double k5_moe_backward_gemm_flops(const GgMoeShape *s) {
    double flops[GEMMS], bytes[GEMMS], sum = 0;
    gemms(s, flops, bytes);
    for (int i = 0; i < GEMMS; ++i) sum += flops[i];
    return sum;
}

double k5_moe_backward_floor_us(const GgMoeShape *s, double gemm_tflops, double bw_gbps) {
    double flops[GEMMS], bytes[GEMMS], sum = 0;
    gemms(s, flops, bytes);
    for (int i = 0; i < GEMMS; ++i) sum += k4_gemm_floor_s(flops[i], bytes[i], gemm_tflops, bw_gbps);
    return sum * 1e6;
}
