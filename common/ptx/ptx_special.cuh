// Special registers read by the tracer (common/gg_trace.cuh); nothing else reads them, so an
// untraced kernel's SASS has no SR_GLOBALTIMER (tests/sass_trace.sh checks it).
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/
#pragma once
#include <stdint.h>

namespace gg {

// #special-registers-globaltimer-globaltimer-lo-globaltimer-hi
// A 64-bit nanosecond clock shared by every SM, so times from different SMs compare. In the
// sm_90a SASS one CS2R of SR_GLOBALTIMERLO (the pair of registers).
__device__ __forceinline__ uint64_t globaltimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

// #special-registers-smid
// The SM this thread runs on. The numbering need not be contiguous (%nsmid bounds it), so the
// decoder keys on the value rather than treating it as an index below the SM count.
__device__ __forceinline__ uint32_t smid() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(s));
    return s;
}

}  // namespace gg
