// k3_wgmma step 4 — ping-pong consumers (sm_90a): k3_wgmma_pingpong_m128_n192 (and _m64_n192,
// _m128_n128, _m64_n128). What the entry point k3_wgmma runs where experts have whole 128-row
// tiles.
//
// What changed since step 3: there both consumers compute each tile (64 rows each) and then
// both store it, so the tensor cores idle while a tile's C goes out (the traces' gap between a
// consumer's tiles, k3 README). Here consumer c computes the CTA's j-th tile when j % 2 == c,
// all of its rows (two m64 accumulators), and stores it itself; while it stores, the other
// consumer's MMAs on tile j + 1 keep the tensor cores busy.
//
// Tile     128 x BLOCK_N x 64, BLOCK_N 192 or 128 (256 does not fit: two 64 x 256 fp32
//          accumulators are 256 registers, a consumer has CONSUMER_REGS). ADAPTIVE ("m64"): an
//          expert's remainder of 1..64 rows is a 64-row tile that its owner computes alone (one
//          accumulator, half a stage's MMAs).
// Threads  producer warpgroup + 2 consumer warpgroups, as before.
// Smem     Ring<BLOCK_N>; empty[s] counts the owner's 4 warps. The other consumer steps its ring
//          position over a tile it does not own without touching the barriers.
// Order    a consumer starts tile j's K loop only after the other has finished tile j - 1's:
//          named barrier 1 + j % 2 (bar.arrive after the loop of tile j, bar.sync before the loop
//          of tile j + 1). Every stage of tile j - 1 has then been waited for, so the full phase
//          the owner of tile j waits for cannot be one already past. Without that order (each
//          consumer watching the other's full phases instead) a consumer two phases behind waits
//          for a phase only its own release can complete: it hung (k3_wgmma/TRIALS.md).
// Run it   build/bin/ggemm run --kernel k3_wgmma_pingpong_m128_n192
#include "k3_wgmma/k3_wgmma.cuh"

namespace k3 {
namespace {

constexpr int TURN_BARRIER = 1;  // named barriers 1 and 2 (0 is __syncthreads)

// Traced twin only: a tile's span starts when its owner's turn does, no earlier than the other
// consumer's K loop ended (a timer read may issue before bar.sync releases the warp; the shared
// load cannot).
template <bool TRACE>
struct TurnClock {
    uint32_t *turn_ns;
    template <class SPAN> __device__ void begin(SPAN &, int) const {}
    __device__ void hand_over() const {}
};
template <>
struct TurnClock<true> {
    uint32_t *turn_ns;  // when the last K loop ended (low %globaltimer bits)
    template <class SPAN> __device__ void begin(SPAN &span, int j) const {
        if (j > 0 && (int32_t)(*turn_ns - span.start) > 0) span.start = span.marked = *turn_ns;
    }
    __device__ void hand_over() const {
        if (threadIdx.x % WG_THREADS == 0) *turn_ns = (uint32_t)gg::Trace<true>::now();
    }
};

template <int BLOCK_N, bool ADAPTIVE, class LOADS, bool TRACE>  // LOADS: k3_wgmma.cuh, Producer
__global__ void __launch_bounds__(THREADS, 1)
pingpong_kernel(K3_KERNEL_PARAMS(TRACE)) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    static_assert(BLOCK_N <= 192, "two 64 x BLOCK_N fp32 accumulators must fit a consumer's registers");
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    __shared__ uint32_t turn_ns;
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, WARPS_PER_WG);  // empty: the owner's warps only
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, ADAPTIVE);
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k_blocks_of(k), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: step 2's ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
                const gg::SchedTile tile = sched.at(t);
                Trace span;
                produce_tile<BLOCK_N, LOADS>(pipe, tile, k_blocks, &tmap_a, &tmap_b, smem, full, empty,
                                             tokens, n, 0, span);
                span.end(trace, GG_TRACE_PRODUCER, t, tile, true);
            }
        }
    } else {
        // ---------------- consumers: the CTA's tiles in turn ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        const int warp_row = warp * STAGING_ROWS;
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        ConsumerRing<R::STAGES, R::STAGE_BYTES, LOADS> ring{full, empty, gg::smem_u32(smem), lane == 0};
        const TurnClock<TRACE> clock{&turn_ns};
        float acc0[BLOCK_N / 2], acc1[BLOCK_N / 2];  // rows 0..63 and 64..127 of the tile
        int j = 0;                  // the CTA's tile count
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x, ++j) {
            if (j % 2 != c) {  // the other consumer's tile
                ring.step_over(k_blocks);
                continue;
            }
            const gg::SchedTile tile = sched.at(t);
            if (j > 0)  // tile j - 1's K loop is done
                gg::named_barrier_sync(TURN_BARRIER + (j - 1) % 2, CONSUMERS * WG_THREADS);
            Trace span;  // from its turn: the wait for the other's K loop is not this tile's time
            clock.begin(span, j);
            // Two code paths, each with all of its wgmma: a branch between wgmma would serialize
            // them (ptxas C7520).
            if (!ADAPTIVE || tile.height == BLOCK_M)
                ring.template mma<BLOCK_N, 2>(acc0, acc1, 0, 0, k_blocks, span);
            else
                ring.template mma<BLOCK_N, 1>(acc0, acc1, 0, 0, k_blocks, span);
            // The other consumer may start tile j + 1. After the CTA's last tile nobody waits for
            // this arrival; compute-sanitizer's synccheck has no objection (k3_wgmma/TRIALS.md).
            clock.hand_over();
            gg::named_barrier_arrive(TURN_BARRIER + j % 2, CONSUMERS * WG_THREADS);
            gg::wgmma_store_warp_rows<R::PANELS>(acc0, staging, C, n, tile.row0 + warp_row,
                                                 tile.rows - warp_row, tile.col0, lane);
            if (!ADAPTIVE || tile.height == BLOCK_M)
                gg::wgmma_store_warp_rows<R::PANELS>(acc1, staging, C, n,
                                                     tile.row0 + WG_ROWS + warp_row,
                                                     tile.rows - WG_ROWS - warp_row, tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, tile, true);
        }
    }
}

}  // namespace
}  // namespace k3

// The forward's configurations; k5_dgrad.cu compiles this kernel again, B read K-major.
#ifndef K3_KERNELS_ONLY
#define PINGPONG(NAME, BLOCK_N, ADAPTIVE) \
    K3_REGISTER(NAME, k3::pingpong_kernel, (k3::Shape{BLOCK_N, ADAPTIVE, false, true}), BLOCK_N, ADAPTIVE, \
                k3::OwnLoads)
PINGPONG(k3_wgmma_pingpong_m128_n192, 192, false)
PINGPONG(k3_wgmma_pingpong_m64_n192, 192, true)
PINGPONG(k3_wgmma_pingpong_m128_n128, 128, false)
PINGPONG(k3_wgmma_pingpong_m64_n128, 128, true)
#endif
