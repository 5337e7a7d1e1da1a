// The MoE layer's reference (harness/moe.c), beside cuBLAS: the few elementwise steps of the
// layer written as plainly as possible, in fp32 with the accurate expf. Not timed.
#include <cuda_bf16.h>
#include <stdint.h>

#include "gg_check.h"

namespace {

__global__ void gather_ref(const uint16_t *x, const int *src_token, int rows, int d, uint16_t *xg) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)rows * d;
         i += (size_t)gridDim.x * blockDim.x)
        xg[i] = x[(size_t)src_token[i / d] * d + i % d];
}

// H = bf16(silu(gate) * up) from the fp32 GEMM1 output: the layer stores H in bf16, and so
// does the reference, so the rounding of H is not counted as an error (README, "Checks").
__global__ void swiglu_ref(const float *u, int rows, int f, uint16_t *h) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)rows * f;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / f, c = i % f;
        const float g = u[r * 2 * f + c], up = u[r * 2 * f + f + c];
        h[i] = __bfloat16_as_ushort(__float2bfloat16_rn(g / (1.0f + expf(-g)) * up));
    }
}

__global__ void combine_ref(const float *y, const int *row_of, const float *w, int tokens, int topk, int d,
                            float *out) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)tokens * d;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t t = i / d, c = i % d;
        float acc = 0.f;
        for (int j = 0; j < topk; ++j) acc += w[t * topk + j] * y[(size_t)row_of[t * topk + j] * d + c];
        out[i] = acc;
    }
}

// The router's logits in fp64: each bf16 product is exact and the K-long sum errs far below
// the routing bound (harness/gg_moe_bound.h); sum |x w| beside it for that bound.
__global__ void logits_ref(const uint16_t *x, const uint16_t *wr, int tokens, int experts, int d, double *exact,
                           double *abs_dot) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)tokens * experts;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t t = i / experts, e = i % experts;
        double sum = 0, abs_sum = 0;
        for (int q = 0; q < d; ++q) {
            const double p = (double)__uint_as_float((uint32_t)x[t * d + q] << 16) *
                             (double)__uint_as_float((uint32_t)wr[(size_t)q * experts + e] << 16);
            sum += p;
            abs_sum += fabs(p);
        }
        exact[i] = sum;
        abs_dot[i] = abs_sum;
    }
}

// ---- the backward's (harness/moe_backward.c): fp32, the accurate expf, every gradient the
// layer stores in bf16 as a GEMM operand (dY, dU, dlogits) rounded here too, so that cuBLAS
// takes them as the layer's GEMMs do ----

// dw[t, s] = <dOut[t], Y[r]>; dY[r] = bf16(w[t, s] dOut[t]). A thread per (token, slot).
__global__ void combine_backward_ref(const uint16_t *dout, const float *y, const int *row_of, const float *w,
                                     int tokens, int topk, int d, float *dw, uint16_t *dy) {
    for (size_t a = blockIdx.x * (size_t)blockDim.x + threadIdx.x; a < (size_t)tokens * topk;
         a += (size_t)gridDim.x * blockDim.x) {
        const size_t t = a / topk, r = (size_t)row_of[a];
        float dot = 0.f;
        for (int c = 0; c < d; ++c) {
            const float g = __uint_as_float((uint32_t)dout[t * d + c] << 16);
            dot += g * y[r * d + c];
            dy[r * d + c] = __bfloat16_as_ushort(__float2bfloat16_rn(w[a] * g));
        }
        dw[a] = dot;
    }
}

// dG = dH U silu'(G), dU = dH silu(G), from the fp32 U = [G | U] and dH; stored bf16.
__global__ void swiglu_backward_ref(const float *u, const float *dh, int rows, int f, uint16_t *du) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)rows * f;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / f, c = i % f;
        const float g = u[r * 2 * f + c], up = u[r * 2 * f + f + c], s = 1.0f / (1.0f + expf(-g));
        du[r * 2 * f + c] = __bfloat16_as_ushort(__float2bfloat16_rn(dh[i] * up * (s + g * s * (1.0f - s))));
        du[r * 2 * f + f + c] = __bfloat16_as_ushort(__float2bfloat16_rn(dh[i] * g * s));
    }
}

