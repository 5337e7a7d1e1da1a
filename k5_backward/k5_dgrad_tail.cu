// k5_backward, dgrad with its last wave split along the reduction (sm_90a): k5_dgrad_tail_m128_n192
// and _n256, beside k5_dgrad.cu's k5_dgrad_coop_m128_n192 and _n256.
//
// What changed since k5_dgrad_coop_m128_*: the end of the launch. A persistent grid of G CTAs
// runs the schedule's T tiles in waves of G. When the last wave holds r = T % G tiles and r is at
// most half the grid, G - r SMs idle for a whole tile at the end; dgrad's tiles are few and long
// where k is small beside n (the Mixtral-like backward: 1088 tiles of 224 k-blocks on 132 SMs,
// 8.2 waves run as 9). Those r tiles are cut into `splits` pieces of consecutive k-blocks
// (common/gg_schedule.h, gg_tail_splits: up to G / r, at most 4, each piece 8 k-blocks or more),
// so the last wave lasts about 1 / splits of a tile. The work list is the full waves' tiles, then
// the pieces, a tile's pieces adjacent (gg_tail_item); CTA b takes items b, b + G, ... as step 2
// takes tiles. A piece's producer loads only its k-blocks (produce_tile's kb0); its consumers
// write their fp32 accumulators to the piece's slot of the workspace and take the tile's ticket
// (an int atomicAdd, one per consumer warpgroup and tile; no float atomics). The last piece to
// arrive adds the tile's partials in piece order, so the bits do not depend on which CTA was
// last, stores the tile as step 2 does and sets the ticket back to 0 for the next launch.
//
// Tile, threads, ring, epilogue: k3 step 2's (step2_persistent.cu) with B read K-major
// (k5::TransposedBLoads, k5_dgrad.cu).
// Workspace  num_sms x 2 tickets (ints), then num_sms slots of one tile's fp32 partial
//          (128 x BLOCK_N x 4 bytes: 128 KiB at n256); zeroed once, left zeroed by each launch. Its
//          layout follows the SM count (GgLaunch.num_sms, else the GPU's): launches that share one
//          workspace share that count, as the layer's backward does.
// Preconditions  k5_dgrad's (k5_dgrad.cu); the workspace (GgKernelInfo.workspace_bytes).
// Run it   build/bin/ggemm run --kernel k5_dgrad_tail_m128_n256 --tokens 8192 --experts 8 --k 4096 --n 14336 --skew 0.8
// Next     k5_wgrad.cu, whose long experts' reductions are split the same way, with the same ticket.
#include <stdio.h>

#include "k5_backward/k5_backward.cuh"

