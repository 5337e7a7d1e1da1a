// k3_wgmma — stage 3 on Hopper: asynchronous warpgroup MMA from shared-memory descriptors,
// warp-specialized, persistent, adaptive BM, scheduled on the device (sm_90a).
//
// What changed since k2: the math moves from ldmatrix + mma.sync (per warp, operands through
// registers) to wgmma.mma_async (per warpgroup of 4 warps, A and B read by the tensor cores
// straight from the 128B-swizzled TMA boxes through 64-bit descriptors, common/gg_desc_sm90.h).
// The block is three warpgroups: a producer and two consumers that share one BLOCK_M = 128
// tile, 64 rows each. setmaxnreg moves registers from the producer to the consumers. The
// grid is persistent (one CTA per SM) and walks a tile list that every CTA derives from the
// device-side row offsets (common/gg_schedule.cuh): no host tile list, no host sync, so the
// launch can sit in a CUDA graph and be replayed with new m_e. An expert's remainder of
// 1..64 rows gets a 64-row tile (common/gg_adaptive.h) computed by consumer 0 alone.
//
// Block tile   128 (or 64) x BLOCK_N x BLOCK_K = 64; BLOCK_N = 192 for the main config
//              (N = 2688 = 14 x 192, no ragged column block), 128 or 256 for the shape
//              ablations. Consumer c computes rows 64c..64c+63 with BLOCK_K / 16 = 4
//              wgmma.m64nBLOCK_Nk16 per stage; its accumulator is BLOCK_N / 2 f32 per thread.
// Threads      384 = warpgroup 0 producer (thread 0 issues every TMA; setmaxnreg.dec 40) +
//              warpgroups 1, 2 consumers (setmaxnreg.inc 232): 128 x 40 + 256 x 232 = 64,512
//              of the 65,536 registers. __launch_bounds__(384, 1) lets setmaxnreg take effect.
// Shared mem   dynamic: 1 KiB alignment slack + STAGES x (A 128 x 64 + B 64 x BLOCK_N, bf16)
//              + 16 KiB epilogue staging (2 KiB per consumer warp). BLOCK_N 192: 5 stages of
//              40 KiB, 222,208 B; 128: 6 x 32 KiB, 214,016 B; 256: 4 x 48 KiB, 214,016 B.
//              Static: 2 STAGES mbarriers + the schedule (~2.1 KiB).
// Pipeline     full[s] (count 1: the producer's arrive.expect_tx, completed by TMA bytes),
//              empty[s] (count 8: lane 0 of every consumer warp). The ring position
//              (stage, phase) runs on across tiles in all three roles: consumers wait full
//              with `phase`, the producer waits empty with `phase ^ 1` (the first pass
//              finds every stage free). Each consumer keeps one wgmma group in flight:
//              after committing stage s it waits for the group of the previous stage and
//              releases that one. A consumer with no rows in a 64-row tile still waits full
//              and arrives empty for every stage, so the counts never depend on the tile.
// Epilogue     per consumer warp, 16 rows x 64 columns at a time: stmatrix into a swizzled
//              2 KiB buffer, then 16-byte row-masked global stores. A TMA store of the box
//              would write rows past the expert's end (the next expert's output).
// Preconditions  k % 64 == 0, k >= 64; n % 8 == 0; experts <= 256; A, B, C 16-byte aligned.
// Run it       build/bin/ggemm run --kernel k3_wgmma
//              (ablations: k3_wgmma_tile, k3_wgmma_persist, k3_wgmma_n128, k3_wgmma_n256)
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>

#include "gg_check.h"
#include "gg_desc_sm90.h"
#include "gg_kernel.h"
#include "gg_schedule.cuh"
#include "gg_swizzle.h"
#include "gg_tma.h"
#include "k3_wgmma.h"
#include "ptx/ptx_ampere.cuh"
#include "ptx/ptx_tma.cuh"
#include "ptx/ptx_wgmma.cuh"

