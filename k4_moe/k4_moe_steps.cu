// k4_moe steps: the small kernels around the two grouped GEMMs (k4_moe.h has the layer).
//
//   route    k4_route          per chunk of tokens: logits (the router's split partials
//                              added), softmax, top-k, weights; each expert's count and each
//                              assignment's rank in the chunk    (after k4_router, k4_router.cu)
//   permute  k4_permute        count_scan: per expert, its rows in earlier chunks and in all;
//                              scatter: row offsets, then each assignment's row (two kernels)
//   gather   k4_gather_rows    Xg[r] = X[src_token[r]]           (unfused path only)
//   swiglu   k4_swiglu         H = silu(U_gate) * U_up           (unfused path only)
//   combine  k4_combine        out[t] = sum_j w_tj Y[row(t, j)]
//   setup    k4_pack_w1
//
// Launches: route, count_scan and scatter are programmatic dependents of the kernel before each
// (launch_dependent): each CTA lets the next kernel's CTAs in as it starts and waits
// (gg::griddep_wait) before it reads what the kernel before wrote, so a kernel's launch and
// start overlap the previous one's end instead of following it.
//
// Determinism: no floating-point atomics anywhere. The permutation orders each expert's rows
// by (token, slot), whatever order the blocks run in: a chunk's place among the chunks and an
// assignment's place inside its chunk are fixed by index, not by arrival (the order and the three
// passes on the CPU: k4_permutation.h). The combine adds a token's k rows in slot order. Same
// input, same bits.
#include <cuda_bf16.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "gg_check.h"
#include "k4_moe.h"
#include "k4_device.cuh"
#include "gg_schedule.cuh"
#include "ptx/ptx_griddep.cuh"

