// k3_tcgen05 — stage 3 for Blackwell: tcgen05.mma into Tensor Memory, CTA pairs (sm_100a,
// sm_103a).
//
// What changed since k2_tma_ws: no warp holds an accumulator any more. One thread of the
// leader CTA issues tcgen05.mma for a whole CTA pair (M = 256) reading A and B straight from
// shared memory through descriptors; the fp32 accumulator lives in Tensor Memory (TMEM),
// double-buffered so the epilogue of one tile overlaps the MMAs of the next. The grid is
// persistent and schedules tiles on the device from row_offsets, like k3_wgmma.
//
// Pair tile   256 rows x BLOCK_N = 256 columns, K-slices of BLOCK_K = 64. CTA rank r of the
//             cluster loads rows [row0 + 128 r, +128) of A and columns [col0 + 128 r, +128)
//             of B; its TMEM receives its 128 rows x all 256 columns of the product.
// Warps       192 threads: warp 0 TMA producer (both CTAs), warp 1 MMA issuer (leader CTA)
//             and TMEM allocator (both CTAs), warps 2..5 epilogue (both CTAs; warp w reads
//             TMEM lanes [32 (w % 4), +32), i.e. those rows of the tile).
// Shared mem  6 stages x (A 128x64 + B 64x128 bf16 = 32 KiB) = 192 KiB dynamic (+1 KiB for
//             1024-byte alignment), 128B-swizzled by TMA; about 3.3 KiB static (barriers,
//             schedule). 1 CTA per SM, which also leaves it all 512 TMEM columns.
// TMEM        2 accumulators x 256 fp32 columns = 512 columns (the whole TMEM), allocated
//             once per CTA pair with cta_group::2.
// Preconditions  k % 64 == 0, n % 8 == 0 (16-byte rows for TMA), 1 <= experts <= 4096.
//             Rows past an expert's end and columns past n are computed from whatever TMA
//             loaded (zeros or the next expert's rows) and never stored.
// Status      compiled and SASS-checked for sm_100a and sm_103a; NOT yet run on Blackwell
//             hardware.
// Run it      build/bin/ggemm run --kernel k3_tcgen05
#include <stdint.h>
#include <stdio.h>

#include "gg_check.h"
#include "gg_desc_sm100.h"
#include "gg_kernel.h"
#include "gg_launch.h"
#include "gg_pipeline.h"
#include "gg_schedule.cuh"
#include "gg_tma.h"
#include "k3_tcgen05.h"
#include "ptx/ptx_ampere.cuh"
#include "ptx/ptx_tcgen05.cuh"
#include "ptx/ptx_tma.cuh"

