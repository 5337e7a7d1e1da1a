// k3_wgmma ablations (built with -DGG_ABLATIONS=ON): step 3 (step3_adaptive.cu) with one choice
// changed, kept so that their recorded trials (k3_wgmma/TRIALS.md) can be rerun. The entry
// point never chooses them: each was slower than the step it changes in every case measured.
//
//   k3_wgmma_coop_m64_n192_solo   the 64-row tile on consumer 0 alone; consumer 1 follows the
//                                 ring idle (step 3 splits its columns over both)
//   k3_wgmma_coop_m64_n192_mcb    2-CTA clusters on row-tile pairs of one expert and column
//   k3_wgmma_coop_m64_n256_mcb    block: each CTA loads its own A and half of the B panels,
//                                 multicast to both
//   k3_wgmma_coop_m64_n192_mca    2-CTA clusters on column-block pairs of one row tile: each
//                                 loads its own B and one of the two A boxes, multicast to both
//
// Pairs (gg_schedule.h, GG_PAIR_ROWS / GG_PAIR_COLS): both CTAs walk the same entries, tile
// `rank` each. A shared box lands at the same offset in both CTAs and completes on each CTA's own
// full barrier, so a full barrier expects every byte of its CTA's stage, whoever issued it: the
// CTAs agree on the count of what they share (rows: col0, hence the B panels; columns: row0 and
// height, hence the A boxes). Both producers write every stage, so a stage's release goes to both
// CTAs' empty barriers (count 8 x 2). A tile without rows (rows, odd row-tile count: height 0)
// or without columns (columns, odd column-block count: col0 >= n) still issues its share, and its
// consumers wait for and release every stage; it computes and stores nothing.
#include "k3_wgmma/k3_wgmma.cuh"

