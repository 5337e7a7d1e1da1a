// ceilings.cu — instruction-ceiling microbenchmarks: the rates that no kernel of a stage can beat.
//
//   gg_ceiling_ffma_tflops      fp32 FFMA issue rate (k0's instruction), 2 flops per FFMA
//   gg_ceiling_mma_sync_tflops  mma.sync.m16n8k16 bf16 -> f32 rate (k1/k2's instruction),
//                               16 * 8 * 16 * 2 = 4096 flops per warp instruction
//   gg_read_stream              one pass of 16-byte loads over a buffer (bytes a multiple of
//                               16: the ceiling's 1 GiB) by sms x 8 blocks, nothing written: the
//                               read-only bandwidth ceiling (timed by ceilings.c like the copy)
//
// Each kernel keeps many independent dependency chains per thread (8 FFMA chains, 8 mma
// accumulator sets per warp) in an unrolled loop, so the pipe, not the latency of one chain,
// is the limit; the grid fills every SM at full warp residency. Inputs come from kernel
// arguments and the result is stored only if it equals an impossible sentinel, so the compiler
// must keep all the work but the store never happens. Timed with CUDA events after one
// warm-up launch, best of RUNS launches. Both return 0 on success, else the CUDA error
// (printed by CUDA_TRY with the failing call).
#include <cuda_runtime.h>
#include <stdint.h>

#include "gg_check.h"
#include "ptx/ptx_ampere.cuh"

namespace {

constexpr int RUNS = 5;
constexpr int THREADS = 256;
constexpr int FFMA_CHAINS = 8;
constexpr int FFMA_ITERS = 32768;    // ~2 ms on an H200 at 8 blocks per SM
constexpr int FFMA_BLOCKS_PER_SM = 8;  // 64 warps per SM: full residency (~20 registers)
constexpr int MMA_CHAINS = 8;
constexpr int MMA_ITERS = 8192;
constexpr int MMA_BLOCKS_PER_SM = 4;   // 32 warps per SM: 8 per scheduler
constexpr double MMA_FLOPS = 16.0 * 8.0 * 16.0 * 2.0;
constexpr int READ_BLOCKS_PER_SM = 8;  // 64 warps per SM, four 16-byte loads in flight per thread
constexpr int READ_UNROLL = 4;

__global__ void __launch_bounds__(THREADS)
ffma_kernel(float *sink, float x, float y, int iters, float sentinel) {
    float v[FFMA_CHAINS];
#pragma unroll
    for (int c = 0; c < FFMA_CHAINS; ++c) v[c] = (float)(threadIdx.x + c);
#pragma unroll 16
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int c = 0; c < FFMA_CHAINS; ++c) v[c] = fmaf(v[c], x, y);  // 8 independent chains
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < FFMA_CHAINS; ++c) sum += v[c];
    if (sum == sentinel) sink[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(THREADS)
mma_kernel(float *sink, float x, int iters, float sentinel) {
    const uint32_t ab = gg::pack_bf16x2(x, x);  // every A and B element = x
    const uint32_t a[4] = {ab, ab, ab, ab}, b[2] = {ab, ab};
    float acc[MMA_CHAINS][4] = {};
#pragma unroll 4
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int c = 0; c < MMA_CHAINS; ++c) gg::mma_bf16_16816(acc[c], a, b);  // independent sets
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    if (sum == sentinel) sink[blockIdx.x] = sum;
}

// XOR of every word read; stored only if it equals the sentinel, which the caller picks so that
// it cannot (a buffer of equal words XORs to 0 or to that word).
__global__ void __launch_bounds__(THREADS)
read_kernel(const uint4 *src, size_t n, uint32_t *sink, uint32_t sentinel) {
    const size_t stride = (size_t)gridDim.x * THREADS;
    size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x;
    uint32_t x = 0;
    for (; i + (READ_UNROLL - 1) * stride < n; i += READ_UNROLL * stride) {
        uint4 v[READ_UNROLL];
#pragma unroll
        for (int u = 0; u < READ_UNROLL; ++u) v[u] = src[i + u * stride];  // all issued before any is used
#pragma unroll
        for (int u = 0; u < READ_UNROLL; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) x ^= src[i].x ^ src[i].y ^ src[i].z ^ src[i].w;
    if (x == sentinel) sink[0] = x;
}

int sm_count(int *sms) {
    int dev = 0;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    return 0;
}

// One warm-up launch, then the fastest of RUNS timed launches, in milliseconds.
template <typename Launch>
int best_ms(Launch launch, float *best) {
    cudaEvent_t start, stop;
    CUDA_TRY(cudaEventCreate(&start));
    CUDA_TRY(cudaEventCreate(&stop));
    launch();
    CUDA_LAUNCH_CHECK();
    CUDA_TRY(cudaDeviceSynchronize());
    *best = 1e30f;
    for (int run = 0; run < RUNS; ++run) {
        CUDA_TRY(cudaEventRecord(start));
        launch();
        CUDA_LAUNCH_CHECK();
        CUDA_TRY(cudaEventRecord(stop));
        CUDA_TRY(cudaEventSynchronize(stop));
        float ms = 0.f;
        CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
        if (ms < *best) *best = ms;
    }
    CUDA_TRY(cudaEventDestroy(start));
    CUDA_TRY(cudaEventDestroy(stop));
    return 0;
}

}  // namespace

extern "C" cudaError_t gg_read_stream(const void *src, size_t bytes, int sms, void *sink, unsigned sentinel,
                                      cudaStream_t stream) {
    read_kernel<<<sms * READ_BLOCKS_PER_SM, THREADS, 0, stream>>>(static_cast<const uint4 *>(src), bytes / 16,
                                                                    static_cast<uint32_t *>(sink), sentinel);
    return cudaGetLastError();
}

extern "C" int gg_ceiling_ffma_tflops(double *tflops) {
    int sms = 0, err = sm_count(&sms);
    if (err) return err;
    const int blocks = sms * FFMA_BLOCKS_PER_SM;
    float *sink = nullptr, ms = 0.f;
    CUDA_TRY(cudaMalloc(&sink, blocks * sizeof(float)));
    err = best_ms([&] { ffma_kernel<<<blocks, THREADS>>>(sink, 0.999f, 0.001f, FFMA_ITERS, -1.f); },
                  &ms);
    CUDA_TRY(cudaFree(sink));
    if (err) return err;
    const double flops = 2.0 * FFMA_CHAINS * FFMA_ITERS * (double)blocks * THREADS;
    *tflops = flops / (ms * 1e-3) / 1e12;
    return 0;
}

extern "C" int gg_ceiling_mma_sync_tflops(double *tflops) {
    int sms = 0, err = sm_count(&sms);
    if (err) return err;
    const int blocks = sms * MMA_BLOCKS_PER_SM;
    float *sink = nullptr, ms = 0.f;
    CUDA_TRY(cudaMalloc(&sink, blocks * sizeof(float)));
    // x = 1/16: every product is 2^-8, so the sums stay far from overflow (and never -1).
    err = best_ms([&] { mma_kernel<<<blocks, THREADS>>>(sink, 0.0625f, MMA_ITERS, -1.f); }, &ms);
    CUDA_TRY(cudaFree(sink));
    if (err) return err;
    const double warps = (double)blocks * (THREADS / 32);
    *tflops = MMA_FLOPS * MMA_CHAINS * MMA_ITERS * warps / (ms * 1e-3) / 1e12;
    return 0;
}