namespace {

constexpr int CLUSTER = 2;               // CTA pair: rank 0 leads, rank 1 is its peer
constexpr int BLOCK_M = 128;             // rows per CTA
constexpr int PAIR_M = CLUSTER * BLOCK_M;  // rows per pair tile = the MMA's M
constexpr int BLOCK_N = 256;             // columns per pair tile = the MMA's N
constexpr int HALF_N = BLOCK_N / CLUSTER;  // B columns each CTA loads
constexpr int BLOCK_K = 64;              // one 128-byte swizzle row of bf16
constexpr int MMA_K = 16;                // K of one kind::f16 MMA
constexpr int PANEL_N = 64;              // B columns per TMA box (128 bytes, the swizzle width)
constexpr int STAGES = 6;
constexpr int ACC_BUFS = 2;              // TMEM accumulators
constexpr int TMEM_COLS = ACC_BUFS * BLOCK_N;
constexpr int EPI_WARPS = 4;
constexpr int EPI_THREADS = 32 * EPI_WARPS;
constexpr int THREADS = 32 * 2 + EPI_THREADS;
constexpr int MAX_EXPERTS = GG_SCHED_MAX_EXPERTS;  // 4096: the schedule's two-level index

constexpr int A_BYTES = BLOCK_M * BLOCK_K * 2;     // 16 KiB
constexpr int PANEL_BYTES = BLOCK_K * PANEL_N * 2;  // 8 KiB: 64 k-rows of 128 bytes
constexpr int B_BYTES = HALF_N * BLOCK_K * 2;      // 16 KiB: two panels
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + slack to align the base to 1024

// Descriptor strides (see common/gg_desc_sm100.h). 128-byte rows, 8-row swizzle atoms:
constexpr uint32_t SBO = 8 * 128;          // next 8 rows (A) / next 8 k-rows (B)
constexpr uint32_t A_LBO = 16;             // unused for K-major swizzled ("assumed 1")
constexpr uint32_t B_LBO = PANEL_BYTES;    // next 64-column panel of the N-major B tile
constexpr uint32_t A_K_STEP = MMA_K * 2;   // 16 bf16 along a row: 32 bytes
constexpr uint32_t B_K_STEP = MMA_K * 128; // 16 k-rows of 128 bytes: 2048 bytes

static_assert(TMEM_COLS <= 512, "two accumulators must fit the 512 TMEM columns");
static_assert(BLOCK_N % 16 == 0 && BLOCK_N <= 256, "M = 256 (cta_group::2) needs N % 16, N <= 256");
static_assert(HALF_N == 2 * PANEL_N, "each CTA loads its half of B as two 64-column panels");
static_assert(A_BYTES % 1024 == 0 && PANEL_BYTES % 1024 == 0, "128B swizzle needs 1024-byte tiles");

// Barriers and the TMEM address. Same offsets in both CTAs: commit and TMA address the
// peer's copy by the local offset.
struct Control {
    uint64_t full[STAGES];            // leader only: both CTAs' TMA bytes of a stage landed
    uint64_t empty[STAGES];           // each CTA: the MMAs finished reading its stage
    uint64_t tmem_full[ACC_BUFS];     // each CTA: accumulator buffer ready for the epilogue
    uint64_t tmem_empty[ACC_BUFS];    // leader only: both CTAs' epilogues drained the buffer
    uint32_t tmem_base;               // written by tcgen05.alloc
};

__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
k3_tcgen05_kernel(const __grid_constant__ CUtensorMap tmap_a,
                  const __grid_constant__ CUtensorMap tmap_b, uint16_t *__restrict__ C,
                  const int *__restrict__ row_offsets, int experts, int tokens, int k, int n) {
    __shared__ gg::TileSchedule<MAX_EXPERTS, PAIR_M> sched;  // pair tiles: 256 rows, not adaptive
    __shared__ Control ctl;
    extern __shared__ uint8_t smem_raw[];
    // Swizzled TMA tiles and descriptors assume 1024-byte-aligned tiles (absolute address).
    uint8_t *smem = smem_raw + ((1024 - (gg::smem_u32(smem_raw) & 1023)) & 1023);
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };

    const uint32_t rank = gg::cluster_ctarank();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int k_blocks = k / BLOCK_K;

