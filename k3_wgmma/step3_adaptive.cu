// k3_wgmma step 3 — adaptive rows (sm_90a): k3_wgmma_coop_m64_n192 (and _n128, _n256).
//
// What changed since step 2: an expert's last row tile often holds only a few rows, and a
// 128-row tile computes all 128 whatever it holds. Here a remainder of 1..64 rows gets a
// 64-row tile instead (common/gg_adaptive.h; the schedule builds it when `adaptive` is set), so
// under skew, where many experts end in a short tile, fewer padded rows are computed (the
// problem's eta, `ggemm problem`). A 64-row tile is one m64 wgmma high, and both consumer
// warpgroups still work on it: they split its columns at a 64-column panel, consumer 0 the
// first N0 columns, consumer 1 the rest, each in a prefix of its accumulator registers. (An
// N-major 128B-swizzled B operand must start on a panel: inside a 128-byte row the next 64
// columns are a whole panel away.) The 128-row tiles are step 2's.
//
// Tile     128 x BLOCK_N or 64 x BLOCK_N, x 64.
// Threads, smem, preconditions: step 2's.
// Run it   build/bin/ggemm run --kernel k3_wgmma_coop_m64_n192 --skew 1.2
// Next     step4_pingpong.cu: a consumer owns whole tiles, so one stores while the other computes.
#include "k3_wgmma/k3_wgmma.cuh"

namespace k3 {
namespace {

template <int BLOCK_N, class LOADS, bool TRACE>  // LOADS: k3_wgmma.cuh, Producer
__global__ void __launch_bounds__(THREADS, 1)
adaptive_kernel(K3_KERNEL_PARAMS(TRACE)) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    // A 64-row tile's columns: consumer 0 [0, N0), consumer 1 [N0, BLOCK_N); N0 = half, rounded
    // up to a panel.
    constexpr int N0 = (BLOCK_N / 2 + PANEL_N - 1) / PANEL_N * PANEL_N, N1 = BLOCK_N - N0;
    static_assert(N1 > 0, "both consumers need columns of a 64-row tile");
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, true);  // adaptive: 64-row tiles
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k_blocks_of(k), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: step 2's; a 64-row tile loads one A box ----------------
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
        // ---------------- consumers ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        const int warp_row = warp * STAGING_ROWS;  // the warp's rows in a 64-row accumulator
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        ConsumerRing<R::STAGES, R::STAGE_BYTES, LOADS> ring{full, empty, gg::smem_u32(smem), lane == 0};
        float acc[BLOCK_N / 2];
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            Trace span;
            if (tile.height == BLOCK_M) {  // step 2: rows 64c .. 64c + 63, all columns
                ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks, span);
                const int row = c * WG_ROWS + warp_row;
                gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + row,
                                                     tile.rows - row, tile.col0, lane);
            } else if (c == 0) {  // 64 rows: all of them, columns [0, N0)
                ring.template mma<N0>(acc, 0, 0, k_blocks, span);
                gg::wgmma_store_warp_rows<N0 / PANEL_N>(acc, staging, C, n, tile.row0 + warp_row,
                                                        tile.rows - warp_row, tile.col0, lane);
            } else {  // 64 rows, columns [N0, BLOCK_N): B from panel N0 / 64 of every stage
                ring.template mma<N1>(acc, 0, N0 / PANEL_N * PANEL_BYTES, k_blocks, span);
                gg::wgmma_store_warp_rows<N1 / PANEL_N>(acc, staging, C, n, tile.row0 + warp_row,
                                                        tile.rows - warp_row, tile.col0 + N0, lane);
            }
            if (threadIdx.x % WG_THREADS == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, tile, true);
        }
    }
}

}  // namespace
}  // namespace k3

// The forward's configurations; k5_dgrad.cu compiles this kernel again, B read K-major.
#ifndef K3_KERNELS_ONLY
#define COOP_M64(NAME, BLOCK_N) \
    K3_REGISTER(NAME, k3::adaptive_kernel, (k3::Shape{BLOCK_N, true, false, false}), BLOCK_N, \
                k3::OwnLoads)
COOP_M64(k3_wgmma_coop_m64_n192, 192)
COOP_M64(k3_wgmma_coop_m64_n128, 128)
COOP_M64(k3_wgmma_coop_m64_n256, 256)
#endif
