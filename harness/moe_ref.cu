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

}  // namespace

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
