// Device helpers the k4_moe kernels share (k4_moe_steps.cu, k4_gemm1_swiglu.cu).
#pragma once
#include <cuda_bf16.h>
#include <stdint.h>

namespace k4 {

__device__ __forceinline__ float bf16_to_float(uint16_t v) { return __uint_as_float((uint32_t)v << 16); }
__device__ __forceinline__ uint16_t float_to_bf16(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
// SwiGLU's gate activation: silu(g) = g * sigmoid(g).
__device__ __forceinline__ float silu(float g) { return g / (1.0f + __expf(-g)); }

}  // namespace k4
