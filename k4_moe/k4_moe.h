/* k4_moe: the whole Mixture-of-Experts FFN forward around the stage-3 grouped GEMM.
 *
 *   X [T x d] --route--> (expert, weight) per token and slot --permute--> routed rows grouped
 *   by expert --GEMM1 + SwiGLU--> H [R x F] --GEMM2--> Y [R x d] --combine--> out [T x d]
 *
 * R = T * topk routed rows. Weights: Wr [d x E], W1 [E x d x 2F] (columns [0, F) gate, [F, 2F)
 * up), W2 [E x F x d]; every tensor bf16, N contiguous like the stages' B. Two paths share the
 * route, the permutation, GEMM2 (k3_wgmma, the entry point) and the combine:
 *   unfused  gather X into Xg [R x d]; k3_wgmma on Xg and W1 -> U [R x 2F]; SwiGLU U -> H;
 *   fused    k4_gemm1_swiglu.cu: the GEMM1 producer gathers X rows by index and the epilogue
 *            applies SwiGLU, so neither Xg nor U exists (W1 is packed once, k4_moe_setup).
 * Everything after setup is enqueued on one stream without a host synchronisation, so the
 * layer is captured in one CUDA graph and replays with new X (new routing).
 * Host code is C (k4_moe.c); kernels are k4_moe_steps.cu and k4_gemm1_swiglu.cu. */
#ifndef K4_MOE_H
#define K4_MOE_H
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "gg_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layer's steps, in order; the per-step timing records an event between them. */
typedef enum { GG_MOE_ROUTE, GG_MOE_PERMUTE, GG_MOE_GEMM1, GG_MOE_GEMM2, GG_MOE_COMBINE, GG_MOE_STEPS } GgMoeStep;
extern const char *const gg_moe_step_names[GG_MOE_STEPS]; /* "route", "permute", ... */

typedef struct GgMoeShape {
    int tokens;   /* T; 0 is a valid, empty layer */
    int d, f;     /* model width, expert FFN width */
    int experts, topk;
    int renorm;   /* 1: weights renormalised over the chosen topk (Mixtral); 0: raw softmax */
} GgMoeShape;

/* Named shapes (k4_moe.c): mixtral, qwen3, olmoe, gpt-oss, qwen3-235b, deepseek-v3, kimi-k2. */
typedef struct GgMoeModel {
    const char *name, *what;
    int d, f, experts, topk, renorm;
} GgMoeModel;
extern const GgMoeModel gg_moe_models[];
extern const int gg_moe_model_count;

/* Scratch of one forward, carved from one allocation by k4_moe_workspace. */
typedef struct GgMoeWorkspace {
    float *logits;         /* [T x E] fp32 X Wr once routed; before, the router's k-split partial
                              sums [splits x T x E] (k4_router_splits), slice 0 first */
    int *topk_expert;      /* [T x topk] chosen experts, best first */
    float *topk_weight;    /* [T x topk] their weights */
    int *chunk_count;      /* [chunks + 1 x E] assignments of each expert per routing chunk; after
                              permute, each expert's rows in earlier chunks (row `chunks`: all) */
    int *row_offsets;      /* [E + 1] expert e owns routed rows [off[e], off[e + 1]) */
    int *src_token;        /* [R] routed row -> token */
    int *row_of;           /* [T x topk] (token, slot) -> routed row (after route: its rank
                              among its expert's assignments of its chunk) */
    uint16_t *xg;          /* [R x d] gathered X (unfused only) */
    uint16_t *u;           /* [R x 2F] gate | up (unfused only) */
    uint16_t *h;           /* [R x F] SwiGLU output */
    uint16_t *y;           /* [R x d] GEMM2 output, one row per (token, slot) */
} GgMoeWorkspace;

/* The fused GEMM1's variants (k4_gemm1_swiglu.cu): how its producer gathers the rows of X and, for
 * one, its tile. K4_GATHER_DEFAULT is the lesson's, always built; the others are ablations, built
 * with -DGG_ABLATIONS=ON (k4_moe/TRIALS.md); `ggemm moe --gather NAME` picks one by its
 * k4_gather_names entry. */
typedef enum {
    K4_GATHER_TMA_WARP,       /* one TMA per row (box 64 k x 1 row), all issued by one producer warp */
    K4_GATHER_TMA_WARPGROUP,  /* the same, 32 rows from each of the four producer warps */
    K4_GATHER_CP_ASYNC,       /* 16-byte cp.async from the 128 producer threads (the first version) */
    K4_GATHER_CP_ASYNC_M256,  /* the same gather into 256-row tiles of one gate/up pair (128 packed
                                 columns): each W1 stage feeds twice the rows */
    K4_GATHERS
} K4Gather;
#define K4_GATHER_DEFAULT K4_GATHER_CP_ASYNC
extern const char *const k4_gather_names[K4_GATHERS]; /* "tma_warp", "tma_warpgroup", "cp_async", "cp_async_m256" */
int k4_gather_built(K4Gather gather);                  /* 1 if this build has that gather's kernel */