namespace {

constexpr int BLOCK_M = 128, BLOCK_K = 64, WG_ROWS = 64;
constexpr int THREADS = 384, WG_THREADS = 128, CONSUMER_WARPS = 8;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int MAX_EXPERTS = 256;
constexpr int PANEL_N = 64;                               // B columns per TMA box: a 128 B row
constexpr int ROW_BYTES = BLOCK_K * 2;                    // one A row / one B k-row of a stage
constexpr int HALF_A_BYTES = WG_ROWS * ROW_BYTES;         // one A box: 64 rows
constexpr int A_BYTES = BLOCK_M * ROW_BYTES;
constexpr int PANEL_BYTES = BLOCK_K * PANEL_N * 2;        // one B box: 64 k x 64 columns
constexpr int STAGING_ROWS = 16;                          // a warp's rows of the accumulator
constexpr int STAGING_WARP_BYTES = STAGING_ROWS * GG_SWIZZLE128_ROW_BYTES;
constexpr int SWIZZLE_ALIGN = 1024;
constexpr int SMEM_TARGET = 220 * 1024;                   // ring + staging + slack
static_assert(ROW_BYTES == GG_SWIZZLE128_ROW_BYTES && PANEL_N * 2 == GG_SWIZZLE128_ROW_BYTES,
              "a stage row must be one 128-byte swizzle row");
static_assert(HALF_A_BYTES % SWIZZLE_ALIGN == 0 && PANEL_BYTES % SWIZZLE_ALIGN == 0,
              "every TMA box and wgmma operand must start on a 1024-byte swizzle atom");
static_assert(CONSUMER_REGS * 2 * WG_THREADS + PRODUCER_REGS * WG_THREADS <= 65536,
              "setmaxnreg budget exceeds the register file");

template <int BLOCK_N>
struct Ring {
    static_assert(BLOCK_N % PANEL_N == 0, "a B stage is whole 64-column panels");
    static constexpr int PANELS = BLOCK_N / PANEL_N;
    static constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int STAGING_BYTES = CONSUMER_WARPS * STAGING_WARP_BYTES;
    static constexpr int STAGES = (SMEM_TARGET - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
    static constexpr int STAGING_OFFSET = STAGES * STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + STAGING_BYTES;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(STAGE_BYTES % SWIZZLE_ALIGN == 0, "stages must keep the 1024-byte alignment");
};

// The tile a CTA works on: from the device schedule, or (k3_wgmma_tile) from the host list.
template <bool PERSISTENT>
__device__ __forceinline__ gg::SchedTile tile_at(const gg::TileSchedule<MAX_EXPERTS> &sched,
                                                 const GgTile *tiles, int t) {
    if constexpr (PERSISTENT) {
        return sched.at(t);
    } else {
        const GgTile g = tiles[t];
        return gg::SchedTile{g.expert, g.row0, g.rows, BLOCK_M, g.col0};
    }
}

// One consumer warp's 16 rows of the accumulator to C. Fragment: register i holds row
// 8 ((i >> 1) & 1) + lane / 4 and column 8 (i >> 2) + 2 (lane % 4) + (i & 1), so the 8x8
// block (column group j, row half h) is registers 4j + 2h + {0, 1}: one stmatrix matrix.
template <int BLOCK_N>
__device__ __forceinline__ void store_warp_rows(const float (&acc)[BLOCK_N / 2], uint8_t *staging,
                                                uint16_t *__restrict__ C, int n,
                                                const gg::SchedTile &tile, int warp_row, int lane) {
    const int valid_rows = tile.rows - warp_row;  // rows past the expert's end are not ours
    if (valid_rows <= 0) return;                  // warp-uniform
#pragma unroll
    for (int panel = 0; panel < BLOCK_N / PANEL_N; ++panel) {
        const int col0 = tile.col0 + panel * PANEL_N;
        if (col0 >= n) break;  // warp-uniform: the rest of the tile is past n
        __syncwarp();          // the previous panel's reads of the buffer are done
        // stmatrix.x4 #p stores column groups j = 8 panel + 2p and j + 1, both row halves;
        // lane 8q + i addresses row i of matrix q = (group j + q / 2, half q % 2).
        const int q = lane >> 3;
        const int st_row = (lane & 7) + 8 * (q & 1);
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            const int j = 8 * panel + 2 * p;
            gg::stmatrix_x4(staging + gg_swizzle128(st_row, 2 * p + (q >> 1)),
                            gg::pack_bf16x2(acc[4 * j + 0], acc[4 * j + 1]),
                            gg::pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]),
                            gg::pack_bf16x2(acc[4 * j + 4], acc[4 * j + 5]),
                            gg::pack_bf16x2(acc[4 * j + 6], acc[4 * j + 7]));
        }
        __syncwarp();
        // Read back 16-byte chunks: lane covers (row idx / 8, chunk idx % 8), 4 rows per pass.
        // n % 8 == 0, so a chunk of 8 columns is wholly inside or wholly past n.
#pragma unroll
        for (int pass = 0; pass < STAGING_ROWS * 8 / 32; ++pass) {
            const int idx = pass * 32 + lane, row = idx >> 3, chunk = idx & 7;
            const uint4 v = *reinterpret_cast<const uint4 *>(staging + gg_swizzle128(row, chunk));
            const int col = col0 + chunk * 8;
            if (row < valid_rows && col < n)
                *reinterpret_cast<uint4 *>(C + (size_t)(tile.row0 + warp_row + row) * n + col) = v;
        }
    }
}