namespace {

constexpr int WARP = 32;
constexpr int ROUTE_WARPS = K4_ROUTE_THREADS / WARP;  // tokens in flight per routing CTA (a warp each)
constexpr int LOADS_IN_FLIGHT = 16;                   // route: a lane's split partials loaded at once
constexpr int SCAN_THREADS = 256;                     // count_scan: SCAN_EXPERTS columns x SCAN_SLICES
constexpr int SCAN_EXPERTS = 8;                       //   8 experts' counts are one 32-byte sector per chunk
constexpr int SCAN_SLICES = SCAN_THREADS / SCAN_EXPERTS;
constexpr int SCATTER_THREADS = 256;                  // scatter: the scan over experts, then assignments
constexpr int SCATTER_PER_THREAD = 4;                 //   assignments a thread places (loads in flight)
constexpr int ROW_THREADS = 128;                      // gather / combine: one block per row, 16 B a thread
constexpr int ELEMENTWISE_THREADS = 256;              // swiglu, pack_w1: grid-stride loops
constexpr int ELEMENTWISE_MAX_BLOCKS = 4096;          // swiglu: enough to fill the GPU, then stride
constexpr int PACK_BLOCKS = 1024;                     // pack_w1 (once per layer): grid-stride
static_assert(K4_ROUTE_THREADS % WARP == 0 && SCATTER_THREADS % WARP == 0 && SCATTER_THREADS <= WARP * WARP,
              "whole warps; one warp scans the warp sums");

using k4::bf16_to_float;
using k4::float_to_bf16;

// An fp32 value as an unsigned key of the same order (-0 and +0 apart: the caller adds +0 first);
// key 0 lies below every number, -inf included, and stands for "no candidate".
__device__ __forceinline__ unsigned order_key(float v) {
    const unsigned b = __float_as_uint(v);
    return b & 0x80000000u ? ~b : b | 0x80000000u;
}
__device__ __forceinline__ float key_value(unsigned k) { return __uint_as_float(k & 0x80000000u ? k & 0x7fffffffu : ~k); }

// ---- route: one CTA per chunk of chunk_tokens tokens (k4_route_chunk_tokens) ----
// Phase 1, a warp per token; lane l holds logits l, l + 32, ... (PER_LANE of them, a power of
// two >= E / 32). The logit is the router's k-split partials added in split order (written
// back to slice 0, which becomes the logits; the loads go out in batches, the adds follow in
// order); softmax in fp32; top-k by k rounds of a warp
// arg-max over the experts not yet taken, ties to the lower expert; the weights renormalised
// over the k chosen or not. A NaN logit is never chosen ahead of a number. The warp's max is
// one integer reduction (redux.sync, sm_80+) over order_key(logit), the tie one more over the
// experts holding it: two instructions a round where a shuffle butterfly of (value, expert)
// pairs took ten dependent shuffles.
// Phase 2, rounds of K4_ROUTE_THREADS assignments a = token * topk + slot, in order: each
// assignment's rank among the chunk's earlier assignments of its expert = seen[e] (earlier
// rounds) + the same expert in earlier warps of the round + in earlier lanes of its warp
// (__match_any_sync); then seen[e] += the round's count. At the end seen[e] is the chunk's
// count of e. Ranks follow indices, never arrival order: the permutation is stable and
// deterministic. Integer shared-memory atomics only.
template <int PER_LANE>
__global__ void __launch_bounds__(K4_ROUTE_THREADS)
route_kernel(float *__restrict__ logits, int splits, int tokens, int experts, int topk, int renorm,
             int chunk_tokens, int *topk_expert, float *__restrict__ topk_weight, int *__restrict__ row_of,
             int *__restrict__ chunk_count) {
    constexpr int WORDS = (PER_LANE + 31) / 32;  // bits of `taken`
    constexpr int I_BATCH = PER_LANE < LOADS_IN_FLIGHT ? PER_LANE : LOADS_IN_FLIGHT;  // logits per batch
    constexpr int S_BATCH = LOADS_IN_FLIGHT / I_BATCH;                               // splits per batch
    __shared__ int seen[K4_ROUTE_MAX_EXPERTS];
    __shared__ int round_expert[K4_ROUTE_THREADS];
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int t0 = blockIdx.x * chunk_tokens, t1 = min(t0 + chunk_tokens, tokens);
    const size_t plane = (size_t)tokens * experts;  // one split's partial sums
    for (int e = threadIdx.x; e < experts; e += K4_ROUTE_THREADS) seen[e] = 0;
    gg::griddep_launch_dependents();
    gg::griddep_wait();  // the router's partials

    for (int t = t0 + warp; t < t1; t += ROUTE_WARPS) {
        float *row = logits + (size_t)t * experts;
        float v[PER_LANE];
        unsigned taken[WORDS];  // bit i: expert lane + 32 i is chosen or does not exist
        float top = -INFINITY;
#pragma unroll
        for (int w = 0; w < WORDS; ++w) taken[w] = 0;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            const int e = lane + i * WARP;
            v[i] = e < experts ? row[e] : -INFINITY;
            if (e >= experts) taken[i / 32] |= 1u << (i % 32);
        }
        // The other splits' partials: LOADS_IN_FLIGHT independent loads issued before any is
        // added (a load per add in turn would be one L2 latency per split per logit, and the
        // warp's token would wait splits x PER_LANE latencies), then added in split order.
#pragma unroll
        for (int i0 = 0; i0 < PER_LANE; i0 += I_BATCH)
            for (int s0 = 1; s0 < splits; s0 += S_BATCH) {
                float part[S_BATCH][I_BATCH];
#pragma unroll
                for (int u = 0; u < S_BATCH; ++u)
#pragma unroll
                    for (int i = 0; i < I_BATCH; ++i) {
                        const int e = lane + (i0 + i) * WARP;
                        part[u][i] = s0 + u < splits && e < experts ? row[(s0 + u) * plane + e] : 0.f;
                    }
#pragma unroll
                for (int u = 0; u < S_BATCH; ++u)
#pragma unroll
                    for (int i = 0; i < I_BATCH; ++i)
                        if (s0 + u < splits) v[i0 + i] += part[u][i];
            }
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            const int e = lane + i * WARP;
            if (splits > 1 && e < experts) row[e] = v[i];
            v[i] = isnan(v[i]) ? -INFINITY : v[i] + 0.f;  // + 0: -0 becomes +0, one key for zero
            top = fmaxf(top, v[i]);
        }
        top = key_value(__reduce_max_sync(0xffffffffu, order_key(top)));
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) sum += lane + i * WARP < experts ? expf(v[i] - top) : 0.f;
        sum = k4::warp_sum(sum);

        float chosen_sum = 0.f, my_weight = 0.f;
        int my_expert = -1;  // lane j % 32 keeps slot j until its group of 32 slots is written
        for (int j = 0; j < topk; ++j) {
            unsigned mine = 0;  // this lane's best key not yet taken; i ascending: ties to the lower expert
            int mine_e = 0;
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) {
                const unsigned key = order_key(v[i]);
                if (!(taken[i / 32] >> (i % 32) & 1u) && key > mine) {
                    mine = key;
                    mine_e = lane + i * WARP;
                }
            }
            const unsigned best_key = __reduce_max_sync(0xffffffffu, mine);
            const int best_e = (int)__reduce_min_sync(0xffffffffu, mine == best_key ? (unsigned)mine_e : UINT_MAX);
            const float best = key_value(best_key);
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i)
                if (lane + i * WARP == best_e) taken[i / 32] |= 1u << (i % 32);
            const float p = expf(best - top) / sum;
            chosen_sum += p;
            if (lane == j % WARP) {
                my_expert = best_e;
                my_weight = p;
            }
            if (j % WARP == WARP - 1 || j == topk - 1) {  // write 32 slots at a time
                const int slot = j / WARP * WARP + lane;
                if (slot <= j) {
                    topk_expert[(size_t)t * topk + slot] = my_expert;
                    topk_weight[(size_t)t * topk + slot] = my_weight;
                }
            }
        }
        if (renorm)  // each lane rescales the slots it wrote
            for (int slot = lane; slot < topk; slot += WARP) topk_weight[(size_t)t * topk + slot] /= chosen_sum;
    }
    __syncthreads();  // the chunk's topk_expert is written (and visible to the CTA), seen is zero

    const int a1 = t1 * topk;
    for (int r0 = t0 * topk; r0 < a1; r0 += K4_ROUTE_THREADS) {
        const int a = r0 + threadIdx.x;
        const int e = a < a1 ? topk_expert[a] : -1;
        round_expert[threadIdx.x] = e;
        __syncthreads();
        const unsigned peers = __match_any_sync(0xffffffffu, e);
        if (e >= 0) {
            int before = __popc(peers & ((1u << lane) - 1u));
            for (int j = 0; j < warp * WARP; ++j) before += round_expert[j] == e;
            row_of[a] = seen[e] + before;
        }
        __syncthreads();  // every rank has read seen
        if (e >= 0 && lane == __ffs(peers) - 1) atomicAdd(&seen[e], __popc(peers));  // integer: order-free
        __syncthreads();  // seen is whole and round_expert free for the next round
    }
    for (int e = threadIdx.x; e < experts; e += K4_ROUTE_THREADS)
        chunk_count[(size_t)blockIdx.x * experts + e] = seen[e];
}

