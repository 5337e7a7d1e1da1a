// k5_backward, wgrad with ping-pong consumers — k5_wgrad_pingpong (sm_90a).
//
// What changed since k5_wgrad: there both consumers compute every item's tile (64 rows of k
// each) and then both store it, so the tensor cores idle while the tile goes out, between every
// pair of items; an item is as short as four ring stages, and the trace shows a gap after each
// (k5_backward/TRIALS.md). Here, as in k3's step 4 (k3_wgmma/step4_pingpong.cu), consumer c
// owns the CTA's j-th item when j % 2 == c: all 128 rows of its tile (two m64 accumulators),
// the zeroing of rows past the expert's end, the partial and the ticket, the stores. While one
// consumer stores, the other's MMAs on the next item keep the tensor cores busy.
//
// Tile     k5_wgrad's 128 x 192 x 64 (two 64 x 192 fp32 accumulators are 192 registers: the
//          widest that fits a consumer, as in k3 step 4).
// Ring     k5_wgrad's (k5_wgrad.cuh): the same producer, stages, staging, work list and deal;
//          a stage's empty[s] counts the owner's 4 warps, and the other consumer steps its ring
//          position over an item it does not own (the deal's queue still counts all 8 warps:
//          both consumers take every item).
// Order    k3 step 4's turns: the owner of item j starts its loop only after item j - 1's loop
//          has ended (named barrier TURN + j % 2, bar.arrive after a loop, bar.sync before the
//          next). An empty expert's item has no loop but still takes its turn.
// Barriers named, besides __syncthreads: TURN, TURN + 1 (both consumers); MASK + c and
//          TICKET + c (the owner's 128 threads).
// Preconditions and workspace: k5_wgrad's (k5_wgrad_can_implement). The partial of an item is
//          laid out by the owner's threads: register i of half h of thread tid at
//          (h x 96 + i) x 128 + tid, so any consumer of any CTA reads it back the same way.
// Run it   build/bin/ggemm run --kernel k5_wgrad_pingpong --tokens 16384 --experts 64 --k 1024 --n 2688
#include "k5_backward/k5_wgrad.cuh"

