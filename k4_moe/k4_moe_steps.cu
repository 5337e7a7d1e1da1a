// k4_moe steps: the small kernels around the two grouped GEMMs (k4_moe.h has the layer).
//
//   route    k4_route_topk     softmax over a token's E bf16 logits, top-k, weights
//   permute  k4_permute        per-chunk counts -> per-expert row offsets -> stable scatter
//   gather   k4_gather_rows    Xg[r] = X[src_token[r]]           (unfused path only)
//   swiglu   k4_swiglu         H = silu(U_gate) * U_up           (unfused path only)
//   combine  k4_combine        out[t] = sum_j w_tj Y[row(t, j)]
//   setup    k4_pack_w1, k4_set_route_offsets
//
// Determinism: no floating-point atomics anywhere. The permutation orders each expert's rows
// by (token, slot), whatever order the blocks run in: a chunk's place among the chunks and an
// assignment's place inside its chunk are fixed by index, not by arrival. The combine adds a
// token's k rows in slot order. Same input, same bits.
#include <cuda_bf16.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "gg_check.h"
#include "k4_moe.h"
#include "k4_device.cuh"

namespace {

constexpr int WARP = 32;
constexpr int ROUTE_MAX_EXPERTS = 256;  // the routing and permutation tables below (k4-router lifts it)
constexpr int MAX_PER_LANE = ROUTE_MAX_EXPERTS / WARP;  // logits a lane holds
constexpr int PERMUTE_THREADS = 256;                 // assignments ranked per round of a chunk
constexpr int ROUTE_WARPS = 8;                       // tokens per routing block (a warp each)
constexpr int ROW_THREADS = 128;                     // gather / combine: one block per row, 16 B a thread
constexpr int ELEMENTWISE_THREADS = 256;             // swiglu, pack_w1: grid-stride loops
constexpr int ELEMENTWISE_MAX_BLOCKS = 4096;         // swiglu: enough to fill the GPU, then stride
constexpr int PACK_BLOCKS = 1024;                    // pack_w1 (once per layer): grid-stride
static_assert(K4_CHUNK % PERMUTE_THREADS == 0, "a chunk is whole rounds");
static_assert(ROUTE_MAX_EXPERTS <= PERMUTE_THREADS, "the scan gives each expert one thread");

using k4::bf16_to_float;
using k4::float_to_bf16;

// ---- route: one warp per token; lane l holds logits l, l + 32, ... ----
// Top-k by k rounds of a warp arg-max over the experts not yet chosen; ties go to the lower
// expert index. Softmax in fp32 from the bf16 logits (as a bf16 model's router does).
__global__ void route_topk_kernel(const uint16_t *__restrict__ logits, int tokens, int experts, int topk,
                                  int renorm, int *__restrict__ topk_expert, float *__restrict__ topk_weight) {
    const int token = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (token >= tokens) return;
    float v[MAX_PER_LANE];
    float top = -INFINITY;
#pragma unroll
    for (int i = 0; i < MAX_PER_LANE; ++i) {
        const int e = lane + i * WARP;
        v[i] = e < experts ? bf16_to_float(logits[(size_t)token * experts + e]) : -INFINITY;
        if (isnan(v[i])) v[i] = -INFINITY;  // a NaN logit is never chosen ahead of a number
        top = fmaxf(top, v[i]);
    }
    for (int o = WARP / 2; o > 0; o /= 2) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, o));
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < MAX_PER_LANE; ++i) sum += lane + i * WARP < experts ? __expf(v[i] - top) : 0.f;
    for (int o = WARP / 2; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);

    unsigned taken = 0;  // bit i: expert lane + 32 i already chosen
    float chosen_sum = 0.f, my_weight = 0.f;
    int my_expert = -1;  // lane j < topk keeps slot j
    for (int j = 0; j < topk; ++j) {
        float best = -INFINITY;
        int best_e = INT_MAX;
#pragma unroll
        for (int i = 0; i < MAX_PER_LANE; ++i) {
            const int e = lane + i * WARP;
            if (e < experts && !(taken >> i & 1u) && (v[i] > best || (v[i] == best && e < best_e))) {
                best = v[i];
                best_e = e;
            }
        }
        for (int o = WARP / 2; o > 0; o /= 2) {
            const float ob = __shfl_xor_sync(0xffffffffu, best, o);
            const int oe = __shfl_xor_sync(0xffffffffu, best_e, o);
            if (ob > best || (ob == best && oe < best_e)) {
                best = ob;
                best_e = oe;
            }
        }
        if (best_e % WARP == lane) taken |= 1u << (best_e / WARP);
        const float p = __expf(best - top) / sum;
        chosen_sum += p;
        if (lane == j % WARP) {
            my_expert = best_e;
            my_weight = p;
        }
        if (j % WARP == WARP - 1 || j == topk - 1) {  // flush 32 slots at a time
            const int slot = j / WARP * WARP + lane;
            if (slot <= j) {
                topk_expert[(size_t)token * topk + slot] = my_expert;
                topk_weight[(size_t)token * topk + slot] = my_weight;
            }
        }
    }
    if (renorm)  // each lane rescales the slots it wrote
        for (int slot = lane; slot < topk; slot += WARP) topk_weight[(size_t)token * topk + slot] /= chosen_sum;
}