template <int BLOCK_N, bool PERSISTENT, bool ADAPTIVE>
__global__ void __launch_bounds__(THREADS, 1)
k3_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          uint16_t *__restrict__ C, const int *__restrict__ row_offsets,
          const GgTile *__restrict__ tiles, int num_host_tiles, int tokens, int experts, int k, int n) {
    using R = Ring<BLOCK_N>;
    constexpr int STAGES = R::STAGES;
    static_assert(PERSISTENT || !ADAPTIVE, "the host tile list is fixed BM = 128");

    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    // TMA and wgmma swizzle on absolute shared addresses: start the ring on a 1024 B boundary.
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], CONSUMER_WARPS);
        }
        gg::fence_mbarrier_init();  // the TMA unit (async proxy) completes on these barriers
    }
    if constexpr (PERSISTENT) sched.build(row_offsets, experts, tokens, n, BLOCK_N, ADAPTIVE);
    __syncthreads();  // last block barrier: barriers initialised, schedule built
    const int num_tiles = PERSISTENT ? sched.total() : num_host_tiles;
    const int k_blocks = k / BLOCK_K;
    const int wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer: one thread issues every TMA load ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x != 0) return;
        int stage = 0;
        uint32_t phase = 0;
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = tile_at<PERSISTENT>(sched, tiles, t);
            // A boxes wholly past `tokens` and B panels wholly past n are not loaded: their
            // stale shared memory only feeds rows / columns that are never stored (row i of
            // C reads only row i of A, column j only column j of B). Boxes that hang over the
            // edge are zero-filled by TMA and count in full.
            const int a_boxes = tile.height / WG_ROWS;
            int a_loads = 0, b_loads = 0;
            for (int h = 0; h < a_boxes; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
            for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
            const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
            for (int kb = 0; kb < k_blocks; ++kb) {
                gg::mbarrier_wait_parity(&empty[stage], phase ^ 1);
                uint8_t *a_box = smem + stage * R::STAGE_BYTES;
                uint8_t *b_box = a_box + A_BYTES;
                gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                // Rows from row0 up to the box height, whatever tile.rows is: rows of the
                // next expert, or zeros past `tokens`. Computed, never stored (epilogue).
                for (int h = 0; h < a_loads; ++h)
                    gg::tma_load_2d(a_box + h * HALF_A_BYTES, &tmap_a, kb * BLOCK_K,
                                    tile.row0 + h * WG_ROWS, &full[stage]);
                for (int p = 0; p < b_loads; ++p)
                    gg::tma_load_3d(b_box + p * PANEL_BYTES, &tmap_b, tile.col0 + p * PANEL_N,
                                    kb * BLOCK_K, tile.expert, &full[stage]);
                if (++stage == STAGES) stage = 0, phase ^= 1;
            }
        }
        return;  // no block barrier follows, so the producer warpgroup may leave early
    }

    // ---------------- consumers: warpgroup c computes rows 64c .. 64c + 63 ----------------
    gg::setmaxnreg_inc<CONSUMER_REGS>();
    const int c = wg - 1;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    uint8_t *staging = smem + R::STAGING_OFFSET + (c * 4 + warp) * STAGING_WARP_BYTES;
    const uint32_t ring = gg::smem_u32(smem);
    float acc[BLOCK_N / 2];
    int stage = 0;
    uint32_t phase = 0;
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
        const gg::SchedTile tile = tile_at<PERSISTENT>(sched, tiles, t);
        const bool active = c == 0 || tile.height == BLOCK_M;  // a 64-row tile is consumer 0's
        if (!active) {
            // No rows for this consumer (a 64-row tile): follow the ring without reading it.
            for (int kb = 0; kb < k_blocks; ++kb) {
                gg::mbarrier_wait_parity(&full[stage], phase);
                if (lane == 0) gg::mbarrier_arrive(&empty[stage]);
                if (++stage == STAGES) stage = 0, phase ^= 1;
            }
            continue;
        }
        int prev_stage = 0;
        for (int kb = 0; kb < k_blocks; ++kb) {
            gg::mbarrier_wait_parity(&full[stage], phase);
            const uint32_t a_addr = ring + stage * R::STAGE_BYTES + c * HALF_A_BYTES;
            const uint32_t b_addr = ring + stage * R::STAGE_BYTES + A_BYTES;
            const uint64_t desc_a = gg_wgmma_desc_a_kmajor_sw128(a_addr);
            const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(b_addr, PANEL_BYTES);
            gg::wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BLOCK_K / 16; ++kk)
                gg::wgmma_m64k16_bf16<BLOCK_N, 0, 1>(
                    acc, gg_wgmma_desc_advance(desc_a, kk * GG_WGMMA_KMAJOR_K16_BYTES),
                    gg_wgmma_desc_advance(desc_b, kk * GG_WGMMA_MNMAJOR_K16_BYTES),
                    (kb > 0 || kk > 0) ? 1 : 0);  // the tile's first k16 overwrites acc
            gg::wgmma_commit_group();
            gg::wgmma_wait_group<1>();  // the previous stage's group has read its operands
            if (kb > 0 && lane == 0) gg::mbarrier_arrive(&empty[prev_stage]);
            prev_stage = stage;
            if (++stage == STAGES) stage = 0, phase ^= 1;
        }
        gg::wgmma_wait_group<0>();
        if (lane == 0) gg::mbarrier_arrive(&empty[prev_stage]);
