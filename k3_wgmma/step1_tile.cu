// k3_wgmma step 1 — warpgroup MMA, one CTA per tile (sm_90a): k3_wgmma_tile_m128_n192.
//
// What changed since k2_tma_ws: the math moves from ldmatrix + mma.sync (per warp, operands
// through registers) to wgmma.mma_async, issued by a warpgroup of 4 warps, which reads A and B
// straight from the 128B-swizzled TMA boxes through 64-bit descriptors (common/gg_desc_sm90.h);
// only the fp32 accumulators live in registers. The launch is still k2's: one CTA per tile of
// the host-built, expert-major tile list.
//
// Tile     128 x 192 x 64 (BLOCK_M x BLOCK_N x BLOCK_K); consumer warpgroup c computes rows
//          64c .. 64c + 63 of the tile: 4 wgmma.m64n192k16 per stage, 96 fp32 accumulators
//          per thread.
// Threads  384 = warpgroup 0, the producer (thread 0 issues every TMA load; setmaxnreg.dec
//          frees its registers) + warpgroups 1 and 2, the consumers (setmaxnreg.inc).
//          __launch_bounds__(384, 1) lets setmaxnreg take effect (without the 1, ptxas drops
//          it: warning C7508).
// Smem     k3_wgmma.cuh's Ring<192>: as many stages of A 128 x 64 + B 64 x 192 (bf16) as fit in
//          SMEM_TARGET beside 2 KiB of epilogue staging per consumer warp; 1 KiB of slack to
//          start the ring on a swizzle atom. Static: the full/empty mbarriers.
// Flow     the producer fills the ring with the tile's k-blocks (produce_tile); each consumer
//          runs the main loop (ConsumerRing::mma: wait full, wgmma, release a stage once the
//          next group is issued and its own has retired), then stores its 64 rows
//          (gg::wgmma_store_warp_rows: stmatrix to a swizzled buffer, 16-byte row-masked stores;
//          a TMA store would write past the expert's last row).
// Preconditions  k % 8 == 0, k > 0 (a k tail past the last whole k-block reads zeros:
//          k_blocks_of); n % 8 == 0, n > 0; 1 <= experts <= 4096 (the device schedule's
//          index, steps 2-4): k3_wgmma_can_implement, below. A, B, C 16-byte aligned:
//          checked by k3::launch.
// Run it   build/bin/ggemm run --kernel k3_wgmma_tile_m128_n192
// Next     step2_persistent.cu: one CTA per SM walks the tiles, and the tile list moves to
//          the device.
#include <stdio.h>

#include "k3_wgmma/k3_wgmma.cuh"

namespace k3 {
namespace {

template <int BLOCK_N, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
tile_kernel(K3_KERNEL_PARAMS(TRACE)) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;  // the traced twin records spans; Trace<false> is empty
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);  // full: the producer's expect_tx; empty: each consumer warp
    __syncthreads();
    if (threadIdx.x == 0) Trace::setup(trace, entry);

    // This CTA's tile: 128 rows of one expert from row0 (rows past row0 + rows belong to the next
    // expert: computed, never stored) and BLOCK_N columns from col0.
    const GgTile host = tiles[blockIdx.x];
    const gg::SchedTile tile = {host.expert, host.row0, host.rows, BLOCK_M, host.col0};
    const int k_blocks = k_blocks_of(k), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: one thread issues every TMA load ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            Trace span;
            produce_tile<BLOCK_N>(pipe, tile, k_blocks, &tmap_a, &tmap_b, smem, full, empty, tokens,
                                  n, 0, span);
            span.end(trace, GG_TRACE_PRODUCER, blockIdx.x, tile, true);
        }
    } else {
        // ---------------- consumers: rows 64c .. 64c + 63 of the tile ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        ConsumerRing<R::STAGES, R::STAGE_BYTES> ring{full, empty, gg::smem_u32(smem), lane == 0};
        float acc[BLOCK_N / 2];
        Trace span;
        ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks, span);
        const int row = c * WG_ROWS + warp * STAGING_ROWS;  // this warp's 16 rows of the tile
        gg::wgmma_store_warp_rows<R::PANELS>(acc, staging_of<BLOCK_N>(smem, c, warp), C, n,
                                             tile.row0 + row, tile.rows - row, tile.col0, lane);
        if (threadIdx.x % WG_THREADS == 0) span.end(trace, GG_TRACE_CONSUMER + c, blockIdx.x, tile, true);
    }
}

}  // namespace
}  // namespace k3

// What every k3 configuration can compute (the registry asks before any launch).
extern "C" int k3_wgmma_can_implement(const GgShape *s, char *why, size_t len) {
    using namespace k3;
    if (s->k <= 0 || s->k % 8 != 0) {
        snprintf(why, len, "k3_wgmma needs k %% 8 == 0 and k > 0 (k = %d)", s->k);
        return 0;
    }
    if (s->n <= 0 || s->n % 8 != 0) {
        snprintf(why, len, "k3_wgmma needs n %% 8 == 0 and n > 0 (n = %d)", s->n);
        return 0;
    }
    if (s->experts < 1 || s->experts > MAX_EXPERTS) {
        snprintf(why, len, "k3_wgmma handles 1..%d experts (experts = %d)", MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

// lab:configs
K3_REGISTER(k3_wgmma_tile_m128_n192, k3::tile_kernel, (k3::Shape{192, false, true, false}), 192)