    sched.build(row_offsets, experts, tokens, n, BLOCK_N, false);  // all threads; ends in a sync
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&ctl.full[s], 1);   // the leader's expect_tx arrive; bytes from both
            gg::mbarrier_init(&ctl.empty[s], 1);  // one commit per use
        }
        for (int b = 0; b < ACC_BUFS; ++b) {
            gg::mbarrier_init(&ctl.tmem_full[b], 1);                     // one commit per tile
            gg::mbarrier_init(&ctl.tmem_empty[b], CLUSTER * EPI_THREADS);  // every epilogue thread
        }
        gg::fence_mbarrier_init();
    }
    // Barrier inits visible cluster-wide, and the peer is running before the pair allocates.
    gg::cluster_sync();
    if (warp == 1) {
        gg::tmem_alloc_pair(&ctl.tmem_base, TMEM_COLS);
        gg::tmem_relinquish_alloc_permit_pair();  // we never allocate again
    }
    gg::tcgen05_fence_before_thread_sync();
    gg::cluster_sync();
    gg::tcgen05_fence_after_thread_sync();
    const uint32_t tmem_base = ctl.tmem_base;
    const int total = sched.total();

    if (warp == 0) {
        // ---- TMA producer, both CTAs: this CTA's half of every stage, bytes counted on the
        // leader's full barrier. The ring position runs on across tiles.
        if (gg::elect_one_sync()) {
            GgPipe ring = {0, 0};
            for (int t = cluster; t < total; t += clusters) {
                const gg::SchedTile tile = sched.at(t);
                // A box wholly past the last row (column) feeds only results that are never
                // stored; move it back onto the edge so that every box overlaps the tensor.
                const int a_row = min(tile.row0 + BLOCK_M * (int)rank, tokens - 1);
                const int b_col = tile.col0 + HALF_N * (int)rank;
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&ring, STAGES)) {
                    const int stage = ring.stage;
                    gg::mbarrier_wait_parity(&ctl.empty[stage], gg_pipe_empty_parity(ring));
                    if (rank == 0)  // the leader expects both halves: 2 x 32 KiB
                        gg::mbarrier_arrive_expect_tx(&ctl.full[stage], CLUSTER * STAGE_BYTES);
                    const uint32_t full = gg::cluster_smem_addr(&ctl.full[stage], 0);
                    gg::tma_load_2d_pair(a_tile(stage), &tmap_a, kb * BLOCK_K, a_row, full);
                    for (int panel = 0; panel < HALF_N / PANEL_N; ++panel) {
                        const int x = b_col + panel * PANEL_N;  // a multiple of 64; n % 8 == 0
                        gg::tma_load_3d_pair(b_tile(stage) + panel * PANEL_BYTES, &tmap_b,
                                             x < n ? x : n - 8, kb * BLOCK_K, tile.expert, full);
                    }
                }
            }
            // Drain: wait until the MMAs released every stage, so that no commit arrives on
            // this CTA's barriers after it has exited.
            for (int s = 0; s < STAGES; ++s, gg_pipe_advance(&ring, STAGES))
                gg::mbarrier_wait_parity(&ctl.empty[ring.stage], gg_pipe_empty_parity(ring));
        }
    } else if (warp == 1 && rank == 0) {
        // ---- MMA issuer, leader only: one thread issues the pair's MMAs and commits. The
        // same thread must commit, since a commit tracks the MMAs its own thread issued.
        if (gg::elect_one_sync()) {
            // M = 256 (the pair), N = 256, A K-major, B N-major: 0x10410490
            const uint32_t idesc = gg_sm100_idesc_bf16(PAIR_M, BLOCK_N, 0, 1);
            GgPipe ring = {0, 0}, acc = {0, 0};  // smem stages; TMEM accumulators (a ring of 2)
            for (int t = cluster; t < total; t += clusters, gg_pipe_advance(&acc, ACC_BUFS)) {
                const int buf = acc.stage;
                // Both CTAs' epilogues have read this buffer's previous tile.
                gg::mbarrier_wait_parity(&ctl.tmem_empty[buf], gg_pipe_empty_parity(acc));
                gg::tcgen05_fence_after_thread_sync();
                const uint32_t d_tmem = tmem_base + buf * BLOCK_N;  // lane 0, column buf * 256
                for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&ring, STAGES)) {
                    const int stage = ring.stage;
                    gg::mbarrier_wait_parity(&ctl.full[stage], gg_pipe_full_parity(ring));
                    gg::tcgen05_fence_after_thread_sync();
                    const uint32_t a_addr = gg::smem_u32(a_tile(stage));
                    const uint32_t b_addr = gg::smem_u32(b_tile(stage));
#pragma unroll
                    for (int kk = 0; kk < BLOCK_K / MMA_K; ++kk) {
                        const uint64_t a_desc = gg_sm100_smem_desc(a_addr + kk * A_K_STEP, A_LBO, SBO,
                                                                   GG_SM100_SWIZZLE_128B);
                        const uint64_t b_desc = gg_sm100_smem_desc(b_addr + kk * B_K_STEP, B_LBO, SBO,
                                                                   GG_SM100_SWIZZLE_128B);
                        gg::tcgen05_mma_f16_pair(d_tmem, a_desc, b_desc, idesc, kb > 0 || kk > 0);
                    }
                    gg::tcgen05_commit_pair_multicast(&ctl.empty[stage], 0x3);  // stage free in both
                }
                gg::tcgen05_commit_pair_multicast(&ctl.tmem_full[buf], 0x3);  // tile done, both CTAs
            }
            // Drain: every epilogue arrival from the peer has landed before we exit.
            for (int b = 0; b < ACC_BUFS; ++b, gg_pipe_advance(&acc, ACC_BUFS))
                gg::mbarrier_wait_parity(&ctl.tmem_empty[acc.stage], gg_pipe_empty_parity(acc));
        }
    } else if (warp >= 2) {
        // ---- Epilogue, both CTAs: TMEM -> registers -> bf16 -> global, rows masked.
        const int quarter = warp % 4;                 // the TMEM lane quarter this warp may read
        const int row = 32 * quarter + lane;          // this thread's row within the CTA's 128
        const uint32_t lane_base = tmem_base + ((uint32_t)(32 * quarter) << 16);
        GgPipe acc = {0, 0};  // the TMEM accumulator ring, in step with the MMA thread's
        for (int t = cluster; t < total; t += clusters, gg_pipe_advance(&acc, ACC_BUFS)) {
            const gg::SchedTile tile = sched.at(t);
            const int buf = acc.stage;
            gg::mbarrier_wait_parity(&ctl.tmem_full[buf], gg_pipe_full_parity(acc));
            gg::tcgen05_fence_after_thread_sync();
            const int cta_rows = tile.rows - BLOCK_M * (int)rank;  // valid rows here, may be <= 0
            if (32 * quarter < cta_rows) {  // warp-uniform: tcgen05.ld is warp-wide
                const bool row_ok = row < cta_rows;  // else the next expert's row: never stored
                const int c_row = tile.row0 + BLOCK_M * (int)rank + row;
                uint16_t *out = C + (row_ok ? (size_t)c_row * n : 0);
                for (int c = 0; c < BLOCK_N && tile.col0 + c < n; c += 32) {  // uniform too
                    uint32_t v[32];
                    gg::tmem_ld_32x32b_x32(lane_base + buf * BLOCK_N + c, v);
                    gg::tmem_wait_ld(v);
                    if (!row_ok) continue;
#pragma unroll
                    for (int j = 0; j < 4; ++j) {  // 8 columns = 16 bytes; n % 8 == 0
                        const int col = tile.col0 + c + 8 * j;
                        if (col >= n) break;
                        uint32_t w[4];  // bf16 pairs, lower column in the low half
#pragma unroll
                        for (int q = 0; q < 4; ++q)
                            w[q] = gg::pack_bf16x2(__uint_as_float(v[8 * j + 2 * q]),
                                                   __uint_as_float(v[8 * j + 2 * q + 1]));
                        *reinterpret_cast<uint4 *>(out + col) = make_uint4(w[0], w[1], w[2], w[3]);
                    }
                }
            }
            // Our TMEM reads are complete (wait::ld); order them before the leader's next MMA
            // into this buffer, then every epilogue thread of both CTAs arrives on the leader.
            gg::tcgen05_fence_before_thread_sync();
            gg::mbarrier_arrive_cluster(&ctl.tmem_empty[buf], 0);
        }
    }

    // Teardown: all TMEM traffic of both CTAs is finished before the pair frees it.
    __syncwarp();  // the elected lanes rejoin their warps for the .aligned cluster barrier
    gg::tcgen05_fence_before_thread_sync();
    gg::cluster_sync();
    if (warp == 1) {
        gg::tcgen05_fence_after_thread_sync();
        gg::tmem_dealloc_pair(tmem_base, TMEM_COLS);
    }
}

}  // namespace