// ---- permute, kernel 1: count_scan, one CTA per SCAN_EXPERTS experts ----
// The count table [chunks + 1 x E] (row c: chunk c's count of each expert, from the route
// kernel) becomes, in place, each expert's rows in earlier chunks (row c) and in all chunks (row
// `chunks`): a scan down each column. Thread (slice, column) sums a run of chunks, the runs'
// sums are scanned in shared memory, and each thread rewrites its run from its start. Every
// CTA reads its own columns only: the table is read twice and written once, whatever the count
// of chunks (the kernel this replaced had every chunk read all earlier chunks' counts).
__global__ void __launch_bounds__(SCAN_THREADS)
count_scan_kernel(int *__restrict__ count, int chunks, int experts) {
    __shared__ int run_start[SCAN_SLICES][SCAN_EXPERTS];
    const int column = threadIdx.x % SCAN_EXPERTS, slice = threadIdx.x / SCAN_EXPERTS;
    const int e = blockIdx.x * SCAN_EXPERTS + column;
    const int per = (chunks + SCAN_SLICES - 1) / SCAN_SLICES;
    const int c0 = min(slice * per, chunks), c1 = min(c0 + per, chunks);
    gg::griddep_launch_dependents();
    gg::griddep_wait();  // the route kernel's counts
    int sum = 0;
    if (e < experts)
#pragma unroll 8
        for (int c = c0; c < c1; ++c) sum += count[(size_t)c * experts + e];
    run_start[slice][column] = sum;
    __syncthreads();
    if (slice == 0) {  // exclusive scan down the column's runs; the total goes to row `chunks`
        int run = 0;
        for (int q = 0; q < SCAN_SLICES; ++q) {
            const int n = run_start[q][column];
            run_start[q][column] = run;
            run += n;
        }
        if (e < experts) count[(size_t)chunks * experts + e] = run;
    }
    __syncthreads();
    int run = run_start[slice][column];
    if (e < experts)
#pragma unroll 8
        for (int c = c0; c < c1; ++c) {
            int *n = count + (size_t)c * experts + e;
            const int here = *n;
            *n = run;
            run += here;
        }
}

