// k5_backward.cuh — what k5's kernels add to k3_wgmma.cuh: the operand layouts of the
// backward products and a main loop that takes them as a parameter.
//
// k3's mma_k_loop has the forward's layouts built in: A K-major (imm-trans-a 0), B N-major
// (imm-trans-b 1), B's read overridable by the loads policy (k3's NMajorB). The backward
// products have other ones, in the same 128B-swizzled boxes of 64 x 64 bf16 (one 128-byte row
// per box row), so the ring, its stages and its barriers are k3's unchanged (dgrad: k3's own
// kernels with TransposedBLoads, k5_dgrad.cu; wgrad: the same boxes in WgradRing, k5_wgrad.cuh,
// whose stage holds as many A boxes as its tile has rows):
//
//   dgrad  A = dC_e, K-major as in the forward (rows of 64 n): imm-trans-a 0.
//          B = B_e^T: element (r, w) = B_e[w][r], contiguous in r, the reduction index:
//          K-major, imm-trans-b 0. A TMA box of 64 r x 64 w is 64 rows of 128 B, exactly an A
//          box; BLOCK_N / 64 of them stacked are one N-row operand with 8-row groups 1024 B
//          apart (SBO), the k16 step +32 B along the rows.
//   wgrad  A = A_e^T: element (i, r) = A[row0 + r][i], contiguous in i, an output-row index:
//          M-major, imm-trans-a 1. A box of 64 i x 64 r is 64 reduction rows of 128 B, exactly
//          a forward B panel: LBO = next panel, SBO = 8 rows, the k16 step +2048 B (16 rows).
//          B = dC_e, N-major as the forward's B: imm-trans-b 1.
#pragma once
#include "k3_wgmma/k3_wgmma.cuh"
#include "k5_backward/k5_backward.h"

