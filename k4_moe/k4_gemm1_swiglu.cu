// k4_gemm1_swiglu — the MoE layer's first GEMM with its gather and its activation fused in:
//   H[r, :] = silu(X[src(r)] W1_gate[e]) * (X[src(r)] W1_up[e])   for routed row r of expert e
// (sm_90a). The grid, the device schedule, the ring and the consumers are k3_wgmma's
// (k3_wgmma/k3_wgmma.cu); what changed since k3:
//
// 1. A is gathered. Routed row r reads token src_token[r] of X: no gathered copy of X exists.
//    Tiled TMA copies boxes of consecutive rows and cannot gather, so the whole producer
//    warpgroup (128 threads) issues 16-byte cp.async copies, each into the chunk position the
//    128B swizzle gives it (gg_swizzle128: the layout TMA would have written, which the wgmma
//    descriptors expect). Thread t copies chunk t % 8 of rows t / 8 + 16 i: a warp covers four
//    whole 128-byte row segments per instruction. B (W1) still comes by TMA from thread 0.
// 2. One barrier for both. full[s] expects 1 + 128 arrivals: thread 0's arrive.expect_tx for the
//    B bytes, and one cp.async.mbarrier.arrive.noinc per producer thread, which fires when that
//    thread's copies have landed. cp.async writes through the generic proxy and wgmma reads
//    through the async proxy, so each consumer fences (fence.proxy.async) after its wait.
// 3. SwiGLU in the epilogue. W1 is packed once (k4_pack_w1): in every 256-column block the
//    64-column panels alternate gate, up, gate, up, so each gate column has its up column one
//    panel (32 accumulator registers of the same thread) to its right: h = silu(gate) * up is
//    computed in registers and only the 128 H columns of the block are stored.
//
// Block tile   128 (or 64) rows x 256 packed columns (128 H columns) x 64 k.
//              128-row tile: consumer c computes rows 64c .. 64c + 63 (wgmma.m64n256k16).
//              64-row tile (an expert's remainder of 1..64 rows, when the schedule is adaptive):
//              split by columns like k3's, at a gate/up pair: consumer c computes all 64 rows of
//              pair c (wgmma.m64n128k16), 64 H columns each.
// Threads      384 = producer warpgroup (setmaxnreg.dec 40) + 2 consumer warpgroups (232).
// Shared mem   4 stages x (A 128 x 64 + B 64 x 256) = 4 x 48 KiB + 16 KiB staging + 1 KiB slack.
// Preconditions  d % 64 == 0; F % 128 == 0; experts <= 256; X, W1, H 16-byte aligned.
// Run it       build/bin/ggemm moe --model qwen3 --tokens 4096 --fused
#include <cuda.h>
#include <stdint.h>

#include "gg_check.h"
#include "gg_desc_sm90.h"
#include "gg_kernel.h"
#include "gg_launch.h"
#include "gg_pipeline.h"
#include "gg_schedule.cuh"
#include "gg_swizzle.h"
#include "gg_tma.h"
#include "gg_wgmma_store.cuh"
#include "k3_wgmma/k3_wgmma.h"
#include "k4_moe.h"
#include "ptx/ptx_ampere.cuh"
#include "ptx/ptx_tma.cuh"
#include "ptx/ptx_wgmma.cuh"