// ---- permute, kernel 2: scatter, SCATTER_THREADS x SCATTER_PER_THREAD assignments a CTA ----
// Each CTA scans the experts' totals (row `chunks` of the scanned table) into row offsets (CTA
// 0 writes them: the array k3 consumes); assignment a of token t, chunk c = t / chunk_tokens,
// expert e lands on row offset[e] + (e's rows in chunks < c) + its rank in its chunk. Each
// assignment's expert and rank are loaded before the scan, so their latency hides behind it.
__global__ void __launch_bounds__(SCATTER_THREADS)
scatter_kernel(const int *__restrict__ topk_expert, int tokens, int topk, int experts, int chunk_tokens, int chunks,
               const int *__restrict__ start, int *__restrict__ row_offsets, int *__restrict__ src_token,
               int *__restrict__ row_of) {
    __shared__ int offset[K4_ROUTE_MAX_EXPERTS];
    __shared__ int warp_sum[WARP];
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP, assignments = tokens * topk;
    const int a0 = blockIdx.x * SCATTER_THREADS * SCATTER_PER_THREAD + threadIdx.x;
    int expert[SCATTER_PER_THREAD], rank[SCATTER_PER_THREAD];
    gg::griddep_wait();  // count_scan's table (and, as count_scan waited for it, the route kernel's)
#pragma unroll
    for (int i = 0; i < SCATTER_PER_THREAD; ++i) {
        const int a = a0 + i * SCATTER_THREADS;
        expert[i] = a < assignments ? topk_expert[a] : 0;
        rank[i] = a < assignments ? row_of[a] : 0;
    }
    // Exclusive scan of the totals: thread i owns experts [e0, e1), a warp scan of the owners'
    // sums, then one warp scans the warp sums.
    const int *total = start + (size_t)chunks * experts;
    const int per = (experts + SCATTER_THREADS - 1) / SCATTER_THREADS;
    const int e0 = min((int)threadIdx.x * per, experts), e1 = min(e0 + per, experts);
    int mine = 0;
    for (int e = e0; e < e1; ++e) mine += offset[e] = total[e];
    const int incl = gg::warp_inclusive_sum(mine, lane);
    if (lane == WARP - 1) warp_sum[warp] = incl;
    __syncthreads();
    if (warp == 0) warp_sum[lane] = gg::warp_inclusive_sum(lane < SCATTER_THREADS / WARP ? warp_sum[lane] : 0, lane);
    __syncthreads();
    int run = (warp > 0 ? warp_sum[warp - 1] : 0) + incl - mine;
    for (int e = e0; e < e1; ++e) {
        const int n = offset[e];
        offset[e] = run;
        if (blockIdx.x == 0) row_offsets[e] = run;
        run += n;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) row_offsets[experts] = assignments;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < SCATTER_PER_THREAD; ++i) {
        const int a = a0 + i * SCATTER_THREADS;
        if (a >= assignments) break;
        const int t = a / topk, e = expert[i];
        const int row = offset[e] + start[(size_t)(t / chunk_tokens) * experts + e] + rank[i];
        src_token[row] = t;
        row_of[a] = row;
    }
}