typedef struct GgMoeLayer {
    GgMoeShape s;
    const uint16_t *x, *wr, *w1, *w2;
    uint16_t *wr_padded;   /* [d x k4_router_n(E)]: Wr with zero columns up to 16- or 128-byte rows */
    uint16_t *w1_packed;   /* [E x d x 2F]: W1 with gate and up columns interleaved every 64 */
    uint16_t *out;         /* [T x d] */
    GgMoeWorkspace ws;
    int num_sms;
    K4Gather gather;       /* the fused path's gather (K4_GATHER_DEFAULT unless an ablation is timed) */
    cudaStream_t stream;
} GgMoeLayer;

/* 1 if both paths can run this shape; else 0 and one line in why (k4_moe_can_route's, E outside
 * 1..K4_MAX_EXPERTS, d or F not a multiple of 64). */
int k4_moe_can_implement(const GgMoeShape *s, char *why, size_t len);
/* 1 if the route and permute steps can run this shape (any 1 <= E <= K4_ROUTE_MAX_EXPERTS,
 * 1 <= top-k <= E, d % 8 == 0: the router's TMA rows); else 0 and one line in why. */
int k4_moe_can_route(const GgMoeShape *s, char *why, size_t len);
/* Bytes of workspace for shape s (fused = 0 adds Xg and U), and the carving of base. */
size_t k4_moe_workspace_bytes(const GgMoeShape *s, int fused);
void k4_moe_workspace(void *base, const GgMoeShape *s, int fused, GgMoeWorkspace *ws);
/* Once per set of weights: pad Wr into wr_padded, pack W1 for the fused path (if w1_packed). */
cudaError_t k4_moe_setup(const GgMoeLayer *l);
/* One forward. marks: NULL, or GG_MOE_STEPS + 1 events recorded before each step and after
 * the last (the per-step breakdown). */
cudaError_t k4_moe_forward(const GgMoeLayer *l, int fused, cudaEvent_t *marks);
/* The route and permute steps alone (the routing tests; needs x, wr_padded and the workspace). */
cudaError_t k4_moe_route_permute(const GgMoeLayer *l);

/* FLOPs of the layer's three GEMMs (router, GEMM1, GEMM2), and the layer's roofline floor in
 * microseconds: the sum over the three of max(FLOPs / gemm_tflops, compulsory bytes / bw),
 * counting min(R, E) experts as receiving rows (each of their weights is read once): a floor
 * from the shape alone, so the PyTorch peer divides by the same one. */
double k4_moe_gemm_flops(const GgMoeShape *s);
double k4_moe_floor_us(const GgMoeShape *s, double gemm_tflops, double bw_gbps);

/* The kernels' launchers (k4_router.cu, k4_moe_steps.cu, k4_gemm1_swiglu.cu). */
cudaError_t k4_router(const uint16_t *x, const uint16_t *wr_padded, int tokens, int experts, int d,
                      float *partials, cudaStream_t st);
cudaError_t k4_route(float *logits, int tokens, int experts, int d, int topk, int renorm, int *topk_expert,
                     float *topk_weight, int *row_of, int *chunk_count, cudaStream_t st);
cudaError_t k4_permute(const int *topk_expert, int tokens, int topk, int experts, int *chunk_count,
                       int *row_offsets, int *src_token, int *row_of, cudaStream_t st);
cudaError_t k4_gather_rows(const uint16_t *x, const int *src_token, int rows, int d, uint16_t *xg,
                           cudaStream_t st);
cudaError_t k4_swiglu(const uint16_t *u, int rows, int f, uint16_t *h, cudaStream_t st);
cudaError_t k4_combine(const uint16_t *y, const int *row_of, const float *topk_weight, int tokens,
                       int topk, int d, uint16_t *out, cudaStream_t st);
cudaError_t k4_pack_w1(const uint16_t *w1, int experts, int d, int f, uint16_t *w1_packed,
                       cudaStream_t st);
/* X [tokens x d]; rows routed rows; cudaErrorNotSupported for a gather this build lacks. */
cudaError_t k4_gemm1_swiglu(const uint16_t *x, int tokens, const int *src_token, const int *row_offsets,
                            const uint16_t *w1_packed, uint16_t *h, int rows, int experts, int d,
                            int f, int num_sms, K4Gather gather, cudaStream_t st);
