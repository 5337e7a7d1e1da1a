/* k4_moe: the layer's host side (C11). It enqueues the steps of k4_moe.h on one stream; every
 * size it needs is known from the shape, and the per-expert rows reach the grouped GEMMs only
 * through device memory (row_offsets), so nothing here waits for the GPU. */
#include <stdint.h>
#include <stdio.h>

#include "k3_wgmma/k3_wgmma.h"
#include "k4_moe.h"
#include "k4_moe/k4_host.h"

const char *const gg_moe_step_names[GG_MOE_STEPS] = {"route", "permute", "gemm1", "gemm2", "combine"};
const char *const k4_gather_names[K4_GATHERS] = {"tma_warp", "tma_warpgroup", "cp_async", "cp_async_m256"};

/* Public configurations of open MoE models, the MoE FFN layer's shape only: width d, expert FFN
 * width F, routed experts, top-k, and whether the chosen weights are renormalised to sum to 1.
 * Mixtral and Qwen3 renormalise, OLMoE does not; gpt-oss takes the softmax over its top-k logits
 * (the same weights as renormalising); DeepSeek-V3 and Kimi K2 normalise their top-k gates. The
 * layer here is the same for all (softmax router, SwiGLU): gpt-oss's clamped SwiGLU, DeepSeek's
 * sigmoid gates with group-limited routing and shared experts are not modelled. */
const GgMoeModel gg_moe_models[] = {
    {"mixtral", "Mixtral-8x7B", 4096, 14336, 8, 2, 1},
    {"qwen3", "Qwen3-30B-A3B", 2048, 768, 128, 8, 1},
    {"olmoe", "OLMoE-1B-7B", 2048, 1024, 64, 8, 0},
    {"gpt-oss", "gpt-oss-120b", 2880, 2880, 128, 4, 1},
    {"qwen3-235b", "Qwen3-235B-A22B", 4096, 1536, 128, 8, 1},
    {"deepseek-v3", "DeepSeek-V3", 7168, 2048, 256, 8, 1},
    {"kimi-k2", "Kimi-K2", 7168, 2048, 384, 8, 1},
};
const int gg_moe_model_count = (int)(sizeof gg_moe_models / sizeof gg_moe_models[0]);

int k4_moe_can_route(const GgMoeShape *s, char *why, size_t len) {
    if (s->experts < 1 || s->experts > K4_ROUTE_MAX_EXPERTS) {
        snprintf(why, len, "k4_moe routes 1 <= experts <= %d (experts = %d)", K4_ROUTE_MAX_EXPERTS, s->experts);
        return 0;
    }
    if (s->topk < 1 || s->topk > s->experts) {
        snprintf(why, len, "k4_moe needs 1 <= topk <= experts (topk = %d, experts = %d)", s->topk, s->experts);
        return 0;
    }
    if (s->d < 8 || s->d % 8) {
        snprintf(why, len, "k4_moe needs d %% 8 == 0 and d >= 8 (the router's TMA rows) (d = %d)", s->d);
        return 0;
    }
    if (s->tokens < 0 || (int64_t)s->tokens * s->topk > K4_MAX_ROWS) {
        snprintf(why, len, "k4_moe needs 0 <= tokens x topk <= %d routed rows (tokens = %d, topk = %d)", K4_MAX_ROWS,
                 s->tokens, s->topk);
        return 0;
    }
    return 1;
}

int k4_moe_can_implement(const GgMoeShape *s, char *why, size_t len) {
    if (s->experts < 1 || s->experts > K4_MAX_EXPERTS) {
        snprintf(why, len, "k4_moe needs 1 <= experts <= %d (experts = %d)", K4_MAX_EXPERTS, s->experts);
        return 0;
    }
    if (s->d < 64 || s->d % 64) {
        snprintf(why, len, "k4_moe needs d %% 64 == 0 and d >= 64 (GEMM1's K) (d = %d)", s->d);
        return 0;
    }
    if (s->f < K4_GLU_PANEL || s->f % K4_GLU_PANEL) {
        snprintf(why, len, "k4_moe needs F %% %d == 0 and F >= %d (the fused GEMM1's gate/up panels) (F = %d)",
                 K4_GLU_PANEL, K4_GLU_PANEL, s->f);
        return 0;
    }
    return k4_moe_can_route(s, why, len);
}