// ---- permute, 1/3: assignments (token, slot) a = token * topk + slot in chunks of K4_CHUNK;
// count each expert's assignments per chunk ----
__global__ void permute_count_kernel(const int *__restrict__ topk_expert, int assignments, int experts,
                                     int *__restrict__ chunk_base) {
    __shared__ int count[ROUTE_MAX_EXPERTS];
    for (int e = threadIdx.x; e < experts; e += blockDim.x) count[e] = 0;
    __syncthreads();
    const int first = blockIdx.x * K4_CHUNK;
    for (int a = first + threadIdx.x; a < min(first + K4_CHUNK, assignments); a += blockDim.x)
        atomicAdd(&count[topk_expert[a]], 1);  // integer: order-free
    __syncthreads();
    for (int e = threadIdx.x; e < experts; e += blockDim.x) chunk_base[(size_t)blockIdx.x * experts + e] = count[e];
}

// ---- permute, 2/3: one block. Thread e turns expert e's per-chunk counts into the rows of e
// in earlier chunks (in place), then the block scans the experts' totals into row offsets ----
__global__ void permute_scan_kernel(int *__restrict__ chunk_base, int chunks, int experts,
                                    int *__restrict__ row_offsets) {
    __shared__ int total[PERMUTE_THREADS];
    const int e = threadIdx.x;
    int run = 0;
    if (e < experts)
        for (int c = 0; c < chunks; ++c) {
            const int n = chunk_base[(size_t)c * experts + e];
            chunk_base[(size_t)c * experts + e] = run;
            run += n;
        }
    total[e] = e < experts ? run : 0;
    __syncthreads();
    for (int o = 1; o < PERMUTE_THREADS; o *= 2) {  // inclusive Hillis-Steele scan
        const int add = e >= o ? total[e - o] : 0;
        __syncthreads();
        total[e] += add;
        __syncthreads();
    }
    if (e < experts) row_offsets[e + 1] = total[e];
    if (e == 0) row_offsets[0] = 0;
}

// ---- permute, 3/3: block per chunk, rounds of 256 assignments in order. An assignment's row:
// its expert's offset + rows of that expert in earlier chunks + earlier rounds of this chunk
// + earlier assignments of this round ----
__global__ void permute_scatter_kernel(const int *__restrict__ topk_expert, int assignments, int topk,
                                       int experts, const int *__restrict__ chunk_base,
                                       const int *__restrict__ row_offsets, int *__restrict__ src_token,
                                       int *__restrict__ row_of) {
    __shared__ int seen[ROUTE_MAX_EXPERTS];       // this chunk's rows per expert so far
    __shared__ int round_expert[PERMUTE_THREADS];
    const int i = threadIdx.x;
    for (int e = i; e < experts; e += PERMUTE_THREADS)
        seen[e] = row_offsets[e] + chunk_base[(size_t)blockIdx.x * experts + e];
    const int first = blockIdx.x * K4_CHUNK;
    for (int r0 = first; r0 < min(first + K4_CHUNK, assignments); r0 += PERMUTE_THREADS) {
        const int a = r0 + i;
        const int e = a < assignments ? topk_expert[a] : -1;
        round_expert[i] = e;
        __syncthreads();
        if (e >= 0) {
            int before = 0;
            for (int j = 0; j < i; ++j) before += round_expert[j] == e;
            const int row = seen[e] + before;
            src_token[row] = a / topk;
            row_of[a] = row;
        }
        __syncthreads();  // every thread has read seen and round_expert
        if (i < experts) {
            int n = 0;
            for (int j = 0; j < PERMUTE_THREADS; ++j) n += round_expert[j] == i;
            seen[i] += n;
        }
        __syncthreads();  // round_expert is read above before the next round overwrites it
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

__global__ void set_route_offsets_kernel(int *off, int tokens) {
    off[0] = 0;
    off[1] = tokens;
}

}  // namespace

extern "C" cudaError_t k4_route_topk(const uint16_t *logits, int tokens, int experts, int topk, int renorm,
                                     int *topk_expert, float *topk_weight, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    if (experts > ROUTE_MAX_EXPERTS) return cudaErrorNotSupported;  // never past the tables
    route_topk_kernel<<<(tokens + ROUTE_WARPS - 1) / ROUTE_WARPS, ROUTE_WARPS * WARP, 0, st>>>(logits, tokens, experts, topk, renorm,
                                                                            topk_expert, topk_weight);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k4_permute(const int *topk_expert, int tokens, int topk, int experts, int *chunk_base,
                                  int *row_offsets, int *src_token, int *row_of, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    if (experts > ROUTE_MAX_EXPERTS) return cudaErrorNotSupported;  // never past the tables
    const int assignments = tokens * topk, chunks = (assignments + K4_CHUNK - 1) / K4_CHUNK;
    permute_count_kernel<<<chunks, PERMUTE_THREADS, 0, st>>>(topk_expert, assignments, experts, chunk_base);
    CUDA_LAUNCH_CHECK();
    permute_scan_kernel<<<1, PERMUTE_THREADS, 0, st>>>(chunk_base, chunks, experts, row_offsets);
    CUDA_LAUNCH_CHECK();
    permute_scatter_kernel<<<chunks, PERMUTE_THREADS, 0, st>>>(topk_expert, assignments, topk, experts, chunk_base,
                                                               row_offsets, src_token, row_of);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
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

extern "C" cudaError_t k4_set_route_offsets(int *route_offsets, int tokens, cudaStream_t st) {
    set_route_offsets_kernel<<<1, 1, 0, st>>>(route_offsets, tokens);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
