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
//   k3_wgmma_ends, _n256_ends, _persist_n256_ends
//                             the same, the front and the back of the tile list side by side
//   k3_wgmma_epi, _persist_epi, _n256_epi, _persist_n256_epi
//                             the same with the epilogue's stores handed to the producer
//                             warpgroup's idle warps (StoreWarps)
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

// ---- Tiles: the device schedule, both ends of its list at once (gg_sched_both_ends) ----
// Slot t of the persistent stride (CTA i, round k) holds a tile from the front of the
// expert-major list or from its back, by the parity of i + k. Under skew the front is the
// heaviest experts' tiles (compute-bound: their B panels serve many row tiles from L2) and the
// back the lightest experts' (memory-bound: a B panel from DRAM per tile or two); in the
// lesson's order they run one after the other, here side by side. Unpaired CTAs only (the
// stride is gridDim.x).
struct BothEnds : DeviceTiles {
    __device__ static gg::SchedTile at(const Schedule &s, const GgTile *, int t, int rank) {
        return s.at(gg_sched_both_ends(t, s.total(), (int)gridDim.x), rank);
    }
};

// ---- Rows64: what becomes of an expert's remainder of 1..64 rows ----
// Not adaptive: the schedule gives it a 128-row tile, so no tile is 64 rows high.
struct Fixed128 {
    static constexpr bool ADAPTIVE = false;
    __device__ static bool idle(const gg::SchedTile &, int) { return false; }
    template <int BLOCK_N, class RING, int ACC, class OUT>
    __device__ static void tile64(RING &, float (&)[ACC], OUT &, const gg::SchedTile &, int,
                                  uint16_t *, int, int, int, int, int) {}
};
// A 64-row tile on consumer 0 alone, all columns; consumer 1 follows the ring idle.
struct Solo64 {
    static constexpr bool ADAPTIVE = true;
    __device__ static bool idle(const gg::SchedTile &tile, int c) {
        return c == 1 && tile.height == WG_ROWS;
    }
    template <int BLOCK_N, class RING, int ACC, class OUT>
    __device__ static void tile64(RING &ring, float (&acc)[ACC], OUT &out,
                                  const gg::SchedTile &tile, int, uint16_t *C, int n, int row,
                                  int rows, int lane, int k_blocks) {
        ring.template mma_tile<BLOCK_N>(acc, 0, 0, k_blocks);
        out.template store<BLOCK_N / PANEL_N>(acc, tile, C, n, row, rows, tile.col0, lane);
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

// ---- Epilogue: the consumers hand each tile to the producer warpgroup's three idle warps ----
// In the lesson both consumers store their tile themselves, so the tensor cores wait from a
// tile's last wgmma until the next tile's first: the shared-memory round trips and global
// stores of the whole tile. Here a consumer warp writes its rows as bf16 (stmatrix, the same
// 16 x 64 swizzled blocks) into a buffer the size of the tile and goes on to its next tile;
// warps 1..3 of the producer warpgroup copy the buffer to C with the same masked 16-byte
// stores. One buffer, walked like a ring of one stage: `filled` (count: the 256 consumer
// threads, each arrives once per tile, idle or not) and `drained` (count: the 96 store
// threads). Costs shared memory: a 128 x BLOCK_N bf16 tile (48 KiB at 192 columns) in place
// of 16 KiB of staging, i.e. one ring stage fewer.
struct StoreWarps {
    static constexpr bool STORE_WARPS = true;
    static constexpr int THREADS = WG_THREADS - 32;  // the producer warpgroup but warp 0
    // Block (16-row slice b, panel p) of the tile: 2 KiB at (b * PANELS + p) * 2 KiB.
    static constexpr int bytes(int block_n) {
        return BLOCK_M / STAGING_ROWS * (block_n / PANEL_N) * STAGING_WARP_BYTES;
    }
    struct Shared {
        uint64_t filled, drained;
        __device__ void init() {
            gg::mbarrier_init(&filled, 2 * WG_THREADS);
            gg::mbarrier_init(&drained, THREADS);
        }
    };
    template <int BLOCK_N>
    struct Out {
        Shared &sh;
        uint8_t *buffer;
        GgPipe pipe = {0, 0};
        __device__ Out(Shared &s, uint8_t *buf, int, int) : sh(s), buffer(buf) {}
        template <int PANELS, int ACC>
        __device__ void store(const float (&acc)[ACC], const gg::SchedTile &tile, uint16_t *,
                              int n, int row, int rows, int col, int lane) {
            // The store warps have read the previous tile out of the buffer.
            gg::mbarrier_wait_parity(&sh.drained, gg_pipe_empty_parity(pipe));
            const int slice = (row - tile.row0) / STAGING_ROWS, panel0 = (col - tile.col0) / PANEL_N;
            if (rows > 0) {  // warp-uniform: rows past the expert's end are not stored
#pragma unroll
                for (int p = 0; p < PANELS; ++p)
                    if (col + p * PANEL_N < n)  // warp-uniform; panels past n are never read
                        gg::wgmma_stage_panel(acc, p, buffer + (slice * (BLOCK_N / PANEL_N) + panel0 + p) *
                                                                   STAGING_WARP_BYTES, lane);
            }
            gg::mbarrier_arrive(&sh.filled);
            gg_pipe_advance(&pipe, 1);
        }
        __device__ void skip() {
            gg::mbarrier_wait_parity(&sh.drained, gg_pipe_empty_parity(pipe));
            gg::mbarrier_arrive(&sh.filled);
            gg_pipe_advance(&pipe, 1);
        }
    };
    // Store thread i (0..95): the tile's valid rows and columns, 16 bytes at a time, row-major
    // so that eight neighbours write one 128-byte run of a row.
    template <int BLOCK_N>
    __device__ static void drain(Shared &sh, const uint8_t *buffer, GgPipe &pipe,
                                 const gg::SchedTile &tile, uint16_t *C, int n, int i) {
        constexpr int CHUNKS = BLOCK_N / 8, PANELS = BLOCK_N / PANEL_N;
        // One warp polls the barrier; the other two sleep on a named barrier until it has seen
        // the phase (three warps spinning on try_wait cost the mainloop, commit 43e4273).
        if (i < 32)  // test, then sleep a microsecond: a tile takes several
            while (!gg::mbarrier_test_parity(&sh.filled, gg_pipe_full_parity(pipe))) __nanosleep(1000);
        gg::named_barrier_sync(1, THREADS);
        const int rows = min(tile.rows, tile.height);  // 0 for an idle tile
        const int chunks = tile.col0 < n ? min(CHUNKS, (n - tile.col0) / 8) : 0;
        for (int idx = i; idx < rows * CHUNKS; idx += THREADS) {
            const int r = idx / CHUNKS, j = idx % CHUNKS;
            if (j >= chunks) continue;
            const uint8_t *block = buffer + ((r / STAGING_ROWS) * PANELS + j / 8) * STAGING_WARP_BYTES;
            const uint4 v = *reinterpret_cast<const uint4 *>(block + gg_swizzle128(r % STAGING_ROWS, j % 8));
            *reinterpret_cast<uint4 *>(C + (size_t)(tile.row0 + r) * n + tile.col0 + 8 * j) = v;
        }
        gg::mbarrier_arrive(&sh.drained);
        gg_pipe_advance(&pipe, 1);
    }
};

// The lesson's epilogue in StoreWarps' shared memory: one ring stage fewer, nothing else, to
// tell what StoreWarps' stage costs from what its handover gains.
struct WarpStoresTileBuffer : WarpStores {
    static constexpr int bytes(int block_n) { return StoreWarps::bytes(block_n); }
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
struct Ends : Lesson {
    using Tiles = BothEnds;
};
struct N256Ends : N256 {
    using Tiles = BothEnds;
};
struct PersistN256Ends : PersistN256 {
    using Tiles = BothEnds;
};
struct Epi : Lesson {
    using Epilogue = StoreWarps;
};
struct S4 : Lesson {
    using Epilogue = WarpStoresTileBuffer;
};
struct PersistEpi : Persist {
    using Epilogue = StoreWarps;
};
struct N256Epi : N256 {
    using Epilogue = StoreWarps;
};
struct PersistN256Epi : PersistN256 {
    using Epilogue = StoreWarps;
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
K3_CONFIG(k3_wgmma_ends, Ends)
K3_CONFIG(k3_wgmma_n256_ends, N256Ends)
K3_CONFIG(k3_wgmma_persist_n256_ends, PersistN256Ends)
K3_CONFIG(k3_wgmma_epi, Epi)
K3_CONFIG(k3_wgmma_s4, S4)
K3_CONFIG(k3_wgmma_persist_epi, PersistEpi)
K3_CONFIG(k3_wgmma_n256_epi, N256Epi)
K3_CONFIG(k3_wgmma_persist_n256_epi, PersistN256Epi)
