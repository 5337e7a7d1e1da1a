// Device helpers the k4_moe kernels share (k4_moe_steps.cu, k4_gemm1_swiglu.cu), and the layer's
// backward (k5_backward/k5_moe_backward_steps.cu).
#pragma once
#include <cuda_bf16.h>
#include <stdint.h>

namespace k4 {

__device__ __forceinline__ float bf16_to_float(uint16_t v) { return __uint_as_float((uint32_t)v << 16); }
__device__ __forceinline__ uint16_t float_to_bf16(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
// SwiGLU's gate activation: silu(g) = g * sigmoid(g).
__device__ __forceinline__ float silu(float g) { return g / (1.0f + __expf(-g)); }
// A full warp's max and sum of v (xor butterfly: every lane gets the result, the same bits on
// every lane): the router's softmax again in the backward (the same max as the route kernel's
// redux.sync over keys) and its gradient, the combine's backward.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

}  // namespace k4