namespace k5 {
namespace {

constexpr int CONSUMER_THREADS = CONSUMERS * WG_THREADS;
constexpr int TURN = 1, MASK = 3, TICKET = 5;  // named barrier ids (0 is __syncthreads)

template <class R, Deal D, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
wgrad_pingpong_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_dc,
                      const __grid_constant__ CUtensorMap tmap_db, const int *__restrict__ row_offsets, int *__restrict__ deal_counters,
                      int *__restrict__ tickets, float *__restrict__ partials, const GgWgradParams prm,
                      const typename gg::Trace<TRACE>::Sink trace) {
    using Trace = gg::Trace<TRACE>;
    static_assert(wgrad_fits<R, D>(), "ring, staging and tables over 227 KiB of shared memory");
    const uint64_t entry = Trace::now();
    constexpr int BLOCK_N = R::BLOCK_N, ACC = BLOCK_N / 2;
    static_assert(2 * ACC * WG_THREADS == R::TILE_M * BLOCK_N, "the owner's registers are the whole tile");
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ WgradTables tables;
    __shared__ WgradDeal<D> deal;
    __shared__ int last_split[CONSUMERS];  // each owner's ticket answer, for its other threads
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, WARPS_PER_WG);  // empty: the owner's warps only
    deal.init();
    tables.build(row_offsets, prm);
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_items = tables.items(prm), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: k5_wgrad's ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce_items<R, D, TRACE>(tables, prm, row_offsets, &tmap_a, &tmap_dc, smem, full, empty, deal,
                                       deal_counters, trace);
        return;
    }
    // ---------------- consumers: the CTA's items in turn ----------------
    gg::setmaxnreg_inc<CONSUMER_REGS>();
    const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
    const int tid = threadIdx.x % WG_THREADS;
    uint8_t *staging = R::staging(smem, c, warp);
    GgPipe pipe = {0, 0};
    float acc0[ACC], acc1[ACC];  // rows 0..63 and 64..127 of the tile
    for (int j = 0;; ++j) {  // the CTA's j-th item
        const WgradWork w = deal.take(j, lane);
        if (w.t >= num_items) break;
        const int t = w.t;
        const GgWgradItem &it = w.it;
        const int blocks = gg_wgrad_cdiv(it.rows, BLOCK_K);
        if (j % 2 != c) {  // the other consumer's item
            for (int kb = 0; kb < blocks; ++kb) gg_pipe_advance(&pipe, R::STAGES);
            continue;
        }
        if (j > 0) gg::named_barrier_sync(TURN + (j - 1) % 2, CONSUMER_THREADS);  // item j - 1's loop is done
        Trace span;
        auto done = [&] {  // the item's tile, partial or fix-up stored (its TMA stores issued)
            if (tid == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, it.expert, it.row0, it.rows, it.col0, true);
        };
        // Half h's rows of this warp (16 of them); stores come from arrays other than the
        // accumulators' own writes (C7515, k5_wgrad.cu).
        auto store = [&](const float (&v)[ACC], int h) {
            const int row = h * WG_ROWS + warp * STAGING_ROWS;
            gg::wgmma_store_warp_rows_tma<R::PANELS>(v, staging, &tmap_db, prm.n, it.m0 + row, prm.k - it.m0 - row,
                                                     it.col0, it.expert, lane);
        };
        if (blocks == 0) {  // an empty expert: no loop, the turn passes at once; its tile is zeros
            gg::named_barrier_arrive(TURN + j % 2, CONSUMER_THREADS);
            float zeros[ACC];
#pragma unroll
            for (int i = 0; i < ACC; ++i) zeros[i] = 0.f;
            store(zeros, 0);
            store(zeros, 1);
            done();
            continue;
        }
        mma_loop<BLOCK_N, 2, R::STAGES, R::STAGE_BYTES, R::A_BYTES, WgradOperands>(
            acc0, acc1, full, empty, gg::smem_u32(smem), pipe, 0, blocks, lane == 0, span, [&](int stage, int kb) {
                const int valid = it.rows - kb * BLOCK_K;
                if (valid >= BLOCK_K) return;
                zero_rows_past<R>(smem + stage * R::STAGE_BYTES, valid, 0, 1, tid);
                gg::fence_proxy_async_smem();
                gg::named_barrier_sync(MASK + c, WG_THREADS);
            });
        // The other consumer may start item j + 1. After the CTA's last item nobody waits for
        // this arrival (as in k3 step 4).
        gg::named_barrier_arrive(TURN + j % 2, CONSUMER_THREADS);
        if (it.splits == 1) {
            store(acc0, 0);
            store(acc1, 1);
            done();
            continue;
        }
        // Partial out, then the tile's ticket; the last split adds all partials in split order.
        write_partial<R, 2, WG_THREADS>(partials, it, acc0, acc1, tid);
        if (!last_split_of(&tickets[it.ticket], it.splits, TICKET + c, WG_THREADS, tid == 0, &last_split[c])) {
            done();
            continue;
        }
        for (int h = 0; h < 2; ++h)
            store_fixup<R, WG_THREADS>(partials, it, prm, h, h * WG_ROWS + warp * STAGING_ROWS, tid, staging, &tmap_db,
                                       lane);
        done();
    }
    gg::wgmma_store_tma_drain(lane);
}

}  // namespace
}  // namespace k5

K5_WGRAD_REGISTER(k5_wgrad_pingpong, k5::wgrad_pingpong_kernel, k5::WgradRing<k5::WGRAD_N>, k5::Deal::Static, true)
// The twin with the dynamic deal (k5_wgrad.cuh, TRIALS.md).
K5_WGRAD_REGISTER(k5_wgrad_pingpong_dyn, k5::wgrad_pingpong_kernel, k5::WgradRing<k5::WGRAD_N>, k5::Deal::Dynamic,
                  true)