namespace {

constexpr int BLOCK_M = 128, BLOCK_N = 2 * K4_PACK_N, BLOCK_K = 64, WG_ROWS = 64;
constexpr int H_N = K4_PACK_N;                            // H columns per tile
static_assert(K4_GLU_PANEL == 64, "gate/up interleave = one 64-column B panel (swiglu below)");
constexpr int THREADS = 384, WG_THREADS = 128, CONSUMER_WARPS = 8;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int PANEL_N = 64, PANELS = BLOCK_N / PANEL_N;
constexpr int ROW_BYTES = BLOCK_K * 2, CHUNKS = ROW_BYTES / 16;
constexpr int ROWS_PER_PASS = WG_THREADS / CHUNKS;        // rows one sweep of the producer covers
constexpr int A_BYTES = BLOCK_M * ROW_BYTES;
constexpr int PANEL_BYTES = BLOCK_K * PANEL_N * 2;
constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
constexpr int STAGING_BYTES = CONSUMER_WARPS * gg::WGMMA_STORE_STAGING_BYTES;
constexpr int SWIZZLE_ALIGN = 1024;
constexpr int STAGES = (220 * 1024 - SWIZZLE_ALIGN - STAGING_BYTES) / STAGE_BYTES;
constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGES * STAGE_BYTES + STAGING_BYTES;
constexpr int ACC = BLOCK_N / 2;                          // fp32 accumulators per thread
static_assert(ROW_BYTES == GG_SWIZZLE128_ROW_BYTES, "a stage row is one 128-byte swizzle row");
static_assert(H_N % PANEL_N == 0, "the epilogue stores whole 64-column panels of H");
static_assert(STAGES >= 3 && STAGE_BYTES % SWIZZLE_ALIGN == 0, "ring shape");
static_assert(CONSUMER_REGS * 2 * WG_THREADS + PRODUCER_REGS * WG_THREADS <= 65536, "registers");

using Schedule = gg::TileSchedule<K4_MAX_EXPERTS>;

__device__ __forceinline__ float silu(float g) { return g / (1.0f + __expf(-g)); }

// SwiGLU on an m64nN accumulator of N packed columns: panels alternate gate, up (64 columns
// each, k4_pack_w1), and a 64-column panel is 32 registers (4 per 8 columns, gg_fragments.h),
// so gate register i of pair q pairs with up register i + 32. H panel q lands in registers
// 32q .. 32q + 31: the layout gg::wgmma_store_warp_rows reads. Pair 0 is read before pair 1
// overwrites registers 32..63.
template <int N>
__device__ __forceinline__ void swiglu(float (&acc)[ACC]) {
#pragma unroll
    for (int q = 0; q < N / (2 * PANEL_N); ++q)
#pragma unroll
        for (int i = 0; i < PANEL_N / 2; ++i) acc[32 * q + i] = silu(acc[64 * q + i]) * acc[64 * q + 32 + i];
}

// A consumer warpgroup's walk over the ring (k3's ConsumerRing, without the pairs).
struct Consumer {
    uint64_t *full, *empty;
    uint32_t base;  // shared address of stage 0
    bool leader;    // lane 0: arrives for its warp
    GgPipe pipe = {0, 0};
    // One tile: N packed columns from B offset b_off, A from a_off, into acc[0 .. N/2 - 1].
    template <int N>
    __device__ __forceinline__ void mma(float (&acc)[ACC], uint32_t a_off, uint32_t b_off, int k_blocks) {
        int prev_stage = 0;
        for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
            gg::mbarrier_wait_parity(&full[pipe.stage], gg_pipe_full_parity(pipe));
            gg::fence_proxy_async_smem();  // the gathered rows were written by cp.async
            const uint32_t stage = base + pipe.stage * STAGE_BYTES;
            const uint64_t desc_a = gg_wgmma_desc_a_kmajor_sw128(stage + a_off);
            const uint64_t desc_b = gg_wgmma_desc_b_mnmajor_sw128(stage + A_BYTES + b_off, PANEL_BYTES);
            gg::wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BLOCK_K / 16; ++kk)
                gg::wgmma_m64k16_bf16<N, 0, 1>(acc, gg_wgmma_desc_advance(desc_a, kk * GG_WGMMA_KMAJOR_K16_BYTES),
                                               gg_wgmma_desc_advance(desc_b, kk * GG_WGMMA_MNMAJOR_K16_BYTES),
                                               (kb > 0 || kk > 0) ? 1 : 0);
            gg::wgmma_commit_group();
            gg::wgmma_wait_group<1>();  // the previous stage's MMAs have read their operands
            if (kb > 0 && leader) gg::mbarrier_arrive(&empty[prev_stage]);
            prev_stage = pipe.stage;
        }
        gg::wgmma_wait_group<0>();
        if (leader) gg::mbarrier_arrive(&empty[prev_stage]);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) gg::wgmma_fence_operand(acc[i]);
    }
};