extern "C" int k3_tcgen05_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k < BLOCK_K || s->k % BLOCK_K != 0) {
        snprintf(why, len, "k3_tcgen05 needs k %% %d == 0 and k >= %d (k = %d)", BLOCK_K, BLOCK_K,
                 s->k);
        return 0;
    }
    if (s->n < 8 || s->n % 8 != 0) {
        snprintf(why, len, "k3_tcgen05 needs n %% 8 == 0 and n >= 8 (n = %d)", s->n);
        return 0;
    }
    if (s->experts < 1 || s->experts > MAX_EXPERTS) {
        snprintf(why, len, "k3_tcgen05 handles 1..%d experts (experts = %d)", MAX_EXPERTS,
                 s->experts);
        return 0;
    }
    if (s->tokens < 0) {
        snprintf(why, len, "k3_tcgen05 needs tokens >= 0 (tokens = %d)", s->tokens);
        return 0;
    }
    return 1;
}

extern "C" cudaError_t k3_tcgen05_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_tcgen05_kernel;
    info->threads = THREADS;
    info->dynamic_smem = SMEM_BYTES;
    info->cluster = CLUSTER;
    info->block_m = PAIR_M;  // a pair tile: 128 rows per CTA
    info->block_n = BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = STAGES;
    info->host_tiles = 0;
    return cudaSuccess;
}

extern "C" cudaError_t k3_tcgen05_launch(const GgLaunch *p) {
    // The library has sm_100a and sm_103a code, each for its compute capability only (10.0,
    // 10.3): refuse anything else, launch nothing.
    int dev = 0, major = 0, minor = 0;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major != 10 || (minor != 0 && minor != 3)) return cudaErrorNoKernelImageForDevice;
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_tcgen05")) return cudaErrorInvalidValue;

    // A [tokens x k]: boxes of 64 k x 128 rows. B [experts x k x n]: boxes of 64 n x 64 k.
    static_assert(BLOCK_K == 64 && PANEL_N == 64, "gg_tmap_a/b build 64-wide boxes");
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, BLOCK_M) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;

    // Persistent grid: one pair per pair of SMs that is resident at once, no more than tiles.
    CUDA_TRY(gg_launch_smem_opt_in((const void *)k3_tcgen05_kernel, SMEM_BYTES));
    cudaLaunchConfig_t cfg = {};  // the cluster shape comes from __cluster_dims__
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = SMEM_BYTES;
    int ctas;
    CUDA_TRY(gg_launch_persistent_ctas(p, (const void *)k3_tcgen05_kernel, &cfg, CLUSTER, PAIR_M,
                                       BLOCK_N, &ctas));
    k3_tcgen05_kernel<<<ctas, THREADS, SMEM_BYTES, p->stream>>>(
        tmap_a, tmap_b, p->c, p->row_offsets, p->experts, p->tokens, p->k, p->n);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