namespace k3 {
namespace {

template <int CLUSTER>
constexpr uint16_t CLUSTER_MASK = (1u << CLUSTER) - 1;  // multicast to every CTA of the cluster

template <GgPairing PAIRING_>
struct PairLoads : NMajorB {
    static constexpr int CLUSTER = 2;
    static constexpr GgPairing PAIRING = PAIRING_;
    __device__ static int rank() { return (int)gg::cluster_ctarank(); }
    __device__ static void load_a(void *box, const CUtensorMap *map, int k0, int row, uint64_t *bar,
                                  int h, int rank) {
        if constexpr (PAIRING != GG_PAIR_COLS) gg::tma_load_2d(box, map, k0, row, bar);
        else if (h % 2 == rank) gg::tma_load_2d_multicast(box, map, k0, row, bar, CLUSTER_MASK<CLUSTER>);
    }
    __device__ static void load_b(void *box, const CUtensorMap *map, int col, int k0, int expert,
                                  uint64_t *bar, int p, int rank) {
        if constexpr (PAIRING != GG_PAIR_ROWS) gg::tma_load_3d(box, map, col, k0, expert, bar);
        else if (p % 2 == rank) gg::tma_load_3d_multicast(box, map, col, k0, expert, bar, CLUSTER_MASK<CLUSTER>);
    }
    __device__ static void release(uint64_t *empty) {  // to this CTA's barrier and the peer's
        gg::mbarrier_arrive(empty);
        gg::mbarrier_arrive_cluster(empty, gg::cluster_ctarank() ^ 1u);
    }
};
struct Unpaired : OwnLoads {
    static constexpr GgPairing PAIRING = GG_PAIR_NONE;
    __device__ static int rank() { return 0; }
};

// SOLO: the 64-row tile on consumer 0 alone (else split by columns, as step 3).
template <int BLOCK_N, class LOADS, bool SOLO, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
ablation_kernel(K3_KERNEL_PARAMS(TRACE)) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    constexpr int CLUSTER = LOADS::CLUSTER;
    constexpr int N0 = (BLOCK_N / 2 + PANEL_N - 1) / PANEL_N * PANEL_N, N1 = BLOCK_N - N0;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    uint8_t *smem = ring_start(smem_raw);
    const int rank = LOADS::rank(), cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    init_ring(full, empty, 1, CONSUMER_WARPS * CLUSTER);
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, true, LOADS::PAIRING);
    // Barriers and schedule ready here and in the peer before either multicasts into the other
    // or arrives on its barriers.
    if constexpr (CLUSTER > 1) gg::cluster_sync();
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k_blocks_of(k), wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int t = cluster; t < num_tiles; t += clusters) {
                const gg::SchedTile tile = sched.at(t, rank);
                Trace span;
                produce_tile<BLOCK_N, LOADS>(pipe, tile, k_blocks, &tmap_a, &tmap_b, smem, full, empty,
                                             tokens, n, rank, span);
                span.end(trace, GG_TRACE_PRODUCER, t, tile, tile.height > 0 && tile.col0 < n);
            }
        }
    } else {
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        const int warp_row = warp * STAGING_ROWS;
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        ConsumerRing<R::STAGES, R::STAGE_BYTES, LOADS> ring{full, empty, gg::smem_u32(smem), lane == 0};
        float acc[BLOCK_N / 2];
        for (int t = cluster; t < num_tiles; t += clusters) {
            const gg::SchedTile tile = sched.at(t, rank);
            Trace span;
            const bool idle = tile.height == 0 || tile.col0 >= n || (SOLO && c == 1 && tile.height == WG_ROWS);
            if (idle) {
                ring.skip_tile(k_blocks, span);
            } else if (tile.height == BLOCK_M) {
                ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks, span);
                const int row = c * WG_ROWS + warp_row;
                gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + row,
                                                     tile.rows - row, tile.col0, lane);
            } else if (SOLO) {
                ring.template mma<BLOCK_N>(acc, 0, 0, k_blocks, span);
                gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + warp_row,
                                                     tile.rows - warp_row, tile.col0, lane);
            } else if (c == 0) {
                ring.template mma<N0>(acc, 0, 0, k_blocks, span);
                gg::wgmma_store_warp_rows<N0 / PANEL_N>(acc, staging, C, n, tile.row0 + warp_row,
                                                        tile.rows - warp_row, tile.col0, lane);
            } else {
                ring.template mma<N1>(acc, 0, N0 / PANEL_N * PANEL_BYTES, k_blocks, span);
                gg::wgmma_store_warp_rows<N1 / PANEL_N>(acc, staging, C, n, tile.row0 + warp_row,
                                                        tile.rows - warp_row, tile.col0 + N0, lane);
            }
            if (threadIdx.x % WG_THREADS == 0) span.end(trace, GG_TRACE_CONSUMER + c, t, tile, !idle);
        }
    }
    // No CTA exits while its peer may still arrive on its empty barriers (the peer's last
    // releases). Every multicast into this CTA has landed: our consumers waited for every full
    // phase. The .aligned barrier wants converged warps.
    if constexpr (CLUSTER > 1) {
        __syncwarp();
        gg::cluster_sync();
    }
}

}  // namespace
}  // namespace k3

#define ABLATION(NAME, BLOCK_N, LOADS, SOLO)                                                         \
    K3_REGISTER(NAME, k3::ablation_kernel, (k3::Shape{BLOCK_N, true, false, false, LOADS::CLUSTER}), \
                BLOCK_N, LOADS, SOLO)
ABLATION(k3_wgmma_coop_m64_n192_solo, 192, k3::Unpaired, true)
ABLATION(k3_wgmma_coop_m64_n192_mcb, 192, k3::PairLoads<GG_PAIR_ROWS>, false)
ABLATION(k3_wgmma_coop_m64_n256_mcb, 256, k3::PairLoads<GG_PAIR_ROWS>, false)
ABLATION(k3_wgmma_coop_m64_n192_mca, 192, k3::PairLoads<GG_PAIR_COLS>, false)