/* The buffers in carving order: elements and element size, per shape and path. */
enum {
    WS_LOGITS, WS_TOPK_EXPERT, WS_TOPK_WEIGHT, WS_CHUNK_COUNT, WS_ROW_OFFSETS, WS_SRC_TOKEN, WS_ROW_OF, WS_XG, WS_U,
    WS_H, WS_Y, BUFS
};
static void sizes(const GgMoeShape *s, int fused, size_t n[BUFS], size_t el[BUFS]) {
    const size_t t = (size_t)s->tokens, r = t * s->topk, e = (size_t)s->experts;
    const size_t chunks = s->tokens > 0 ? (size_t)k4_route_chunks(s->tokens, s->experts) : 0;
    const size_t splits = s->tokens > 0 ? (size_t)k4_router_splits(s->tokens, s->experts, s->d) : 0;
    const size_t bf16 = 2, i32 = 4, f32 = 4;
    n[WS_LOGITS] = splits * t * e, el[WS_LOGITS] = f32; /* the router's partial sums, then the logits */
    n[WS_TOPK_EXPERT] = r, el[WS_TOPK_EXPERT] = i32;
    n[WS_TOPK_WEIGHT] = r, el[WS_TOPK_WEIGHT] = f32;
    n[WS_CHUNK_COUNT] = chunks ? (chunks + 1) * e : 0, el[WS_CHUNK_COUNT] = i32; /* + the totals' row */
    n[WS_ROW_OFFSETS] = e + 1, el[WS_ROW_OFFSETS] = i32;
    n[WS_SRC_TOKEN] = r, el[WS_SRC_TOKEN] = i32;
    n[WS_ROW_OF] = r, el[WS_ROW_OF] = i32;
    n[WS_XG] = fused ? 0 : r * s->d, el[WS_XG] = bf16; /* the gathered copy: unfused path only */
    n[WS_U] = fused ? 0 : r * 2 * s->f, el[WS_U] = bf16;
    n[WS_H] = r * s->f, el[WS_H] = bf16;
    n[WS_Y] = r * s->d, el[WS_Y] = bf16;
}

/* Each buffer's bytes (k4_carve aligns them). */
static void buffer_bytes(const GgMoeShape *s, int fused, size_t bytes[BUFS]) {
    size_t n[BUFS], el[BUFS];
    sizes(s, fused, n, el);
    for (int i = 0; i < BUFS; ++i) bytes[i] = n[i] * el[i];
}

size_t k4_moe_workspace_bytes(const GgMoeShape *s, int fused) {
    size_t bytes[BUFS];
    buffer_bytes(s, fused, bytes);
    return k4_carve(NULL, bytes, BUFS, NULL);
}

void k4_moe_workspace(void *base, const GgMoeShape *s, int fused, GgMoeWorkspace *ws) {
    size_t bytes[BUFS];
    void *slot[BUFS];
    buffer_bytes(s, fused, bytes);
    k4_carve(base, bytes, BUFS, slot);
    ws->logits = slot[WS_LOGITS];
    ws->topk_expert = slot[WS_TOPK_EXPERT];
    ws->topk_weight = slot[WS_TOPK_WEIGHT];
    ws->chunk_count = slot[WS_CHUNK_COUNT];
    ws->row_offsets = slot[WS_ROW_OFFSETS];
    ws->src_token = slot[WS_SRC_TOKEN];
    ws->row_of = slot[WS_ROW_OF];
    ws->xg = slot[WS_XG];
    ws->u = slot[WS_U];
    ws->h = slot[WS_H];
    ws->y = slot[WS_Y];
}

/* Wr [d x E] into wr_padded [d x k4_router_n(E)]: the pad columns zero (the router computes
 * them and never stores them), the rest a strided copy. */
static cudaError_t pad_wr(const GgMoeLayer *l) {
    const size_t e = (size_t)l->s.experts, np = (size_t)k4_router_n(l->s.experts), d = (size_t)l->s.d;
    if (!l->wr_padded) return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(l->wr_padded, 0, 2 * np * d, l->stream);
    if (err == cudaSuccess)
        err = cudaMemcpy2DAsync(l->wr_padded, 2 * np, l->wr, 2 * e, 2 * e, d, cudaMemcpyDeviceToDevice, l->stream);
    return err;
}

cudaError_t k4_moe_setup(const GgMoeLayer *l) {
    cudaError_t e = pad_wr(l);
    if (e == cudaSuccess && l->w1_packed)
        e = k4_pack_w1(l->w1, l->s.experts, l->s.d, l->s.f, l->w1_packed, l->stream);
    return e;
}

/* One grouped GEMM through k3_wgmma, the stage-3 entry point (it picks its configuration from
 * the shape; the rows of each expert stay on the device). */
static cudaError_t grouped_gemm(const GgMoeLayer *l, const uint16_t *a, const uint16_t *b, uint16_t *c,
                                int rows, int experts, int k, int n, const int *offsets) {
    GgLaunch g = {0};
    g.a = a;
    g.b = b;
    g.c = c;
    g.tokens = rows;
    g.experts = experts;
    g.k = k;
    g.n = n;
    g.row_offsets = offsets;
    g.num_sms = l->num_sms;
    g.stream = l->stream;
    return k3_wgmma_launch(&g);
}

