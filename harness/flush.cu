// The L2 flush a timed rep starts from (timing.c): a read of a buffer twice the size of L2.
//
// Why a read, not a memset: a memset leaves the L2 full of its own dirty lines, and the next
// kernel, the one being timed, pays for writing them back to DRAM while it reads its inputs
// (results/h200/evidence/flush-ncu-126c809c6c39.txt and flush-ab-126c809c6c39.txt). Reading
// evicts everything that was there (writing back whatever the previous rep left dirty, before
// the timed region) and leaves only clean lines of a buffer nobody uses.
#include <stdint.h>

#include "gg_check.h"

namespace {

__global__ void scrub_read(uint4 *p, size_t n) {
    uint32_t x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    // A store the compiler cannot prove dead keeps every load. Should the data ever hit the
    // constant, the store only changes a word of this unused buffer.
    if (x == 0x5eed5eedu) p[0].x = x;
}

}  // namespace

extern "C" cudaError_t gg_l2_scrub_read(void *p, size_t bytes, cudaStream_t stream) {
    if (bytes < sizeof(uint4)) return cudaSuccess;
    scrub_read<<<1024, 256, 0, stream>>>(static_cast<uint4 *>(p), bytes / sizeof(uint4));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
