// k3_wgmma step 2 — persistent grid, device-side schedule (sm_90a): k3_wgmma_coop_m128_n192
// (and _n256).
//
// What changed since step 1: one CTA per SM instead of one per tile. Every CTA builds the same
// expert-major tile list in shared memory from the device-side row offsets
// (gg::TileSchedule, common/gg_schedule.cuh) and takes tiles blockIdx.x, + gridDim.x, ...
// So the host never reads the m_e: no host tile list, no host synchronisation, and a CUDA graph
// of the launch replays correctly with new m_e. A CTA's set-up (barriers, schedule) is paid
// once per SM instead of once per tile, and each role's ring position runs on from one tile to
// the next: the producer starts tile t + gridDim.x's loads while the consumers still compute
// tile t.
//
// Tile     128 x BLOCK_N x 64, every tile 128 rows ("m128"); consumer c computes rows
//          64c .. 64c + 63, as in step 1.
// Threads  step 1's: producer warpgroup + 2 consumer warpgroups.
// Smem     Ring<BLOCK_N> (k3_wgmma.cuh) + the schedule's table (static, ~2 KiB: at most 256
//          groups of experts, one expert each up to 256; above, a lookup walks its group's
//          <= 16 experts' row offsets in global memory).
// Preconditions  step 1's (1 <= experts <= 4096).
// Run it   build/bin/ggemm run --kernel k3_wgmma_coop_m128_n192
// Next     step3_adaptive.cu: an expert's last, short row tile shrinks to 64 rows.
#include "k3_wgmma/k3_wgmma.cuh"

namespace k3 {
namespace {

template <int BLOCK_N, class LOADS, bool TRACE>  // LOADS: k3_wgmma.cuh, Producer
__global__ void __launch_bounds__(THREADS, 1)
persistent_kernel(K3_KERNEL_PARAMS(TRACE)) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);
    // Every thread helps build the tile list; it ends with __syncthreads(), which also
    // publishes the barriers.
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, false);
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k_blocks_of(k), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: the CTA's tiles, one after another ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};  // runs on across tiles
            for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
                const gg::SchedTile tile = sched.at(t);
                Trace span;
                produce_tile<BLOCK_N, LOADS>(pipe, tile, k_blocks, &tmap_a, &tmap_b, smem, full, empty,
                                             tokens, n, 0, span);
                span.end(trace, GG_TRACE_PRODUCER, t, tile, true);
            }
        }
    } else {
        // ---------------- consumers: rows 64c .. 64c + 63 of every tile ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        const int row = c * WG_ROWS + warp * STAGING_ROWS;  // this warp's 16 rows of a tile
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        ConsumerRing<R::STAGES, R::STAGE_BYTES, LOADS> ring{full, empty, gg::smem_u32(smem), lane == 0};
        float acc[BLOCK_N / 2];
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            Trace span;
            ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks, span);
            gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + row,
                                                 tile.rows - row, tile.col0, lane);
            if (threadIdx.x % WG_THREADS == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, tile, true);
        }
    }
}

}  // namespace
}  // namespace k3

// The forward's configurations; k5_dgrad.cu compiles this kernel again, B read K-major.
#ifndef K3_KERNELS_ONLY
#define COOP_M128(NAME, BLOCK_N) \
    K3_REGISTER(NAME, k3::persistent_kernel, (k3::Shape{BLOCK_N, false, false, false}), BLOCK_N, \
                k3::OwnLoads)
COOP_M128(k3_wgmma_coop_m128_n192, 192)
COOP_M128(k3_wgmma_coop_m128_n256, 256)
#endif
