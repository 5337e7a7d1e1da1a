// k5_backward, wgrad — dB_e = A_e^T · dC_e per expert (sm_90a): k5_wgrad.
//
// What changed since k5_dgrad (and k3): the ragged dimension is the reduction. Every expert,
// empty or not, has the same k x n output, cut into 128 x 192 tiles; tile (e, t) sums over
// expert e's m_e rows, 64 rows per ring stage. Four things are new:
//   1. The work list (common/gg_wgrad.h, unit-tested on the CPU, drawn by plots/diagrams.py):
//      items over (expert, tile, split). An expert longer than `chunk` blocks (a rule of the
//      sizes and the grid) is split into equal items of at most `chunk` blocks, so one long
//      reduction does not hold one SM to the end of the launch; each split item writes an fp32
//      partial into the workspace and takes an integer ticket; the last of a tile adds the
//      partials in split order (the same bits whoever is last) and writes bf16, then sets the
//      ticket back to 0 for the next launch. An unsplit item stores from registers; an empty expert's item
//      loads nothing and stores zeros. Each CTA builds the per-expert prefix sums in shared
//      memory from the device-side row offsets (graph-safe, as k3 step 2).
//   2. The operands: A_e^T is read M-major (imm-trans-a 1) from boxes of A rows, dC_e N-major
//      as the forward's B (k5_backward.cuh).
//   3. Rows of the next expert. A stage is a 64-row box from the item's row: its last stage can
//      hold rows past the expert's end, which (unlike the forward's extra rows, computed and
//      never stored) would be summed into the tile. TMA zero-fills only at the tensor's edge
//      (the experts share one tensor), so the consumers zero those rows in shared memory, in
//      both operands (0 x a finite value is not enough: the next expert's dC may hold an Inf),
//      then fence.proxy.async (generic writes, async-proxy reads) and meet at a named barrier
//      before the stage's wgmma. Only an item's last stage, and only when m_e % 64 != 0.
//   4. The epilogue is TMA stores. dB is experts x k x n, much more than dgrad's output at the
//      same FLOPs (16384 rows, 64 experts, k 1024, n 2688: 352 MB against 34), and an item is as
//      short as 4 ring stages, so k3's epilogue (stage, read back, store from every lane, masked)
//      would stand between every pair of items with the tensor cores idle. A tile of dB_e ends
//      at the edges of expert e's k x n, which a 3-D tensor map clips, so each warp stages its
//      16 rows x 192 into three boxes of its own and one lane hands them to the copy engine; the
//      warps go on to the next item while the boxes are written (k5_backward/TRIALS.md).
//
// Tile     128 x 192 x 64 (rows of k x columns of n x reduction rows); consumer c computes
//          rows 64c .. 64c + 63 (A panel c), 96 fp32 accumulators per thread. The twin
//          k5_wgrad_m256 (256 x 192): rows 128c .. 128c + 127 in two accumulators.
// Threads  k3's: producer warpgroup (thread 0 issues TMA) + 2 consumer warpgroups, setmaxnreg.
// Smem     WgradRing<192> (k5_wgrad.cuh): stages of A^T 64 rows x 128 + dC 64 rows x 192 (40 KiB)
//          as many as fit beside the epilogue staging (3 boxes of 16 x 64 per consumer warp: 48 KiB;
//          the twin's stages hold A^T 64 x 256: 56 KiB, three of them);
//          static: two per-expert prefix sums (8 KiB for 1024 experts), the deal's queue of
//          decoded items and the ticket's broadcast.
// Preconditions  k % 8 == 0, n % 8 == 0, both > 0; 1..1024 experts (the shared-memory table);
//          tokens >= 0. Pointers 16-byte aligned (checked at launch). Workspace: the harness
//          allocates GgKernelInfo.workspace_bytes and zeroes it once.
// Shared   with the ping-pong twin (k5_wgrad_pingpong.cu), in k5_wgrad.cuh: the ring, the work
//          list's tables, the deal (this kernel: the round robin; the twins *_dyn: a counter),
//          the producer's loop, the zeroing of rows past an expert, a split's
//          partial and fix-up, the launch and the registration (K5_WGRAD_REGISTER).
// Run it   build/bin/ggemm run --kernel k5_wgrad --tokens 16384 --experts 64 --k 1024 --n 2688 --skew 1.2
#include "k5_backward/k5_wgrad.cuh"

