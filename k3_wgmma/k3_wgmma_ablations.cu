// k3_wgmma ablations: the lesson kernel (k3_wgmma.cu, included below) with the other
// configurations that the README's step table measures. Each configuration changes one of the
// lesson's choices (its Config pieces: tile width, Tiles, Pair, Rows64); the kernel body is
// the lesson's. This file is the k3_wgmma library's one translation unit, so the lesson's
// default configuration is compiled exactly as it reads there.
//
//   k3_wgmma_tile      one CTA per tile of the host-built list (k1/k2's launch), BM = 128
//   k3_wgmma_persist   + persistent grid over the device schedule, BM = 128
//   k3_wgmma_solo64    + adaptive BM, the 64-row tile on consumer 0 alone
//   k3_wgmma_split64   + the 64-row tile split by columns over both consumers (the lesson)
//   k3_wgmma_n128/_n256       the lesson at 128- / 256-wide column blocks
//   k3_wgmma_mc, _mc_n256     row-tile pairs in 2-CTA clusters, B multicast to both
//   k3_wgmma_mca              column-block pairs in 2-CTA clusters, A multicast to both
//   k3_wgmma_persist_n256     k3_wgmma_persist at 256-wide column blocks
//   k3_wgmma_pingpong, _pingpong64, _pingpong_n128   not a Config of the lesson but a kernel of
//                             its own (k3_wgmma_pingpong.cuh): each consumer owns whole tiles
// The name k3_wgmma itself is the entry point (k3_wgmma_entry.c): it runs one of these,
// chosen from the problem's shape.
#include "k3_wgmma.cu"