/* Route: the router GEMM (fp32 partial sums per k-split), then one kernel for the softmax, the
 * top-k and each chunk's counts and ranks. Permute: two kernels, the scan of the count table
 * down each expert's column, then the scatter. Launches and bytes, with S = k4_router_splits,
 * C = k4_route_chunks and R = T top-k:
 *   k4_router   reads X (2 T d) and Wr (2 d E, once per row tile, mostly from L2), writes S T E x 4
 *   k4_route    reads S T E x 4, writes T E x 4 (the logits, if S > 1), 3 R x 4 and C E x 4
 *   k4_permute  count_scan reads 2 C E x 4, writes (C + 1) E x 4; scatter reads R x 12 and, per
 *               CTA, E x 4; writes 2 R x 4 and E + 1 */
static cudaError_t route(const GgMoeLayer *l) {
    const GgMoeShape *s = &l->s;
    const GgMoeWorkspace *w = &l->ws;
    cudaError_t e = k4_router(l->x, l->wr_padded, s->tokens, s->experts, s->d, w->logits, l->stream);
    if (e == cudaSuccess)
        e = k4_route(w->logits, s->tokens, s->experts, s->d, s->topk, s->renorm, w->topk_expert, w->topk_weight,
                     w->row_of, w->chunk_count, l->stream);
    return e;
}
static cudaError_t permute(const GgMoeLayer *l) {
    const GgMoeShape *s = &l->s;
    const GgMoeWorkspace *w = &l->ws;
    return k4_permute(w->topk_expert, s->tokens, s->topk, s->experts, w->chunk_count, w->row_offsets, w->src_token,
                      w->row_of, l->stream);
}

cudaError_t k4_moe_route_permute(const GgMoeLayer *l) {
    if (l->s.tokens == 0) return cudaSuccess;
    cudaError_t e = route(l);
    return e == cudaSuccess ? permute(l) : e;
}

cudaError_t k4_moe_forward(const GgMoeLayer *l, int fused, cudaEvent_t *marks) {
    const GgMoeShape *s = &l->s;
    const GgMoeWorkspace *w = &l->ws;
    const int rows = s->tokens * s->topk;
    if (s->tokens == 0) return cudaSuccess; /* an empty layer: nothing to write */
    if (fused ? !l->w1_packed : !w->xg || !w->u) return cudaErrorInvalidValue; /* the path's buffers */
    MARK(GG_MOE_ROUTE);
    STEP(route(l));
    MARK(GG_MOE_PERMUTE);
    STEP(permute(l));
    if (!fused) STEP(k4_gather_rows(l->x, w->src_token, rows, s->d, w->xg, l->stream));
    MARK(GG_MOE_GEMM1);
    if (fused) {
        STEP(k4_gemm1_swiglu(l->x, s->tokens, w->src_token, w->row_offsets, l->w1_packed, w->h, rows, s->experts,
                             s->d, s->f, l->num_sms, l->gather, l->stream));
    } else {
        STEP(grouped_gemm(l, w->xg, l->w1, w->u, rows, s->experts, s->d, 2 * s->f, w->row_offsets));
        STEP(k4_swiglu(w->u, rows, s->f, w->h, l->stream));
    }
    MARK(GG_MOE_GEMM2);
    STEP(grouped_gemm(l, w->h, l->w2, w->y, rows, s->experts, s->f, s->d, w->row_offsets));
    MARK(GG_MOE_COMBINE);
    STEP(k4_combine(w->y, w->row_of, w->topk_weight, s->tokens, s->topk, s->d, l->out, l->stream));
    MARK(GG_MOE_STEPS);
    return cudaSuccess;
}
#undef MARK
#undef STEP

/* The three GEMMs: FLOPs and compulsory bytes (bf16: 2 bytes an element). GEMM1 reads each
 * token once, its output is H [R x F]; GEMM2 reads H and writes Y [R x d]. */
static void gemms(const GgMoeShape *s, double flops[3], double bytes[3]) {
    const double t = s->tokens, r = (double)s->tokens * s->topk, d = s->d, f = s->f, e = s->experts;
    const double active = r < e ? r : e;
    flops[0] = 2 * t * d * e;
    bytes[0] = 2 * (t * d + d * e + t * e);
    flops[1] = 2 * r * d * 2 * f;
    bytes[1] = 2 * (t * d + active * d * 2 * f + r * f);
    flops[2] = 2 * r * f * d;
    bytes[2] = 2 * (r * f + active * f * d + r * d);
}

double k4_moe_gemm_flops(const GgMoeShape *s) {
    double flops[3], bytes[3];
    gemms(s, flops, bytes);
    return flops[0] + flops[1] + flops[2];
}

double k4_moe_floor_us(const GgMoeShape *s, double gemm_tflops, double bw_gbps) {
    double flops[3], bytes[3], sum = 0;
    gemms(s, flops, bytes);
    for (int i = 0; i < 3; ++i) sum += k4_gemm_floor_s(flops[i], bytes[i], gemm_tflops, bw_gbps);
    return sum * 1e6;
}