// dlogits [T x E] in bf16, a thread per token, from the layer's fp32 logits, choice and weights:
// p = softmax(z), a NaN logit taken as -inf (p = 0) as the forward's route takes it; w_s =
// p_{e_s} (raw) or p_{e_s} / sum_s p_{e_s} (renorm); c = sum_s dw_s w_s;
// dz_j = q_j (g_j - c), q = p over every expert (raw) or w over the chosen alone (renorm).
__global__ void router_backward_ref(const float *logits, const int *expert, const float *w, const float *dw,
                                    int tokens, int experts, int topk, int renorm, uint16_t *dlogits) {
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < (size_t)tokens;
         t += (size_t)gridDim.x * blockDim.x) {
        const float *z = logits + t * experts;
        float top = -INFINITY, sum = 0.f, c = 0.f;
        for (int e = 0; e < experts; ++e) top = fmaxf(top, isnan(z[e]) ? -INFINITY : z[e]);
        for (int e = 0; e < experts; ++e) sum += expf((isnan(z[e]) ? -INFINITY : z[e]) - top);
        for (int s = 0; s < topk; ++s) c += dw[t * topk + s] * w[t * topk + s];
        for (int e = 0; e < experts; ++e) {
            float g = 0.f, q = renorm ? 0.f : expf((isnan(z[e]) ? -INFINITY : z[e]) - top) / sum;
            for (int s = 0; s < topk; ++s)
                if (expert[t * topk + s] == e) {
                    g = dw[t * topk + s];
                    q = w[t * topk + s];
                }
            dlogits[t * experts + e] = __bfloat16_as_ushort(__float2bfloat16_rn(q * (g - c)));
        }
    }
}

// dX[t] = dX_r[t] + sum_s dXg[row_of(t, s)], fp32.
__global__ void gather_sum_ref(const float *dxg, const int *row_of, const float *dxr, int tokens, int topk, int d,
                               float *dx) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)tokens * d;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t t = i / d, c = i % d;
        float acc = dxr[i];
        for (int j = 0; j < topk; ++j) acc += dxg[(size_t)row_of[t * topk + j] * d + c];
        dx[i] = acc;
    }
}

__global__ void square_ref(const uint16_t *x, size_t n, float *sq) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float v = __bfloat162float(__ushort_as_bfloat16(x[i]));
        sq[i] = v * v;
    }
}

}  // namespace

extern "C" cudaError_t gg_moe_ref_square(const uint16_t *x, size_t n, float *sq, cudaStream_t st) {
    square_ref<<<1024, 256, 0, st>>>(x, n, sq);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_combine_backward(const uint16_t *dout, const float *y, const int *row_of,
                                                   const float *w, int tokens, int topk, int d, float *dw,
                                                   uint16_t *dy, cudaStream_t st) {
    combine_backward_ref<<<1024, 256, 0, st>>>(dout, y, row_of, w, tokens, topk, d, dw, dy);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_swiglu_backward(const float *u, const float *dh, int rows, int f, uint16_t *du,
                                                  cudaStream_t st) {
    swiglu_backward_ref<<<1024, 256, 0, st>>>(u, dh, rows, f, du);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_router_backward(const float *logits, const int *expert, const float *w,
                                                  const float *dw, int tokens, int experts, int topk, int renorm,
                                                  uint16_t *dlogits, cudaStream_t st) {
    router_backward_ref<<<1024, 128, 0, st>>>(logits, expert, w, dw, tokens, experts, topk, renorm, dlogits);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_gather_sum(const float *dxg, const int *row_of, const float *dxr, int tokens,
                                             int topk, int d, float *dx, cudaStream_t st) {
    gather_sum_ref<<<1024, 256, 0, st>>>(dxg, row_of, dxr, tokens, topk, d, dx);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

extern "C" cudaError_t gg_moe_ref_gather(const uint16_t *x, const int *src_token, int rows, int d, uint16_t *xg,
                                         cudaStream_t st) {
    gather_ref<<<1024, 256, 0, st>>>(x, src_token, rows, d, xg);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_swiglu(const float *u, int rows, int f, uint16_t *h, cudaStream_t st) {
    swiglu_ref<<<1024, 256, 0, st>>>(u, rows, f, h);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_combine(const float *y, const int *row_of, const float *w, int tokens, int topk,
                                          int d, float *out, cudaStream_t st) {
    combine_ref<<<1024, 256, 0, st>>>(y, row_of, w, tokens, topk, d, out);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t gg_moe_ref_logits(const uint16_t *x, const uint16_t *wr, int tokens, int experts, int d,
                                         double *exact, double *abs_dot, cudaStream_t st) {
    logits_ref<<<1024, 256, 0, st>>>(x, wr, tokens, experts, d, exact, abs_dot);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