// ---- gather (unfused): one block per routed row, 16 bytes per thread per step ----
__global__ void gather_rows_kernel(const uint4 *__restrict__ x, const int *__restrict__ src_token, int d8,
                                   uint4 *__restrict__ xg) {
    const size_t src = (size_t)src_token[blockIdx.x] * d8, dst = (size_t)blockIdx.x * d8;
    for (int c = threadIdx.x; c < d8; c += blockDim.x) xg[dst + c] = x[src + c];
}

// ---- SwiGLU (unfused): H[r, c] = silu(U[r, c]) * U[r, F + c], 8 columns per thread ----
__global__ void swiglu_kernel(const uint4 *__restrict__ u, int rows, int f8, uint4 *__restrict__ h) {
    const size_t n = (size_t)rows * f8;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / f8, c = i % f8;
        const uint4 g4 = u[r * 2 * f8 + c], u4 = u[r * 2 * f8 + f8 + c];
        const uint16_t *g = reinterpret_cast<const uint16_t *>(&g4), *up = reinterpret_cast<const uint16_t *>(&u4);
        uint4 out;
        uint16_t *o = reinterpret_cast<uint16_t *>(&out);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const float gv = bf16_to_float(g[j]);
            o[j] = float_to_bf16(k4::silu(gv) * bf16_to_float(up[j]));
        }
        h[i] = out;
    }
}

// ---- combine: one block per token, 8 columns per thread, slots added in order ----
__global__ void combine_kernel(const uint4 *__restrict__ y, const int *__restrict__ row_of,
                               const float *__restrict__ topk_weight, int topk, int d8, uint4 *__restrict__ out) {
    const int token = blockIdx.x;
    for (int c = threadIdx.x; c < d8; c += blockDim.x) {
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int j = 0; j < topk; ++j) {
            const float w = topk_weight[(size_t)token * topk + j];
            const uint4 v4 = y[(size_t)row_of[(size_t)token * topk + j] * d8 + c];
            const uint16_t *v = reinterpret_cast<const uint16_t *>(&v4);
#pragma unroll
            for (int q = 0; q < 8; ++q) acc[q] = fmaf(w, bf16_to_float(v[q]), acc[q]);
        }
        uint4 o4;
        uint16_t *o = reinterpret_cast<uint16_t *>(&o4);
#pragma unroll
        for (int q = 0; q < 8; ++q) o[q] = float_to_bf16(acc[q]);
        out[(size_t)token * d8 + c] = o4;
    }
}

// ---- setup: W1's packed copy, gate and up interleaved every K4_GLU_PANEL columns
// (k4_packed_w1_column) ----
__global__ void pack_w1_kernel(const uint16_t *__restrict__ w1, size_t rows, int f, uint16_t *__restrict__ w1p) {
    const int n2 = 2 * f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows * n2; i += (size_t)gridDim.x * blockDim.x)
        w1p[i] = w1[i / n2 * n2 + k4_packed_w1_column((int)(i % n2), f)];
}

// `kernel` as a programmatic dependent of the kernel before it in the stream: its CTAs may be
// scheduled once every CTA of that kernel has called griddep_launch_dependents (or exited).
template <typename... Params, typename... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), int ctas, int threads, cudaStream_t st, Args... args) {
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(ctas);
    cfg.blockDim = dim3(threads);
    cfg.stream = st;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, args...));
    return cudaSuccess;
}

// The route kernel of the narrowest width that holds E logits (PER_LANE 1, 2, 4, ..., 128).
template <int PER_LANE>
cudaError_t launch_route(float *logits, int splits, int tokens, int experts, int topk, int renorm, int chunk_tokens,
                         int chunks, int *topk_expert, float *topk_weight, int *row_of, int *chunk_count,
                         cudaStream_t st) {
    if constexpr (PER_LANE < 128)
        if (PER_LANE * WARP < experts)
            return launch_route<2 * PER_LANE>(logits, splits, tokens, experts, topk, renorm, chunk_tokens, chunks,
                                              topk_expert, topk_weight, row_of, chunk_count, st);
    return launch_dependent(route_kernel<PER_LANE>, chunks, K4_ROUTE_THREADS, st, logits, splits, tokens, experts,
                            topk, renorm, chunk_tokens, topk_expert, topk_weight, row_of, chunk_count);
}
static_assert(128 * WARP == K4_ROUTE_MAX_EXPERTS, "the widest route kernel holds K4_ROUTE_MAX_EXPERTS logits");

}  // namespace