namespace {

// ---- Tiles: the host-built flat list, one CTA per tile, every tile 128 rows ----
// (The list holds 128-row tiles only, so it goes with Fixed128 and Unpaired.)
struct HostTiles {
    static constexpr bool HOST_LIST = true;
    __device__ static void build(Schedule &, const int *, int, int, int, int, bool, GgPairing) {}
    __device__ static int count(const Schedule &, int num_host_tiles) { return num_host_tiles; }
    __device__ static gg::SchedTile at(const Schedule &, const GgTile *tiles, int t, int) {
        const GgTile g = tiles[t];
        return gg::SchedTile{g.expert, g.row0, g.rows, BLOCK_M, g.col0};
    }
    // tokens > 0 and n > 0 (the launcher and can_implement check): at least one tile.
    static cudaError_t grid(const GgLaunch *p, const void *, const cudaLaunchConfig_t *, int, int,
                            int *ctas) {
        *ctas = p->num_tiles;
        return cudaSuccess;
    }
};

// ---- Rows64: what becomes of an expert's remainder of 1..64 rows ----
// Not adaptive: the schedule gives it a 128-row tile, so no tile is 64 rows high.
struct Fixed128 {
    static constexpr bool ADAPTIVE = false;
    __device__ static bool idle(const gg::SchedTile &, int) { return false; }
    template <int BLOCK_N, class RING, int ACC>
    __device__ static void tile64(RING &, float (&)[ACC], int, uint8_t *, uint16_t *, int, int,
                                  int, int, int, int) {}
};
// A 64-row tile on consumer 0 alone, all columns; consumer 1 follows the ring idle.
struct Solo64 {
    static constexpr bool ADAPTIVE = true;
    __device__ static bool idle(const gg::SchedTile &tile, int c) {
        return c == 1 && tile.height == WG_ROWS;
    }
    template <int BLOCK_N, class RING, int ACC>
    __device__ static void tile64(RING &ring, float (&acc)[ACC], int, uint8_t *staging,
                                  uint16_t *C, int n, int row, int rows, int col0, int lane,
                                  int k_blocks) {
        ring.template mma_tile<BLOCK_N>(acc, 0, 0, k_blocks);
        gg::wgmma_store_warp_rows<BLOCK_N / PANEL_N>(acc, staging, C, n, row, rows, col0, lane);
    }
};

// ---- Pair: two CTAs of a cluster on the two tiles of a schedule entry (gg_schedule.h) ----
// Both CTAs walk the same entries. ROWS: row tiles 2p, 2p + 1 of one expert and column block;
// each CTA loads its own A and the B panels p with p % 2 == rank, multicast to both. COLS:
// column blocks 2q, 2q + 1 of one row tile; each loads its own B and the A boxes h with
// h % 2 == rank. A shared box lands at the same offset in both CTAs and completes on each
// CTA's own full barrier, so a full barrier expects every byte of its CTA's stage, whoever
// issued it: the CTAs agree on the count of what they share (ROWS: col0, hence the B panels;
// COLS: row0 and height, hence the A boxes). Both producers write every stage, so a stage's
// release goes to both CTAs' empty barriers (count 8 x 2). A tile without rows (ROWS, odd
// row-tile count: height 0) or without columns (COLS, odd column-block count: col0 >= n) still
// issues its share and its consumers wait and release every stage; it computes and stores
// nothing.
template <GgPairing PAIRING_>
struct Paired {
    static constexpr int CLUSTER = 2;
    static constexpr GgPairing PAIRING = PAIRING_;
    __device__ static int rank() { return (int)gg::cluster_ctarank(); }
    // Barriers initialised and the schedule built here and in the peer before either
    // multicasts into the other or arrives on its barriers.
    __device__ static void start() { gg::cluster_sync(); }
    // No CTA exits while its peer may still arrive on its empty barriers (the peer's last
    // releases). Every multicast into this CTA has landed already: our consumers waited for
    // every full phase. The .aligned barrier wants converged warps.
    __device__ static void finish() {
        __syncwarp();
        gg::cluster_sync();
    }
    __device__ static void load_a(void *box, const CUtensorMap *map, int k0, int row, uint64_t *bar,
                                  int h, int rank) {
        if constexpr (PAIRING != GG_PAIR_COLS) gg::tma_load_2d(box, map, k0, row, bar);
        else if (h % 2 == rank) gg::tma_load_2d_multicast(box, map, k0, row, bar, 0x3);
    }
    __device__ static void load_b(void *box, const CUtensorMap *map, int col, int k0, int expert,
                                  uint64_t *bar, int p, int rank) {
        if constexpr (PAIRING != GG_PAIR_ROWS) gg::tma_load_3d(box, map, col, k0, expert, bar);
        else if (p % 2 == rank) gg::tma_load_3d_multicast(box, map, col, k0, expert, bar, 0x3);
    }
    __device__ static void release(uint64_t *empty, int rank) {
        gg::mbarrier_arrive(empty);
        gg::mbarrier_arrive_cluster(empty, (uint32_t)(rank ^ 1));
    }
};

// ---- The measured configurations: each changes one thing from the one it derives from ----
struct Tile : Lesson {
    using Tiles = HostTiles;
    using Rows64 = Fixed128;
};
struct Persist : Lesson {
    using Rows64 = Fixed128;
};
struct Solo : Lesson {
    using Rows64 = Solo64;
};
struct N128 : Lesson {
    static constexpr int BLOCK_N = 128;
};
struct N256 : Lesson {
    static constexpr int BLOCK_N = 256;
};
struct Mc : Lesson {
    using Pair = Paired<GG_PAIR_ROWS>;
};
struct McN256 : N256 {
    using Pair = Paired<GG_PAIR_ROWS>;
};
struct Mca : Lesson {
    using Pair = Paired<GG_PAIR_COLS>;
};
struct PersistN256 : Persist {
    static constexpr int BLOCK_N = 256;
};

}  // namespace

K3_CONFIG(k3_wgmma_tile, Tile)
K3_CONFIG(k3_wgmma_persist, Persist)
K3_CONFIG(k3_wgmma_solo64, Solo)
K3_CONFIG(k3_wgmma_n128, N128)
K3_CONFIG(k3_wgmma_n256, N256)
K3_CONFIG(k3_wgmma_mc, Mc)
K3_CONFIG(k3_wgmma_mc_n256, McN256)
K3_CONFIG(k3_wgmma_mca, Mca)
K3_CONFIG(k3_wgmma_persist_n256, PersistN256)

#include "k3_wgmma_pingpong.cuh"  // its own kernel, from the lesson's pieces