namespace k5 {
using namespace k3;

struct WgradOperands {
    static constexpr int TRANS_A = 1, TRANS_B = 1;
    static constexpr uint32_t A_K16 = GG_WGMMA_MNMAJOR_K16_BYTES, B_K16 = GG_WGMMA_MNMAJOR_K16_BYTES;
    __device__ static uint64_t desc_a(uint32_t addr) { return gg_wgmma_desc_a_mnmajor_sw128(addr, HALF_A_BYTES); }
    __device__ static uint64_t desc_b(uint32_t addr) { return gg_wgmma_desc_b_mnmajor_sw128(addr, PANEL_BYTES); }
};

// dgrad's B through k3's produce_tile and main loop. The producer asks for (column, k0) of the
// forward's B; the transposed operand wants the box at x = k0 (the reduction index, n) and
// y = column (the output column, a k index) of the same [experts x k x n] tensor map. The box
// lands as 64 rows of 128 B, one per output column, which is A's layout: the consumers read it
// K-major with A's descriptor (no LBO; 8-row groups 1024 B apart) and imm-trans-b 0.
struct TransposedBLoads : OwnLoads {
    static constexpr int TRANS_B = 0;
    static constexpr uint32_t B_K16 = GG_WGMMA_KMAJOR_K16_BYTES;  // 16 n further along the rows
    __device__ static uint64_t b_operand(uint64_t /*desc_b*/, uint32_t b_addr) {
        return gg_wgmma_desc_b_kmajor_sw128(b_addr);
    }
    __device__ static void load_b(void *box, const CUtensorMap *map, int col, int k0, int expert,
                                  uint64_t *bar, int /*panel*/, int /*rank*/) {
        gg::tma_load_3d(box, map, k0, col, expert, bar);
    }
};

// A launch of a dgrad kernel (k3's, k5_dgrad.cu; the tail split's, k5_dgrad_tail.cu): the GEMM
// as it sees it has rows of dC n wide (its K) and dA k wide (its N); the B map is the forward's,
// over the stored [experts x k x n]. EXTRA: the kernel's parameters after K3_KERNEL_PARAMS.
template <bool TRACE, class KERNEL, class... EXTRA>
cudaError_t launch_dgrad(const GgLaunch *p, KERNEL kernel, k3::Shape s, const typename gg::Trace<TRACE>::Sink &trace,
                         EXTRA... extra) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k5_dgrad")) return cudaErrorInvalidValue;
    GgLaunch gemm = *p;
    gemm.k = p->n;
    gemm.n = p->k;
    CUtensorMap tmap_dc, tmap_b;
    if (gg_tmap_a(&tmap_dc, &gemm, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;
    return k3::launch_maps<TRACE>(&gemm, kernel, s, tmap_dc, tmap_b, trace, extra...);
}

// One consumer warpgroup's loop over k_blocks stages into one m64 x N accumulator (HALVES 1, the
// A rows at a_off) or two (HALVES 2: acc1 from the A panel HALF_A_BYTES further on): k3's
// mma_k_loop (wait full, 4 wgmma per half, keep one group in flight, release the stage before)
// with the operand layouts of OPS; B starts B_OFF bytes into a stage (after all of its A boxes).
// prepare(stage, kb) runs once the stage is full, before its wgmma (wgrad masks rows there). The
// span (gg::Trace) is marked when the first stage is full. k_blocks >= 1.
template <int N, int HALVES, int STAGES, int STAGE_BYTES, int B_OFF, class OPS, int ACC, class SPAN, class PREPARE>
__device__ __forceinline__ void mma_loop(float (&acc0)[ACC], float (&acc1)[ACC], uint64_t *full, uint64_t *empty,
                                         uint32_t base, GgPipe &pipe, uint32_t a_off, int k_blocks,
                                         bool leader, SPAN &span, PREPARE &&prepare) {
    static_assert(HALVES == 1 || HALVES == 2, "one accumulator per 64-row half");
    int prev_stage = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
        gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
        if (kb == 0) span.mark();
        prepare(pipe.stage, kb);
        const uint32_t stage_addr = base + pipe.stage * STAGE_BYTES;
        const uint64_t desc_a0 = OPS::desc_a(stage_addr + a_off), desc_b = OPS::desc_b(stage_addr + B_OFF);
        const uint64_t desc_a1 = OPS::desc_a(stage_addr + a_off + HALF_A_BYTES);
        gg::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
            const uint64_t b = gg_wgmma_desc_advance(desc_b, kk * OPS::B_K16);
            const int scale = (kb > 0 || kk > 0) ? 1 : 0;  // the tile's first k16 overwrites
            gg::wgmma_m64k16_bf16<N, OPS::TRANS_A, OPS::TRANS_B>(
                acc0, gg_wgmma_desc_advance(desc_a0, kk * OPS::A_K16), b, scale);
            if constexpr (HALVES == 2)
                gg::wgmma_m64k16_bf16<N, OPS::TRANS_A, OPS::TRANS_B>(
                    acc1, gg_wgmma_desc_advance(desc_a1, kk * OPS::A_K16), b, scale);
        }
        gg::wgmma_commit_group();
        gg::wgmma_wait_group<1>();  // the previous stage's group has read its operands
        if (kb > 0 && leader) gg::mbarrier_arrive(&empty[prev_stage]);
        prev_stage = pipe.stage;
        gg_pipe_advance(&pipe, STAGES);
    }
    gg::wgmma_wait_group<0>();
    if (leader) gg::mbarrier_arrive(&empty[prev_stage]);
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
        gg::wgmma_fence_operand(acc0[i]);
        if constexpr (HALVES == 2) gg::wgmma_fence_operand(acc1[i]);
    }
}
template <int N, int STAGES, int STAGE_BYTES, int B_OFF, class OPS, int ACC, class SPAN, class PREPARE>
__device__ __forceinline__ void mma_loop(float (&acc)[ACC], uint64_t *full, uint64_t *empty, uint32_t base,
                                         GgPipe &pipe, uint32_t a_off, int k_blocks, bool leader, SPAN &span,
                                         PREPARE &&prepare) {
    mma_loop<N, 1, STAGES, STAGE_BYTES, B_OFF, OPS>(acc, acc, full, empty, base, pipe, a_off, k_blocks, leader, span,
                                              static_cast<PREPARE &&>(prepare));
}

// A split tile's ticket (wgrad's split items, dgrad's tail pieces), once the caller's `threads`
// threads (meeting at named barrier `barrier`) have written their piece's partial: the leader
// takes the ticket and publishes the answer in `*last`; true in every caller thread for the
// tile's last piece of `splits`, which adds the partials and sets the ticket back to 0 for the
// next launch. No float atomics: the ticket is an int, the sum is the last piece's, in order.
__device__ __forceinline__ bool last_split_of(int *ticket, int splits, int barrier, int threads, bool leader,
                                              int *last) {
    __threadfence();
    gg::named_barrier_sync(barrier, threads);
    if (leader) {
        __threadfence();  // after the barrier: the whole partial before the ticket
        const int arrived = atomicAdd(ticket, 1);
        __threadfence();
        *last = arrived == splits - 1;
        if (*last) *ticket = 0;  // every piece has taken its ticket
    }
    gg::named_barrier_sync(barrier, threads);
    return *last;
}

}  // namespace k5