#pragma unroll
        for (int i = 0; i < BLOCK_N / 2; ++i) gg::wgmma_fence_operand(acc[i]);
        const int warp_row = c * WG_ROWS + warp * STAGING_ROWS;  // this warp's 16 rows
        store_warp_rows<BLOCK_N>(acc, staging, C, n, tile, warp_row, lane);
    }
}

template <int BLOCK_N, bool PERSISTENT, bool ADAPTIVE>
cudaError_t k3_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_kernel<BLOCK_N, PERSISTENT, ADAPTIVE>;
    info->threads = THREADS;
    info->dynamic_smem = Ring<BLOCK_N>::SMEM_BYTES;
    info->cluster = 1;
    return cudaSuccess;
}

template <int BLOCK_N, bool PERSISTENT, bool ADAPTIVE>
cudaError_t k3_launch(const GgLaunch *p) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!PERSISTENT && p->num_tiles <= 0) return cudaSuccess;
    if (((uintptr_t)p->a | (uintptr_t)p->b | (uintptr_t)p->c) % 16 != 0) {
        fprintf(stderr, "k3_wgmma: A, B and C must be 16-byte aligned (TMA, 16-byte stores)\n");
        return cudaErrorInvalidValue;
    }
    // A [tokens x k]: innermost k; one box = 64 rows x one 64-wide k slice.
    const uint64_t a_dims[2] = {(uint64_t)p->k, (uint64_t)p->tokens};
    const uint64_t a_strides[1] = {(uint64_t)p->k * 2};
    const uint32_t a_box[2] = {BLOCK_K, WG_ROWS};
    // B [experts x k x n]: innermost n; one box = 64 k rows x 64 columns of one expert.
    const uint64_t b_dims[3] = {(uint64_t)p->n, (uint64_t)p->k, (uint64_t)p->experts};
    const uint64_t b_strides[2] = {(uint64_t)p->n * 2, (uint64_t)p->k * p->n * 2};
    const uint32_t b_box[3] = {PANEL_N, BLOCK_K, 1};
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_bf16(&tmap_a, p->a, 2, a_dims, a_strides, a_box, CU_TENSOR_MAP_SWIZZLE_128B) ||
        gg_tmap_bf16(&tmap_b, p->b, 3, b_dims, b_strides, b_box, CU_TENSOR_MAP_SWIZZLE_128B))
        return cudaErrorInvalidValue;

    auto kernel = k3_kernel<BLOCK_N, PERSISTENT, ADAPTIVE>;
    const size_t smem = Ring<BLOCK_N>::SMEM_BYTES;
    CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int grid = p->num_tiles;
    if (PERSISTENT) {
        // The tile count is only known on the device; bound it from host-known sizes:
        // sum_e ceil(m_e / 128) <= min(tokens, tokens / 128 + experts) row tiles.
        int sms = p->num_sms;
        if (sms <= 0) {
            int dev;
            CUDA_TRY(cudaGetDevice(&dev));
            CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        }
        long row_tiles = (long)p->tokens / BLOCK_M + p->experts;
        if (row_tiles > p->tokens) row_tiles = p->tokens;  // every tile has at least one row
        const long bound = row_tiles * ((p->n + BLOCK_N - 1) / BLOCK_N);
        grid = (int)(bound < sms ? bound : sms);
    }
    kernel<<<grid, THREADS, smem, p->stream>>>(tmap_a, tmap_b, p->c, p->row_offsets, p->tiles,
                                               p->num_tiles, p->tokens, p->experts, p->k, p->n);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

}  // namespace

