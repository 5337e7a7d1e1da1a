// k4_gemm1_swiglu — the MoE layer's first GEMM with its gather and its activation fused in:
//   H[r, :] = silu(X[src(r)] W1_gate[e]) * (X[src(r)] W1_up[e])   for routed row r of expert e
// (sm_90a). The grid, the device schedule, the ring and the consumer main loop are k3_wgmma's
// (k3_wgmma/k3_wgmma.cuh, step3_adaptive.cu); what changed since k3:
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
#include "k3_wgmma/k3_wgmma.cuh"
#include "k4_moe.h"
#include "k4_moe/k4_device.cuh"

namespace {

using namespace k3;  // the tile constants, the ring and the consumer main loop are k3's

constexpr int BLOCK_N = 2 * K4_PACK_N;                    // packed columns per tile: gate and up
constexpr int H_N = K4_PACK_N;                            // H columns per tile
static_assert(K4_GLU_PANEL == PANEL_N, "gate/up interleave = one 64-column B panel (swiglu below)");
constexpr int CHUNKS = ROW_BYTES / 16;                    // 16-byte chunks of a 128-byte A row
constexpr int ROWS_PER_PASS = WG_THREADS / CHUNKS;        // rows one sweep of the producer covers
using R = Ring<BLOCK_N>;
constexpr int STAGES = R::STAGES, STAGE_BYTES = R::STAGE_BYTES, PANELS = R::PANELS;
constexpr int ACC = BLOCK_N / 2;                          // fp32 accumulators per thread
static_assert(H_N % PANEL_N == 0, "the epilogue stores whole 64-column panels of H");

using Schedule = gg::TileSchedule<K4_MAX_EXPERTS>;

// SwiGLU on an m64nN accumulator of N packed columns: panels alternate gate, up (64 columns
// each, k4_pack_w1), and a 64-column panel is 32 registers (4 per 8 columns, gg_fragments.h),
// so gate register i of pair q pairs with up register i + 32. H panel q lands in registers
// 32q .. 32q + 31: the layout gg::wgmma_store_warp_rows reads. Pair 0 is read before pair 1
// overwrites registers 32..63.
template <int N>
__device__ __forceinline__ void swiglu(float (&acc)[ACC]) {
    constexpr int PANEL_REGS = PANEL_N / 2;
#pragma unroll
    for (int q = 0; q < N / (2 * PANEL_N); ++q)
#pragma unroll
        for (int i = 0; i < PANEL_REGS; ++i)
            acc[PANEL_REGS * q + i] = k4::silu(acc[2 * PANEL_REGS * q + i]) * acc[2 * PANEL_REGS * q + PANEL_REGS + i];
}

__global__ void __launch_bounds__(THREADS, 1)
gemm1_swiglu_kernel(const __grid_constant__ CUtensorMap tmap_w1, const uint16_t *__restrict__ x,
                    const int *__restrict__ src_token, const int *__restrict__ row_offsets,
                    uint16_t *__restrict__ h, int rows, int experts, int d, int f, bool adaptive) {
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule sched;
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1 + WG_THREADS, CONSUMER_WARPS);  // full: B's expect_tx + every copier
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
        const int warp = (threadIdx.x / 32) % WARPS_PER_WG, lane = threadIdx.x % 32;
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        // k3's main loop, with the proxy fence: the gathered rows were written by cp.async.
        ConsumerRing<STAGES, STAGE_BYTES, OwnLoads, true> ring{full, empty, gg::smem_u32(smem), lane == 0};
        gg::Trace<false> untraced;
        float acc[ACC];
        for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
            const gg::SchedTile tile = sched.at(t);
            int row = tile.row0 + warp * STAGING_ROWS, col = tile.col0 / 2;
            if (tile.height == BLOCK_M) {
                // Consumer c: rows 64c .. 64c + 63, all 256 packed columns = 128 H columns.
                ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, k_blocks, untraced);
                row += c * WG_ROWS;
                swiglu<BLOCK_N>(acc);
                gg::wgmma_store_warp_rows<H_N / PANEL_N>(acc, staging, h, f, row, tile.row0 + tile.rows - row, col, lane);
            } else {
                // 64-row tile: consumer c takes gate/up panel pair c (128 packed columns = 64 H
                // columns), so both consumers work, each on its own pair.
                ring.template mma<BLOCK_N / 2>(acc, 0, c * 2 * PANEL_BYTES, k_blocks, untraced);
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
    const bool adaptive = k3_wgmma_adaptive_rows(&shape, &gpu, BLOCK_N);  // k3's cost model: do 64-row remainder tiles pay here
    const void *kernel = (const void *)gemm1_swiglu_kernel;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, R::SMEM_BYTES));
    const cudaLaunchConfig_t cfg = {};  // one CTA per cluster: no occupancy query needed
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(&g, kernel, &cfg, 1, BLOCK_M, BLOCK_N, &grid));
    gemm1_swiglu_kernel<<<grid, THREADS, R::SMEM_BYTES, st>>>(tmap_w1, x, src_token, row_offsets, h, rows,
                                                           experts, d, f, adaptive);
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
