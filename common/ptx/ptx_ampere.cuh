// Warp-level tensor-core path (sm_80+): cp.async, ldmatrix, mma.sync.
// Used by k1_mmasync, k2_tma_ws and k4_moe's cp.async gather. Each wrapper names its PTX ISA section:
// https://docs.nvidia.com/cuda/parallel-thread-execution/
#pragma once
#include <stdint.h>

namespace gg {

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// #data-movement-and-conversion-instructions-cp-async
// 16-byte global->shared copy through L2 only (.cg). src_bytes < 16 zero-fills the rest,
// which is how out-of-range rows and columns are loaded as zeros.
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)),
                 "l"(gmem), "r"(src_bytes));
}
// The same copy (16 bytes, no zero-fill) with the L2 prefetch-size hint .L2::256B: a miss may fetch
// the whole 256-byte-aligned block around the source, not only its 128-byte line. k4's gather
// reads a row of X 128 bytes (one k-block) at a time, so a miss can bring a neighbouring k-block
// of the row with it. Near the end of X the block can reach up to 128 bytes past it: harmless,
// since a 256-byte-aligned block never leaves the page of the copied address and the hint only
// fills L2, never shared memory (the GPU tests and memcheck ran on such a layer: k4_moe/TRIALS.md).
// #data-movement-and-conversion-instructions-cp-async (.level::prefetch_size)
__device__ __forceinline__ void cp_async_16_l2_256(void *smem, const void *gmem) {
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(smem_u32(smem)), "l"(gmem));
}
// #data-movement-and-conversion-instructions-cp-async-commit-group
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// #data-movement-and-conversion-instructions-cp-async-wait-group
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// #warp-level-matrix-instructions-ldmatrix
// Four 8x8 b16 matrices; lane L supplies the address of row (L & 7) of matrix (L >> 3).
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *smem) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(smem)));
}
// Same, transposed on the way: B is stored k-rows x n-contiguous, mma wants it "col".
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *smem) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(smem)));
}

// #warp-level-matrix-instructions-mma (m16n8k16, bf16 in, f32 accumulate, D = A*B + D)
// Lane L holds A regs a[0..3] = rows {L/4, L/4+8} x k-halves, B regs b[0..1],
// and d[0..3] = (row L/4, cols 2(L%4)+{0,1}), (row L/4+8, same cols).
__device__ __forceinline__ void mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two fp32 -> packed bf16x2 (round to nearest even), low half = first argument.
// #data-movement-and-conversion-instructions-cvt
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

}  // namespace gg
