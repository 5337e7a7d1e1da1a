// k5_moe_backward steps: the small kernels around the layer backward's grouped GEMMs
// (k5_moe_backward.h has the layer).
//
//   combine  k5_combine_backward  per token: dw[t, s] = <dOut[t], Y[r]>, dY[r] = w[t, s] dOut[t]
//   GEMM1    k5_swiglu_backward   dG = dH U silu'(G), dU = dH silu(G), from U = [G | U]
//   route    k5_router_backward   a warp per token: dlogits (k5_router_dlogit), bf16, pad zero
//   permute  k5_gather_sum        per token: dX[t] = dX_r[t] + sum_s dXg[r]   (slot order)
//
// Determinism as in k4: no floating-point atomics; each token's sums run in slot order and
// each dot product in a fixed tree, so the same input gives the same bits.
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>

#include "gg_check.h"
#include "k4_moe/k4_device.cuh"
#include "k5_moe_backward.h"

namespace {

constexpr int WARP = 32;
constexpr int ROW_THREADS = 128;            // combine / gather-sum: one block per token, 8 columns a thread
constexpr int ROW_WARPS = ROW_THREADS / WARP;
constexpr int ELEMENTWISE_THREADS = 256;    // swiglu backward: grid-stride
constexpr int ELEMENTWISE_MAX_BLOCKS = 4096;
constexpr int ROUTER_THREADS = 256;         // router backward: a warp per token
static_assert(ROW_THREADS % WARP == 0 && ROUTER_THREADS % WARP == 0, "whole warps");

using k4::bf16_to_float;
using k4::float_to_bf16;

// ---- combine backward: one block per token ----
// For each slot s in order: dY[r] = bf16(w dOut[t]) (the scatter: the combine's gather reversed,
// each routed row written once, by its own token) and dw = <dOut[t], Y[r]>: each thread's 8-column
// partial, a warp tree, then the ROW_WARPS warp sums in order.
__global__ void __launch_bounds__(ROW_THREADS)
combine_backward_kernel(const uint4 *__restrict__ dout, const uint4 *__restrict__ y, const int *__restrict__ row_of,
                        const float *__restrict__ topk_weight, int topk, int d8, float *__restrict__ dw,
                        uint4 *__restrict__ dy) {
    __shared__ float warp_dot[ROW_WARPS];
    const int token = blockIdx.x, warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    for (int j = 0; j < topk; ++j) {
        const size_t a = (size_t)token * topk + j, r = (size_t)row_of[a];
        const float w = topk_weight[a];
        float dot = 0.f;
        for (int c = threadIdx.x; c < d8; c += ROW_THREADS) {
            const uint4 g4 = dout[(size_t)token * d8 + c], y4 = y[r * d8 + c];
            const uint16_t *g = reinterpret_cast<const uint16_t *>(&g4), *v = reinterpret_cast<const uint16_t *>(&y4);
            uint4 o4;
            uint16_t *o = reinterpret_cast<uint16_t *>(&o4);
#pragma unroll
            for (int q = 0; q < 8; ++q) {
                const float gq = bf16_to_float(g[q]);
                dot = fmaf(gq, bf16_to_float(v[q]), dot);
                o[q] = float_to_bf16(w * gq);
            }
            dy[r * d8 + c] = o4;
        }
        dot = k4::warp_sum(dot);
        if (lane == 0) warp_dot[warp] = dot;
        __syncthreads();
        if (threadIdx.x == 0) {
            float sum = 0.f;
            for (int i = 0; i < ROW_WARPS; ++i) sum += warp_dot[i];
            dw[a] = sum;
        }
        __syncthreads();  // warp_dot is free for the next slot
    }
}

// ---- SwiGLU backward: 8 columns per thread; dU_cat[r] = [dG | dU] beside U_cat[r] = [G | U] ----
__global__ void swiglu_backward_kernel(const uint4 *__restrict__ u, const uint4 *__restrict__ dh, int rows, int f8,
                                       uint4 *__restrict__ du) {
    const size_t n = (size_t)rows * f8;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / f8, c = i % f8;
        const uint4 g4 = u[r * 2 * f8 + c], u4 = u[r * 2 * f8 + f8 + c], h4 = dh[i];
        const uint16_t *g = reinterpret_cast<const uint16_t *>(&g4), *up = reinterpret_cast<const uint16_t *>(&u4),
                       *dhv = reinterpret_cast<const uint16_t *>(&h4);
        uint4 dg4, du4;
        uint16_t *dg = reinterpret_cast<uint16_t *>(&dg4), *duv = reinterpret_cast<uint16_t *>(&du4);
#pragma unroll
        for (int q = 0; q < 8; ++q) {
            float gq, uq;
            k5_swiglu_grad(bf16_to_float(g[q]), bf16_to_float(up[q]), bf16_to_float(dhv[q]), &gq, &uq);
            dg[q] = float_to_bf16(gq);
            duv[q] = float_to_bf16(uq);
        }
        du[r * 2 * f8 + c] = dg4;
        du[r * 2 * f8 + f8 + c] = du4;
    }
}