// The routing steps' arguments: an expert count the route kernel's widths hold, a top-k among them.
static bool route_args_ok(int experts, int topk) {
    return experts >= 1 && experts <= K4_ROUTE_MAX_EXPERTS && topk >= 1 && topk <= experts;
}

extern "C" cudaError_t k4_route(float *logits, int tokens, int experts, int d, int topk, int renorm,
                                int *topk_expert, float *topk_weight, int *row_of, int *chunk_count,
                                cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    if (!route_args_ok(experts, topk)) return cudaErrorInvalidValue;
    const int chunk_tokens = k4_route_chunk_tokens(tokens, experts);
    return launch_route<1>(logits, k4_router_splits(tokens, experts, d), tokens, experts, topk, renorm, chunk_tokens,
                           (tokens + chunk_tokens - 1) / chunk_tokens, topk_expert, topk_weight, row_of, chunk_count,
                           st);
}

extern "C" cudaError_t k4_permute(const int *topk_expert, int tokens, int topk, int experts, int *chunk_count,
                                  int *row_offsets, int *src_token, int *row_of, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    if (!route_args_ok(experts, topk)) return cudaErrorInvalidValue;
    const int chunk_tokens = k4_route_chunk_tokens(tokens, experts), chunks = k4_route_chunks(tokens, experts);
    CUDA_TRY(launch_dependent(count_scan_kernel, (experts + SCAN_EXPERTS - 1) / SCAN_EXPERTS, SCAN_THREADS, st,
                              chunk_count, chunks, experts));
    const int per_cta = SCATTER_THREADS * SCATTER_PER_THREAD;
    return launch_dependent(scatter_kernel, (tokens * topk + per_cta - 1) / per_cta, SCATTER_THREADS, st, topk_expert,
                            tokens, topk, experts, chunk_tokens, chunks, (const int *)chunk_count, row_offsets,
                            src_token, row_of);
}

extern "C" cudaError_t k4_gather_rows(const uint16_t *x, const int *src_token, int rows, int d, uint16_t *xg,
                                      cudaStream_t st) {
    if (rows <= 0) return cudaSuccess;
    gather_rows_kernel<<<rows, ROW_THREADS, 0, st>>>(reinterpret_cast<const uint4 *>(x), src_token, d / 8,
                                             reinterpret_cast<uint4 *>(xg));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k4_swiglu(const uint16_t *u, int rows, int f, uint16_t *h, cudaStream_t st) {
    if (rows <= 0) return cudaSuccess;
    const size_t vectors = (size_t)rows * (f / 8);
    const size_t needed = (vectors + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS;
    const int blocks = (int)(needed < ELEMENTWISE_MAX_BLOCKS ? needed : ELEMENTWISE_MAX_BLOCKS);
    swiglu_kernel<<<blocks, ELEMENTWISE_THREADS, 0, st>>>(reinterpret_cast<const uint4 *>(u), rows, f / 8,
                                            reinterpret_cast<uint4 *>(h));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k4_combine(const uint16_t *y, const int *row_of, const float *topk_weight, int tokens,
                                  int topk, int d, uint16_t *out, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    combine_kernel<<<tokens, ROW_THREADS, 0, st>>>(reinterpret_cast<const uint4 *>(y), row_of, topk_weight, topk, d / 8,
                                          reinterpret_cast<uint4 *>(out));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k4_pack_w1(const uint16_t *w1, int experts, int d, int f, uint16_t *w1_packed,
                                  cudaStream_t st) {
    pack_w1_kernel<<<PACK_BLOCKS, ELEMENTWISE_THREADS, 0, st>>>(w1, (size_t)experts * d, f, w1_packed);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