extern "C" int k3_wgmma_can_implement(const GgShape *s, char *why, size_t len) {
    if (s->k < BLOCK_K || s->k % BLOCK_K != 0) {
        snprintf(why, len, "k3_wgmma needs k %% %d == 0 and k >= %d (k = %d)", BLOCK_K, BLOCK_K, s->k);
        return 0;
    }
    if (s->n <= 0 || s->n % 8 != 0) {
        snprintf(why, len, "k3_wgmma needs n %% 8 == 0 and n > 0 (n = %d)", s->n);
        return 0;
    }
    if (s->experts > MAX_EXPERTS) {
        snprintf(why, len, "k3_wgmma schedules at most %d experts on the device (experts = %d)",
                 MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

// One registered configuration: NAME_info / NAME_launch for one template instance.
#define K3_CONFIG(NAME, BLOCK_N, PERSISTENT, ADAPTIVE)                                        \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                  \
        return k3_info<BLOCK_N, PERSISTENT, ADAPTIVE>(info);                                  \
    }                                                                                         \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                 \
        return k3_launch<BLOCK_N, PERSISTENT, ADAPTIVE>(p);                                   \
    }

K3_CONFIG(k3_wgmma, 192, true, true)            // persistent + adaptive BM: the main config
K3_CONFIG(k3_wgmma_persist, 192, true, false)   // persistent, fixed BM = 128
K3_CONFIG(k3_wgmma_tile, 192, false, false)     // one CTA per host-list tile, BM = 128
K3_CONFIG(k3_wgmma_n128, 128, true, true)       // main config with 128-wide column blocks
K3_CONFIG(k3_wgmma_n256, 256, true, true)       // main config with 256-wide column blocks