__global__ void __launch_bounds__(THREADS, 1)
gemm1_swiglu_kernel(const __grid_constant__ CUtensorMap tmap_w1, const uint16_t *__restrict__ x,
                    const int *__restrict__ src_token, const int *__restrict__ row_offsets,
                    uint16_t *__restrict__ h, int rows, int experts, int d, int f, bool adaptive) {
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule sched;
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1 + WG_THREADS);  // B's expect_tx + every copier
            gg::mbarrier_init(&empty[s], CONSUMER_WARPS);
        }
        gg::fence_mbarrier_init();
    }
    // Packed W1 has 2F columns; the schedule walks them in 256-wide blocks.
    sched.build(row_offsets, experts, rows, 2 * f, BLOCK_N, adaptive);  // ends with __syncthreads
    const int num_tiles = sched.total(), k_blocks = d / BLOCK_K;
    const int wg = threadIdx.x / WG_THREADS;

    if (wg == 0) {
        // ---------------- producer warpgroup: gather A by cp.async, B by TMA ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        const int chunk = threadIdx.x % CHUNKS, row_in_pass = threadIdx.x / CHUNKS;
        GgPipe pipe = {0, 0};
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            const int passes = tile.height / ROWS_PER_PASS;
            // This thread's source rows for the whole tile (-1: past the expert's rows, never
            // stored, so not loaded: the stale shared memory there feeds only unstored rows).
            int src[BLOCK_M / ROWS_PER_PASS];
#pragma unroll
            for (int i = 0; i < BLOCK_M / ROWS_PER_PASS; ++i) {
                const int r = row_in_pass + i * ROWS_PER_PASS;
                src[i] = (i < passes && r < tile.rows) ? __ldg(src_token + tile.row0 + r) : -1;
            }
            for (int kb = 0; kb < k_blocks; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                gg::mbarrier_wait_parity(&empty[pipe.stage], gg_pipe_empty_parity(pipe));
                uint8_t *a_tile = smem + pipe.stage * STAGE_BYTES;
                if (threadIdx.x == 0) {
                    gg::mbarrier_arrive_expect_tx(&full[pipe.stage], PANELS * PANEL_BYTES);
                    for (int p = 0; p < PANELS; ++p)
                        gg::tma_load_3d(a_tile + A_BYTES + p * PANEL_BYTES, &tmap_w1,
                                        tile.col0 + p * PANEL_N, kb * BLOCK_K, tile.expert,
                                        &full[pipe.stage]);
                }
#pragma unroll
                for (int i = 0; i < BLOCK_M / ROWS_PER_PASS; ++i)
                    if (src[i] >= 0)
                        gg::cp_async_16(a_tile + gg_swizzle128(row_in_pass + i * ROWS_PER_PASS, chunk),
                                        x + (size_t)src[i] * d + kb * BLOCK_K + chunk * 8, 16);
                gg::cp_async_mbarrier_arrive_noinc(&full[pipe.stage]);
            }
        }
    } else {
        // ---------------- consumers: k3's MMA loop, SwiGLU epilogue ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;
        const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        uint8_t *staging = smem + STAGES * STAGE_BYTES + (c * 4 + warp) * gg::WGMMA_STORE_STAGING_BYTES;
        Consumer ring{full, empty, gg::smem_u32(smem), lane == 0};
        float acc[ACC];
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            int row = tile.row0 + warp * gg::WGMMA_STORE_ROWS, col = tile.col0 / 2;
            if (tile.height == BLOCK_M) {
                // Consumer c: rows 64c .. 64c + 63, all 256 packed columns = 128 H columns.
                ring.mma<BLOCK_N>(acc, c * WG_ROWS * ROW_BYTES, 0, k_blocks);
                row += c * WG_ROWS;
                swiglu<BLOCK_N>(acc);
                gg::wgmma_store_warp_rows<H_N / PANEL_N>(acc, staging, h, f, row, tile.row0 + tile.rows - row, col, lane);
            } else {
                // 64-row tile: consumer c takes gate/up panel pair c (128 packed columns = 64 H
                // columns), so both consumers work, each on its own pair.
                ring.mma<BLOCK_N / 2>(acc, 0, c * 2 * PANEL_BYTES, k_blocks);
                swiglu<BLOCK_N / 2>(acc);
                gg::wgmma_store_warp_rows<1>(acc, staging, h, f, row, tile.row0 + tile.rows - row, col + c * PANEL_N, lane);
            }
        }
    }
}

}  // namespace

extern "C" cudaError_t k4_gemm1_swiglu(const uint16_t *x, const int *src_token, const int *row_offsets,
                                       const uint16_t *w1_packed, uint16_t *h, int rows, int experts,
                                       int d, int f, int num_sms, cudaStream_t st) {
    if (rows <= 0) return cudaSuccess;
    if (d < BLOCK_K || d % BLOCK_K || f < H_N || f % H_N || experts < 1 || experts > K4_MAX_EXPERTS)
        return cudaErrorInvalidValue;
    if (((uintptr_t)x | (uintptr_t)w1_packed | (uintptr_t)h) % 16) return cudaErrorInvalidValue;
    // The GEMM as k3 sees it: routed rows x (W1 packed: a [experts x d x 2F] B operand, in k3's
    // 64 x 64 boxes).
    GgLaunch g = {};
    g.b = w1_packed;
    g.tokens = rows;
    g.experts = experts;
    g.k = d;
    g.n = 2 * f;
    g.num_sms = num_sms;
    CUtensorMap tmap_w1;
    if (gg_tmap_b(&tmap_w1, &g)) return cudaErrorInvalidValue;
    const GgShape shape = {rows, experts, d, 2 * f};
    GgGpu gpu;
    CUDA_TRY(gg_launch_gpu(&g, &gpu));
    const bool adaptive = k3_wgmma_adaptive_rows(&shape, &gpu, BLOCK_N);  // k3's rule for 64-row remainder tiles
    const void *kernel = (const void *)gemm1_swiglu_kernel;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, SMEM_BYTES));
    const cudaLaunchConfig_t cfg = {};  // one CTA per cluster: no occupancy query needed
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(&g, kernel, &cfg, 1, BLOCK_M, BLOCK_N, &grid));
    gemm1_swiglu_kernel<<<grid, THREADS, SMEM_BYTES, st>>>(tmap_w1, x, src_token, row_offsets, h, rows,
                                                           experts, d, f, adaptive);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