namespace k5 {
namespace {

constexpr int TICKET_BARRIER = 1;  // + consumer: named barriers 1, 2 (step 2 uses none)

// The grid is at most the GPU's SMs (p->num_sms where given): a ticket per consumer and tail
// tile (at most half the grid) and a slot per piece (at most the grid), sized for a whole grid.
inline int tail_sms(const GgLaunch *p) {
    GgGpu gpu;
    if (p->num_sms > 0) return p->num_sms;  // no GPU asked: the layer sizes its workspace on the host
    return gg_launch_gpu(p, &gpu) == cudaSuccess ? gpu.sms : 0;
}
inline size_t tail_ticket_bytes(int sms) { return ((size_t)sms * CONSUMERS * sizeof(int) + 255) / 256 * 256; }

template <int BLOCK_N>
size_t tail_workspace_bytes(const GgLaunch *p) {
    const int sms = tail_sms(p);
    return sms > 0 ? tail_ticket_bytes(sms) + (size_t)sms * BLOCK_M * BLOCK_N * sizeof(float) : 0;
}

template <int BLOCK_N, bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
tail_kernel(K3_KERNEL_PARAMS(TRACE), int *__restrict__ tickets, float *__restrict__ partials) {
    using R = Ring<BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    constexpr int ACC = BLOCK_N / 2, TILE_FLOATS = BLOCK_M * BLOCK_N, WG_FLOATS = WG_ROWS * BLOCK_N;
    const uint64_t entry = Trace::now();
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[R::STAGES], empty[R::STAGES];
    __shared__ gg::TileSchedule<MAX_EXPERTS> sched;
    __shared__ int last_piece[CONSUMERS];  // the ticket's answer, per consumer warpgroup
    uint8_t *smem = ring_start(smem_raw);
    init_ring(full, empty, 1, CONSUMER_WARPS);
    sched.build(row_offsets, experts, tokens, n, BLOCK_N, false);  // ends with __syncthreads()
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int num_tiles = sched.total(), k_blocks = k_blocks_of(k), wg = threadIdx.x / WG_THREADS;
    const int splits = gg_tail_splits(num_tiles, gridDim.x, k_blocks);
    const int items = gg_tail_items(num_tiles, gridDim.x, splits);

    if (wg == 0) {
        // ---------------- producer: the CTA's items, each its k-blocks [kb0, kb1) ----------------
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int w = blockIdx.x; w < items; w += gridDim.x) {
                const GgTailItem it = gg_tail_item(num_tiles, gridDim.x, splits, k_blocks, w);
                const gg::SchedTile tile = sched.at(it.tile);
                Trace span;
                produce_tile<BLOCK_N, TransposedBLoads>(pipe, tile, it.kb1, &tmap_a, &tmap_b, smem, full, empty,
                                                        tokens, n, 0, span, it.kb0);
                span.end(trace, GG_TRACE_PRODUCER, it.tile, tile, true);
            }
        }
    } else {
        // ---------------- consumers: rows 64c .. 64c + 63 of every item's tile ----------------
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, tid = threadIdx.x % WG_THREADS, warp = tid / 32, lane = tid % 32;
        const int row = c * WG_ROWS + warp * STAGING_ROWS;  // this warp's 16 rows of a tile
        uint8_t *staging = staging_of<BLOCK_N>(smem, c, warp);
        ConsumerRing<R::STAGES, R::STAGE_BYTES, TransposedBLoads> ring{full, empty, gg::smem_u32(smem), lane == 0};
        float acc[ACC];
        for (int w = blockIdx.x; w < items; w += gridDim.x) {
            const GgTailItem it = gg_tail_item(num_tiles, gridDim.x, splits, k_blocks, w);
            const gg::SchedTile tile = sched.at(it.tile);
            Trace span;
            ring.template mma<BLOCK_N>(acc, c * HALF_A_BYTES, 0, it.kb1 - it.kb0, span);
            if (it.pieces > 1) {
                // Register i of thread tid at i x 128 + tid of this warpgroup's half of the slot:
                // a warp's stores and loads are 128 consecutive bytes.
                float *mine = partials + (size_t)it.slot * TILE_FLOATS + c * WG_FLOATS + tid;
#pragma unroll
                for (int i = 0; i < ACC; ++i) __stcg(mine + i * WG_THREADS, acc[i]);
                const int q = it.slot / it.pieces;  // the tail tile's index
                if (!last_split_of(&tickets[q * CONSUMERS + c], it.pieces, TICKET_BARRIER + c, WG_THREADS, tid == 0,
                                   &last_piece[c])) {
                    if (tid == 0) span.end(trace, GG_TRACE_CONSUMER + c, it.tile, tile, true);
                    continue;  // another piece adds the partials
                }
                // The tile's partials in piece order, eight registers at a time.
                const float *first = partials + (size_t)(it.slot - it.piece) * TILE_FLOATS + c * WG_FLOATS + tid;
#pragma unroll
                for (int i0 = 0; i0 < ACC; i0 += 8) {
#pragma unroll
                    for (int i = 0; i < 8; ++i) acc[i0 + i] = __ldcg(first + (i0 + i) * WG_THREADS);
#pragma unroll 1
                    for (int s = 1; s < it.pieces; ++s)
#pragma unroll
                        for (int i = 0; i < 8; ++i)
                            acc[i0 + i] += __ldcg(first + (size_t)s * TILE_FLOATS + (i0 + i) * WG_THREADS);
                }
            }
            gg::wgmma_store_warp_rows<R::PANELS>(acc, staging, C, n, tile.row0 + row, tile.rows - row, tile.col0,
                                                 lane);
            if (tid == 0) span.end(trace, GG_TRACE_CONSUMER + c, it.tile, tile, true);
        }
    }
}

template <int BLOCK_N, bool TRACE>
cudaError_t launch_tail(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!p->workspace) {
        fprintf(stderr, "k5_dgrad_tail: no workspace (GgKernelInfo.workspace_bytes)\n");
        return cudaErrorInvalidValue;
    }
    const int sms = tail_sms(p);
    if (sms <= 0) return cudaErrorInvalidValue;
    int *tickets = (int *)p->workspace;
    float *partials = (float *)((char *)p->workspace + tail_ticket_bytes(sms));
    return launch_dgrad<TRACE>(p, tail_kernel<BLOCK_N, TRACE>, k3::Shape{BLOCK_N, false, false, false}, trace,
                               tickets, partials);
}

}  // namespace
}  // namespace k5

// One configuration NAME at BLOCK_N columns: its launch, traced twin, info (dgrad, the workspace's
// size) and preconditions (k5_dgrad's).
#define K5_DGRAD_TAIL(NAME, BLOCK_N)                                                            \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                   \
        return k5::launch_tail<BLOCK_N, false>(p, {});                                          \
    }                                                                                           \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {     \
        return k5::launch_tail<BLOCK_N, true>(p, *t);                                           \
    }                                                                                           \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                    \
        k3::info_of(info, (const void *)k5::tail_kernel<BLOCK_N, false>,                        \
                    k3::Shape{BLOCK_N, false, false, false});                                   \
        info->pass = GG_PASS_DGRAD;                                                             \
        info->workspace_bytes = k5::tail_workspace_bytes<BLOCK_N>;                              \
        info->tail_split = 1;                                                                   \
        return cudaSuccess;                                                                     \
    }                                                                                           \
    extern "C" int NAME##_can_implement(const GgShape *s, char *why, size_t len) {              \
        return k5_dgrad_can_implement(s, why, len);                                             \
    }
K5_DGRAD_TAIL(k5_dgrad_tail_m128_n192, 192)
K5_DGRAD_TAIL(k5_dgrad_tail_m128_n256, 256)