/* H columns per fused GEMM1 tile; the width of W1's gate/up interleave in its packed copy; the
 * most experts: the harness's GG_MAX_EXPERTS, all that the device schedule's two-level index
 * covers (GG_SCHED_MAX_EXPERTS, common/gg_schedule.h), for the fused GEMM1 and k3_wgmma alike. */
enum { K4_PACK_N = 128, K4_GLU_PANEL = 64, K4_MAX_EXPERTS = 4096 };
/* The most routed rows T x topk: row indices are int in the kernels and in k3's launch (element
 * offsets are size_t). */
#define K4_MAX_ROWS (1 << 24)

/* The TMA gather's byte count (k4_gemm1_swiglu.cu). A tile has up to K4_GATHER_ROWS rows, each
 * K4_GATHER_ROW_BYTES of X per k-block (64 bf16); gathering warp w of `warps` loads rows
 * [w s, (w + 1) s), s = K4_GATHER_ROWS / warps, of the tile's `rows` valid ones, and announces
 * on the stage's full barrier the bytes of the rows it loads, plus, warp 0, the stage's B bytes.
 * Rows past `rows` are not loaded and not counted: the phase completes when exactly the bytes
 * issued have landed. tests/suite_moe.c checks that the warps' counts add up to the stage. */
enum { K4_GATHER_ROWS = 128, K4_GATHER_ROW_BYTES = 128 };
GG_HD int k4_gather_warp_rows(int rows, int warp, int warps) {
    const int share = K4_GATHER_ROWS / warps, left = rows - warp * share;
    return left < 0 ? 0 : left > share ? share : left;
}
GG_HD uint32_t k4_gather_warp_tx(int rows, int warp, int warps, uint32_t b_bytes) {
    return (uint32_t)k4_gather_warp_rows(rows, warp, warps) * K4_GATHER_ROW_BYTES + (warp == 0 ? b_bytes : 0u);
}

/* The column of W1 [.. x 2F] that packed column c holds (k4_pack_w1): panels of K4_GLU_PANEL
 * columns alternate gate, up, so packed panel 2p is gate columns [64p, 64p + 64) and panel
 * 2p + 1 the same up columns, F further on. The interleave runs over the whole packed row, so
 * any F % 64 == 0 packs: F / 64 pairs. tests/suite_moe.c checks it on the CPU. */
GG_HD int k4_packed_w1_column(int c, int f) {
    const int panel = c / K4_GLU_PANEL;         /* which 64-column panel of the packed row */
    const int up = panel % 2;                   /* odd panels: up columns */
    const int pair = panel / 2;                 /* gate/up pair = 64-column panel of H */
    return up * f + pair * K4_GLU_PANEL + c % K4_GLU_PANEL;
}

/* Gate/up pairs in the fused GEMM1's column block that starts at packed column col0 (a multiple
 * of 2 K4_PACK_N, below 2F): K4_PACK_N / 64 = 2, except in the last block when F / 64 is odd,
 * where the packed row ends half-way through the block: 1. The block's H columns are
 * [col0 / 2, col0 / 2 + 64 pairs). tests/suite_moe.c checks that the blocks cover H once. */
GG_HD int k4_block_pairs(int col0, int f) {
    const int full = K4_PACK_N / K4_GLU_PANEL, left = (2 * f - col0) / (2 * K4_GLU_PANEL);
    return left < full ? left : full;
}

/* The first packed column of B box p (64 columns) of the block at col0: col0 + 64 p, moved back
 * onto the last panel [2F - 64, 2F) when it would start past the packed row (the two boxes past
 * 2F of a one-pair block), so that every TMA box overlaps the tensor. Those boxes are never read. */
GG_HD int k4_w1_box_col(int col0, int p, int f) {
    const int c = col0 + p * K4_GLU_PANEL, last = 2 * f - K4_GLU_PANEL;
    return c < last ? c : last;
}

/* ---- The router and the routing chunks: shape arithmetic shared by the launchers, the
 * workspace and tests/suite_moe.c ----
 * Router GEMM (k4_router.cu): X [T x d] times Wr [d x E] into fp32, tiles of K4_ROUTER_BLOCK_M
 * rows x block_n columns, the k-blocks of 64 split over `splits` CTAs when the tiles alone are
 * too few for the GPU: each split writes its own partial sum and the route kernel adds them in
 * split order (deterministic; no atomics).
 *   K4_ROUTER_CTAS  CTAs the router aims for: about one per SM of a Hopper GPU (132 SMs), since
 *                   each holds a full ring of TMA stages; a constant, not the device's count,
 *                   because the workspace holding the partials is sized from the shape alone.
 *   K4_ROUTER_MIN_KB  k-blocks a split keeps at least (a split shorter than the ring's fill is
 *                   all latency).
 * Routing chunks (k4_moe_steps.cu): the route kernel takes `chunk_tokens` tokens a CTA and
 * writes, per chunk, each expert's count and each assignment's rank among its expert's
 * assignments of the chunk; the permute step scans that count table down each expert's column.
 * A chunk is a token for each of the route CTA's K4_ROUTE_THREADS / 32 warps (the routing of a
 * token is a chain of dependent steps: tokens in parallel, not in turn), longer only where the
 * table would pass K4_ROUTE_TABLE counts (chunks x E: the route kernel writes every count, zero
 * or not) or a column K4_ROUTE_MAX_CHUNKS chunks (a scan thread's run of chunks stays short). */