// ---- router backward: a warp per token ----
// c = sum_s dw_s w_s (lanes over slots, a warp tree). Pass 1, lanes over the np = k4_router_n(E)
// columns: raw weights, every logit as not chosen, p_j (0 - c), p_j = softmax of the forward's
// logits (max and sum as k4_route takes them, a NaN logit as -inf: k5_router_logit); renormalised,
// 0; the pad columns 0. Pass 2, after __syncwarp (which orders the warp's global writes), lanes
// over slots: the chosen experts' w_s (dw_s - c) over pass 1's value. Block 0 also writes the router GEMMs' offsets {0, T}.
__global__ void __launch_bounds__(ROUTER_THREADS)
router_backward_kernel(const float *__restrict__ logits, const int *__restrict__ topk_expert,
                       const float *__restrict__ topk_weight, const float *__restrict__ dw, int tokens, int experts,
                       int np, int topk, int renorm, uint16_t *__restrict__ dlogits, int *__restrict__ router_offsets) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        router_offsets[0] = 0;
        router_offsets[1] = tokens;
    }
    const int lane = threadIdx.x % WARP;
    const int t = blockIdx.x * (ROUTER_THREADS / WARP) + threadIdx.x / WARP;
    if (t >= tokens) return;  // whole warps leave together
    const float *z = logits + (size_t)t * experts;
    const int *chosen = topk_expert + (size_t)t * topk;
    const float *w = topk_weight + (size_t)t * topk, *g = dw + (size_t)t * topk;
    uint16_t *out = dlogits + (size_t)t * np;
    float c = 0.f;
    for (int s = lane; s < topk; s += WARP) c = fmaf(g[s], w[s], c);
    c = k4::warp_sum(c);
    float top = -INFINITY, sum = 0.f;
    if (!renorm) {
        for (int e = lane; e < experts; e += WARP) top = fmaxf(top, k5_router_logit(z[e]));
        top = k4::warp_max(top);
        for (int e = lane; e < experts; e += WARP) sum += expf(k5_router_logit(z[e]) - top);
        sum = k4::warp_sum(sum);
    }
    for (int e = lane; e < np; e += WARP)
        out[e] = float_to_bf16(renorm || e >= experts
                                   ? 0.f
                                   : k5_router_dlogit(expf(k5_router_logit(z[e]) - top) / sum, 0.f, c));
    __syncwarp();
    for (int s = lane; s < topk; s += WARP) out[chosen[s]] = float_to_bf16(k5_router_dlogit(w[s], g[s], c));
}

// ---- gather-sum: one block per token, 8 columns a thread: dX[t] = dX_r[t] + sum_s dXg[r] ----
__global__ void __launch_bounds__(ROW_THREADS)
gather_sum_kernel(const uint4 *__restrict__ dxg, const int *__restrict__ row_of, const uint4 *__restrict__ dx_router,
                  int topk, int d8, uint4 *__restrict__ dx) {
    const int token = blockIdx.x;
    for (int c = threadIdx.x; c < d8; c += ROW_THREADS) {
        float acc[8];
        const uint4 r4 = dx_router[(size_t)token * d8 + c];
        const uint16_t *rv = reinterpret_cast<const uint16_t *>(&r4);
#pragma unroll
        for (int q = 0; q < 8; ++q) acc[q] = bf16_to_float(rv[q]);
        for (int j = 0; j < topk; ++j) {
            const uint4 v4 = dxg[(size_t)row_of[(size_t)token * topk + j] * d8 + c];
            const uint16_t *v = reinterpret_cast<const uint16_t *>(&v4);
#pragma unroll
            for (int q = 0; q < 8; ++q) acc[q] += bf16_to_float(v[q]);
        }
        uint4 o4;
        uint16_t *o = reinterpret_cast<uint16_t *>(&o4);
#pragma unroll
        for (int q = 0; q < 8; ++q) o[q] = float_to_bf16(acc[q]);
        dx[(size_t)token * d8 + c] = o4;
    }
}

}  // namespace

extern "C" cudaError_t k5_moe_combine_backward(const uint16_t *dout, const uint16_t *y, const int *row_of,
                                               const float *topk_weight, int tokens, int topk, int d, float *dw,
                                               uint16_t *dy, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    combine_backward_kernel<<<tokens, ROW_THREADS, 0, st>>>(reinterpret_cast<const uint4 *>(dout),
                                                            reinterpret_cast<const uint4 *>(y), row_of, topk_weight,
                                                            topk, d / 8, dw, reinterpret_cast<uint4 *>(dy));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k5_moe_swiglu_backward(const uint16_t *u, const uint16_t *dh, int rows, int f, uint16_t *du,
                                              cudaStream_t st) {
    if (rows <= 0) return cudaSuccess;
    const size_t vectors = (size_t)rows * (f / 8);
    const size_t needed = (vectors + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS;
    const int blocks = (int)(needed < ELEMENTWISE_MAX_BLOCKS ? needed : ELEMENTWISE_MAX_BLOCKS);
    swiglu_backward_kernel<<<blocks, ELEMENTWISE_THREADS, 0, st>>>(reinterpret_cast<const uint4 *>(u),
                                                                  reinterpret_cast<const uint4 *>(dh), rows, f / 8,
                                                                  reinterpret_cast<uint4 *>(du));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k5_moe_router_backward(const float *logits, const int *topk_expert, const float *topk_weight,
                                              const float *dw, int tokens, int experts, int topk, int renorm,
                                              uint16_t *dlogits, int *router_offsets, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    constexpr int per_block = ROUTER_THREADS / WARP;
    router_backward_kernel<<<(tokens + per_block - 1) / per_block, ROUTER_THREADS, 0, st>>>(
        logits, topk_expert, topk_weight, dw, tokens, experts, k4_router_n(experts), topk, renorm, dlogits,
        router_offsets);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t k5_moe_gather_sum(const uint16_t *dxg, const int *row_of, const uint16_t *dx_router, int tokens,
                                         int topk, int d, uint16_t *dx, cudaStream_t st) {
    if (tokens <= 0) return cudaSuccess;
    gather_sum_kernel<<<tokens, ROW_THREADS, 0, st>>>(reinterpret_cast<const uint4 *>(dxg), row_of,
                                                      reinterpret_cast<const uint4 *>(dx_router), topk, d / 8,
                                                      reinterpret_cast<uint4 *>(dx));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
