// Device-side input generation: fresh random bf16 inputs for every check, drawn from a
// counter-based hash of (seed, index), so gigabytes of B are filled in a millisecond and
// the same seed gives the same inputs on any GPU.
#include <cuda_bf16.h>
#include <stdint.h>

#include "gg_check.h"

namespace {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Uniform in [-1, 1), rounded to bf16: products are exact in fp32, and an output's typical
// magnitude is sqrt(k / 9), which sets the check's absolute tolerance (see gpu.c).
__global__ void fill_uniform_bf16(__nv_bfloat16 *p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = splitmix64(seed * 0x100000001b3ull + i);
        const float u = (float)(r >> 40) * (1.0f / 16777216.0f);  // [0, 1) with 24 bits
        p[i] = __float2bfloat16_rn(2.0f * u - 1.0f);
    }
}

}  // namespace

extern "C" cudaError_t gg_fill_uniform_bf16(uint16_t *p, size_t n, unsigned long long seed,
                                            cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    fill_uniform_bf16<<<1024, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16 *>(p), n, seed);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

namespace {
// The same draw times a power of two (exact in bf16): inputs whose products keep a layer's
// activations near 1 (harness/moe.c).
__global__ void fill_uniform_scaled_bf16(__nv_bfloat16 *p, size_t n, uint64_t seed, float scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = splitmix64(seed * 0x100000001b3ull + i);
        const float u = (float)(r >> 40) * (1.0f / 16777216.0f);
        p[i] = __float2bfloat16_rn(scale * (2.0f * u - 1.0f));
    }
}
}  // namespace

extern "C" cudaError_t gg_fill_uniform_scaled_bf16(uint16_t *p, size_t n, unsigned long long seed, float scale,
                                                   cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    fill_uniform_scaled_bf16<<<1024, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16 *>(p), n, seed, scale);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