enum {
    K4_ROUTER_BLOCK_M = 128, K4_ROUTER_CTAS = 128, K4_ROUTER_MIN_KB = 2, K4_ROUTER_BLOCK_K = 64,
    K4_ROUTE_THREADS = 256, K4_ROUTE_MAX_EXPERTS = 4096, K4_ROUTE_TABLE = 1 << 20, K4_ROUTE_MAX_CHUNKS = 1024
};

/* Wr's padded width: rows of 16 bytes (TMA's stride rule), and above 64 experts whole 128-byte
 * rows, so that each 64-column B box row is one aligned L2 line; columns >= E are zero, never
 * stored. */
GG_HD int k4_router_n(int experts) { return experts <= 64 ? (experts + 7) / 8 * 8 : (experts + 63) / 64 * 64; }
/* Router tile columns: the widest of 256, 128, 64, but no wider than the padded width needs (a
 * wider tile only multiplies zero columns), whose tiles alone reach K4_ROUTER_CTAS (no split, the
 * most work per wgmma), else 64 (the most tiles; the split makes up the rest). */
GG_HD int k4_router_block_n(int tokens, int experts) {
    const int row_tiles = (tokens + K4_ROUTER_BLOCK_M - 1) / K4_ROUTER_BLOCK_M, n = k4_router_n(experts);
    const int widest = n <= 64 ? 64 : n <= 128 ? 128 : 256;
    for (int bn = widest; bn >= 128; bn /= 2)
        if ((long long)row_tiles * ((k4_router_n(experts) + bn - 1) / bn) >= K4_ROUTER_CTAS) return bn;
    return 64;
}
GG_HD int k4_router_tiles(int tokens, int experts) {
    const int bn = k4_router_block_n(tokens, experts);
    return (tokens + K4_ROUTER_BLOCK_M - 1) / K4_ROUTER_BLOCK_M * ((k4_router_n(experts) + bn - 1) / bn);
}
/* k-blocks each split takes (the last may take fewer, never none). */
GG_HD int k4_router_split_kblocks(int tokens, int experts, int d) {
    const int tiles = k4_router_tiles(tokens, experts);
    const int kb = (d + K4_ROUTER_BLOCK_K - 1) / K4_ROUTER_BLOCK_K;
    int want = tiles > 0 ? (K4_ROUTER_CTAS + tiles - 1) / tiles : 1;
    const int most = kb / K4_ROUTER_MIN_KB > 1 ? kb / K4_ROUTER_MIN_KB : 1;
    if (want > most) want = most;
    if (want < 1) want = 1;
    return (kb + want - 1) / want;
}
GG_HD int k4_router_splits(int tokens, int experts, int d) {
    const int kb = (d + K4_ROUTER_BLOCK_K - 1) / K4_ROUTER_BLOCK_K, per = k4_router_split_kblocks(tokens, experts, d);
    return (kb + per - 1) / per;
}
/* 1 if the router's row tiles stagger their k ranges (k4_router.cu, change 4): where a Wr k-block
 * of one column block is at most a quarter real columns (E <= 16 at the narrowest tile), a few L2
 * lines that every CTA reading in step would ask for at once. */
GG_HD int k4_router_stagger(int experts, int block_n) { return 4 * k4_router_n(experts) <= block_n; }
/* Tokens per routing chunk, and the chunk count. */
GG_HD int k4_route_chunk_tokens(int tokens, int experts) {
    const int per_warp = K4_ROUTE_THREADS / 32;    /* a token for each of the CTA's warps */
    const int by_table = K4_ROUTE_TABLE / (experts > 1 ? experts : 1); /* chunks x E <= the table */
    const int most = by_table < K4_ROUTE_MAX_CHUNKS ? by_table : K4_ROUTE_MAX_CHUNKS;
    const int spread = (tokens + most - 1) / most;
    return spread > per_warp ? spread : per_warp;
}
GG_HD int k4_route_chunks(int tokens, int experts) {
    const int ct = k4_route_chunk_tokens(tokens, experts);
    return (tokens + ct - 1) / ct;
}

#ifdef __cplusplus
}
#endif
#endif