namespace k5 {
namespace {

constexpr int CONSUMER_THREADS = CONSUMERS * WG_THREADS;
constexpr int MASK_BARRIER = 1, TICKET_BARRIER = 2;  // named barriers of the 256 consumer threads

// Traced (TRACE): one event per role and work item, `tile` its index in the list, expert, row0
// and rows its reduction rows (0: an empty expert's item, which stores zeros), col0 its first
// column of n; its row block of k and its split follow from the index (gg_wgrad_at).
// R (WgradRing): the tile. Its rows of k, R::TILE_M, are 64 per consumer (one accumulator,
// HALVES 1) or 128 (two); 128 is the lesson's, 256 the twin k5_wgrad_m256 (TRIALS.md).
template <class R, Deal D, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
wgrad_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_dc,
             const __grid_constant__ CUtensorMap tmap_db, const int *__restrict__ row_offsets,
             int *__restrict__ deal_counters, int *__restrict__ tickets,
             float *__restrict__ partials, const GgWgradParams prm, const typename gg::Trace<TRACE>::Sink trace) {
    using Trace = gg::Trace<TRACE>;
    static_assert(wgrad_fits<R, D>(), "ring, staging and tables over 227 KiB of shared memory");
    const uint64_t entry = Trace::now();
    constexpr int BLOCK_N = R::BLOCK_N, ACC = BLOCK_N / 2;
    constexpr int HALVES = R::TILE_M / (CONSUMERS * WG_ROWS);  // m64 accumulators per consumer
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ WgradTables tables;
    __shared__ WgradDeal<D> deal;
    __shared__ int last_split;  // the ticket thread's answer, for the other consumer threads
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);
    deal.init();
    tables.build(row_offsets, prm);  // the work list's two prefix sums over the experts (syncs)
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_items = tables.items(prm), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: A rows (read as A^T) and dC rows of every item ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce_items<R, D, TRACE>(tables, prm, row_offsets, &tmap_a, &tmap_dc, smem, full, empty, deal,
                                       deal_counters, trace);
    } else {
        // ---------- consumers: rows c x TILE_M / 2 .. of every item's tile, HALVES x 64 ----------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        const int tid = threadIdx.x % WG_THREADS, ctid = threadIdx.x - WG_THREADS;  // in the WG, in both
        uint8_t *staging = R::staging(smem, c, warp);
        GgPipe pipe = {0, 0};
        float acc0[ACC], acc1[HALVES == 2 ? ACC : 1];
        for (int j = 0;; ++j) {
            const WgradWork w = deal.take(j, lane);
            if (w.t >= num_items) break;
            const int t = w.t;
            const GgWgradItem &it = w.it;
            const int blocks = gg_wgrad_cdiv(it.rows, BLOCK_K);
            Trace span;
            auto done = [&] {  // the item's tile, partial or fix-up stored (its TMA stores issued)
                if (tid == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, it.expert, it.row0, it.rows, it.col0, true);
            };
            // Half h's rows of this warp (16 of them). Stores come from arrays other than the
            // accumulators: an ordinary write into their registers in this function would make
            // ptxas serialise every wgmma (C7515).
            auto row_of = [&](int h) { return (c * HALVES + h) * WG_ROWS + warp * STAGING_ROWS; };
            auto store = [&](const float (&v)[ACC], int h) {
                gg::wgmma_store_warp_rows_tma<R::PANELS>(v, staging, &tmap_db, prm.n, it.m0 + row_of(h),
                                                         prm.k - it.m0 - row_of(h), it.col0, it.expert, lane);
            };
            if (blocks == 0) {  // an empty expert: its tile is zeros
                float zeros[ACC];
#pragma unroll
                for (int i = 0; i < ACC; ++i) zeros[i] = 0.f;
                for (int h = 0; h < HALVES; ++h) store(zeros, h);
                done();
                continue;
            }
            auto prepare = [&](int stage, int kb) {
                const int valid = it.rows - kb * BLOCK_K;
                if (valid >= BLOCK_K) return;  // the same answer in both consumers
                zero_rows_past<R>(smem + stage * R::STAGE_BYTES, valid, c, CONSUMERS, tid);
                gg::fence_proxy_async_smem();
                gg::named_barrier_sync(MASK_BARRIER, CONSUMER_THREADS);
            };
            if constexpr (HALVES == 2)
                mma_loop<BLOCK_N, 2, R::STAGES, R::STAGE_BYTES, R::A_BYTES, WgradOperands>(
                    acc0, acc1, full, empty, gg::smem_u32(smem), pipe, c * 2 * HALF_A_BYTES, blocks, lane == 0, span,
                    prepare);
            else
                mma_loop<BLOCK_N, R::STAGES, R::STAGE_BYTES, R::A_BYTES, WgradOperands>(
                    acc0, full, empty, gg::smem_u32(smem), pipe, c * HALF_A_BYTES, blocks, lane == 0, span, prepare);
            if (it.splits == 1) {
                store(acc0, 0);
                if constexpr (HALVES == 2) store(acc1, 1);
                done();
                continue;
            }
            // Partial out, then the tile's ticket; the last split adds all partials in split order.
            write_partial<R, HALVES, CONSUMER_THREADS>(partials, it, acc0, acc1, ctid);
            if (!last_split_of(&tickets[it.ticket], it.splits, TICKET_BARRIER, CONSUMER_THREADS, ctid == 0, &last_split)) {
                done();
                continue;
            }
            for (int h = 0; h < HALVES; ++h)
                store_fixup<R, CONSUMER_THREADS>(partials, it, prm, h, row_of(h), ctid, staging, &tmap_db, lane);
            done();
        }
        gg::wgmma_store_tma_drain(lane);
    }
}

}  // namespace
}  // namespace k5

namespace k5 {
using Lesson = WgradRing<WGRAD_N>;
// The twin's tile: 256 rows of k x 192 columns of n whatever K5_WGRAD_TILE_N is (at 256 columns
// the ring would have two stages).
using Tall = WgradRing<192, 256>;
}  // namespace k5

K5_WGRAD_REGISTER(k5_wgrad, k5::wgrad_kernel, k5::Lesson, k5::Deal::Static, false)
// The twin k5_wgrad_m256: 256-row tiles, each consumer 128 rows in two accumulators (TRIALS.md).
K5_WGRAD_REGISTER(k5_wgrad_m256, k5::wgrad_kernel, k5::Tall, k5::Deal::Static, false)
// And with the dynamic deal (k5_wgrad.cuh, TRIALS.md).
K5_WGRAD_REGISTER(k5_wgrad_m256_dyn, k5::wgrad_kernel, k5::Tall, k5::Deal::Dynamic, false)
