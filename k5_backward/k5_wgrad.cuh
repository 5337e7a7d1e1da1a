// k5_wgrad.cuh — what k5_wgrad (k5_wgrad.cu) and its ping-pong twin (k5_wgrad_pingpong.cu)
// share: the ring, the work list's two tables in shared memory, the producer's loop over the
// items, the zeroing of rows past an expert's end, a split item's partial and the fix-up, the
// launch and the registration. The work list itself is common/gg_wgrad.h.
#pragma once
#include <stdio.h>

#include "gg_wgrad.h"
#include "k5_backward/k5_backward.cuh"

namespace k5 {

constexpr int WGRAD_N = K5_WGRAD_TILE_N, MAX_WGRAD_EXPERTS = K5_WGRAD_MAX_EXPERTS;
static_assert(BLOCK_M == K5_WGRAD_TILE_M, "ggemm tiles draws the list with k5_backward.h's tile");

// The wgrad kernels' tile and ring: TILE_M rows of k x BLOCK_N columns of n per tile. A stage is
// TILE_M / 64 boxes of A^T (64 rows of k x 64 reduction rows each) then BLOCK_N / 64 boxes of
// dC, as many stages as fit beside a staging box per panel for every consumer warp (TMA stores
// in flight). The kernel, its launch, its work list and its registry row all take this one type.
template <int BLOCK_N_, int TILE_M_ = BLOCK_M>
struct WgradRing {
    static constexpr int BLOCK_N = BLOCK_N_, TILE_M = TILE_M_;
    static_assert(TILE_M == 2 * WG_ROWS || TILE_M == 4 * WG_ROWS, "one or two m64 accumulators per consumer");
    static_assert(BLOCK_N % PANEL_N == 0, "whole dC boxes");
    static constexpr int A_PANELS = TILE_M / WG_ROWS, PANELS = BLOCK_N / PANEL_N;
    static constexpr int A_BYTES = A_PANELS * HALF_A_BYTES;  // where the dC boxes start
    static constexpr int STAGE_BYTES = A_BYTES + PANELS * PANEL_BYTES;
    static constexpr int STAGING_WARP = PANELS * STAGING_WARP_BYTES;
    static constexpr int STAGING_OFFSET =
        (SMEM_TARGET - SWIZZLE_ALIGN - CONSUMER_WARPS * STAGING_WARP) / STAGE_BYTES * STAGE_BYTES;
    static constexpr int STAGES = STAGING_OFFSET / STAGE_BYTES;
    static constexpr size_t SMEM_BYTES = SWIZZLE_ALIGN + STAGING_OFFSET + CONSUMER_WARPS * STAGING_WARP;
    static_assert(STAGES >= 3, "too few stages to keep a wgmma group and two loads in flight");
    static_assert(STAGE_BYTES % SWIZZLE_ALIGN == 0, "stages must keep the 1024-byte alignment");
    // Consumer warp `warp` of warpgroup c: its staging boxes.
    __device__ static uint8_t *staging(uint8_t *smem, int c, int warp) {
        return smem + STAGING_OFFSET + (c * WARPS_PER_WG + warp) * STAGING_WARP;
    }
};

// Each expert's first item and first workspace slot (exclusive prefix sums; entry `experts`
// holds the totals), from the device-side row offsets: every thread calls it, it syncs the CTA.
struct WgradTables {
    int item_start[MAX_WGRAD_EXPERTS + 1], slot_start[MAX_WGRAD_EXPERTS + 1];

    __device__ __forceinline__ void build(const int *__restrict__ row_offsets, const GgWgradParams &prm) {
        for (int e = threadIdx.x; e < prm.experts; e += blockDim.x) {
            const int row0 = gg_sched_clamp(row_offsets[e], prm.tokens);
            const int end = gg_sched_clamp(row_offsets[e + 1], prm.tokens);
            item_start[e] = gg_wgrad_items(&prm, end > row0 ? end - row0 : 0);
            slot_start[e] = gg_wgrad_slots(&prm, end > row0 ? end - row0 : 0);
        }
        __syncthreads();
        if (threadIdx.x < 32) {  // warp 0: each lane sums a run of experts, then one shuffle scan
            const int lane = threadIdx.x, per = (prm.experts + 31) / 32, first = lane * per;
            int items = 0, slots = 0;
            for (int e = first; e < first + per && e < prm.experts; ++e) {
                items += item_start[e];
                slots += slot_start[e];
            }
            const int items_in = gg::warp_inclusive_sum(items, lane), slots_in = gg::warp_inclusive_sum(slots, lane);
            int item = items_in - items, slot = slots_in - slots;
            for (int e = first; e < first + per && e < prm.experts; ++e) {
                const int ni = item_start[e], ns = slot_start[e];
                item_start[e] = item;
                slot_start[e] = slot;
                item += ni;
                slot += ns;
            }
            if (lane == 31) {
                item_start[prm.experts] = items_in;
                slot_start[prm.experts] = slots_in;
            }
        }
        __syncthreads();
    }
    __device__ __forceinline__ int items(const GgWgradParams &prm) const { return item_start[prm.experts]; }
    __device__ __forceinline__ GgWgradItem at(const GgWgradParams &prm, const int *row_offsets, int t) const {
        return gg_wgrad_at(&prm, item_start, slot_start, row_offsets, t);
    }
};

// The deal: which items a CTA runs, and in what order. The producer thread draws the CTA's j-th
// item, decodes it and passes it to the consumers through a queue of QUEUE slots in shared
// memory (full: the producer's write; empty: every consumer warp's read), so that no consumer
// makes a lookup of its own between items (TRIALS.md: the item queue). The j-th item is
//   static   item blockIdx.x + j x gridDim.x (the round robin);
//   dynamic  the next item of a counter in the workspace (deal[0]), drawn one item ahead (the
//            draw for item j + 1 issued when item j is drawn). A CTA slowed by long items draws
//            fewer, so the CTAs end within about an item of each other whatever the items cost
//            (k5_backward/TRIALS.md; gg_wgrad_deal models it). Every CTA draws past the list
//            (its last two draws), then counts itself done (deal[1]); the last one sets both
//            back to 0 for the next launch. Which CTA runs an item changes no bit of dB: a
//            split tile's partials are added in split order whoever is last.
enum class Deal { Static, Dynamic };
// An item's index in the list and the item (zeros past the list, where the deal ends).
struct __align__(16) WgradWork {
    int t;
    GgWgradItem it;
};
static_assert(sizeof(WgradWork) % sizeof(int) == 0, "take() hands the item to its warp one 32-bit word at a time");
template <Deal D>
struct WgradDeal {
    static constexpr int QUEUE = 8;  // items drawn ahead: more than the ring's stages, for 1-block items
    WgradWork work[QUEUE];
    __align__(8) uint64_t full[QUEUE], empty[QUEUE];

    // Thread 0, before the CTA's first __syncthreads.
    __device__ __forceinline__ void init() { init_ring(full, empty, 1, CONSUMER_WARPS); }
    static __device__ __forceinline__ GgPipe slot(int j) { return {j % QUEUE, (unsigned)(j / QUEUE) & 1u}; }
    // The index of the CTA's j-th item. The dynamic draw after it is issued at once and read at
    // the next call (`ahead`): a round trip to L2 per item would otherwise stall the loads of
    // every item (TRIALS.md: the first version's loss on short items).
    __device__ __forceinline__ int next(int *deal, int j, int &ahead) const {
        if constexpr (D == Deal::Static) {
            return blockIdx.x + j * gridDim.x;
        } else {
            const int t = j == 0 ? atomicAdd(deal, 1) : ahead;
            ahead = atomicAdd(deal, 1);  // past the list: harmless, the counter goes back to 0
            return t;
        }
    }
    // The producer thread's j-th item, decoded and published to the consumers.
    __device__ __forceinline__ WgradWork draw(int *deal, int j, int &ahead, const WgradTables &tb,
                                              const GgWgradParams &prm, const int *row_offsets) {
        const GgPipe q = slot(j);
        const int t = next(deal, j, ahead);
        WgradWork w = {};
        w.t = t;
        if (t < tb.items(prm)) w.it = tb.at(prm, row_offsets, t);
        gg::mbarrier_wait_parity(&empty[q.stage], gg_pipe_empty_parity(q));
        work[q.stage] = w;
        gg::mbarrier_arrive(&full[q.stage]);  // release: the write above before the consumers' reads
        return w;
    }
    // A consumer warp's j-th item: every lane waits for the slot, lane 0 reads and releases it,
    // the other lanes get the item by shuffles (the thread that releases is the one that read).
    __device__ __forceinline__ WgradWork take(int j, int lane) {
        const GgPipe q = slot(j);
        gg::mbarrier_wait_parity(&full[q.stage], gg_pipe_full_parity(q));
        __syncwarp();  // every lane past this phase before the release lets the producer refill the slot
        WgradWork w = {};
        if (lane == 0) {
            w = work[q.stage];
            gg::mbarrier_arrive(&empty[q.stage]);  // release: the read above before the next draw
        }
        int *word = reinterpret_cast<int *>(&w);
#pragma unroll
        for (int i = 0; i < (int)(sizeof(WgradWork) / sizeof(int)); ++i) word[i] = __shfl_sync(~0u, word[i], 0);
        return w;
    }
    // The producer thread, after drawing past the list.
    __device__ __forceinline__ void finish(int *deal) const {
        if constexpr (D == Deal::Dynamic) {
            __threadfence();  // this CTA's last draw before its count
            if (atomicAdd(deal + 1, 1) == (int)gridDim.x - 1) {
                __threadfence();
                deal[0] = 0;  // every CTA has drawn its last item
                deal[1] = 0;
            }
        }
    }
};

// A wgrad kernel's static shared memory beside its ring's dynamic bytes must fit sm_90's opt-in
// limit per block (227 KiB): the tables, the ring's barriers, the deal's queue, the ticket's answers.
template <class R, Deal D>
__host__ __device__ constexpr bool wgrad_fits() {
    return R::SMEM_BYTES + sizeof(WgradTables) + 2 * R::STAGES * sizeof(uint64_t) + sizeof(WgradDeal<D>) +
               2 * sizeof(int) <=
           227 * 1024;
}

// The producer (thread 0): every item the deal gives this CTA in turn, A rows (read as A^T) and
// dC rows, one 64-row block per stage; boxes wholly past k or n are neither loaded nor counted.
// The ring runs on across items: the next item's first stages load while the consumers finish one.
template <class R, Deal D, bool TRACE>
__device__ __forceinline__ void produce_items(const WgradTables &tb, const GgWgradParams &prm,
                                              const int *row_offsets, const CUtensorMap *tmap_a,
                                              const CUtensorMap *tmap_dc, uint8_t *smem, uint64_t *full,
                                              uint64_t *empty, WgradDeal<D> &deal, int *deal_counters,
                                              const typename gg::Trace<TRACE>::Sink &trace) {
    using Trace = gg::Trace<TRACE>;
    GgPipe pipe = {0, 0};
    int ahead = 0;  // the dynamic deal's next draw, in flight
    for (int j = 0;; ++j) {
        const WgradWork w = deal.draw(deal_counters, j, ahead, tb, prm, row_offsets);
        if (w.t >= tb.items(prm)) break;
        const int t = w.t;
        const GgWgradItem &it = w.it;
        int a_loads = 0, b_loads = 0;
        for (int h = 0; h < R::A_PANELS; ++h) a_loads += (it.m0 + h * WG_ROWS < prm.k);
        for (int p = 0; p < R::PANELS; ++p) b_loads += (it.col0 + p * PANEL_N < prm.n);
        const uint32_t tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
        const int blocks = gg_wgrad_cdiv(it.rows, BLOCK_K);
        Trace span;
        for (int kb = 0; kb < blocks; ++kb, gg_pipe_advance(&pipe, R::STAGES)) {
            gg::mbarrier_wait_parity(&empty[pipe.stage], gg_pipe_empty_parity(pipe));
            uint8_t *a_box = smem + pipe.stage * R::STAGE_BYTES, *b_box = a_box + R::A_BYTES;
            gg::mbarrier_arrive_expect_tx(&full[pipe.stage], tx);
            const int row = it.row0 + kb * BLOCK_K;  // past `tokens`: zeros from TMA
            for (int h = 0; h < a_loads; ++h)
                gg::tma_load_2d(a_box + h * HALF_A_BYTES, tmap_a, it.m0 + h * WG_ROWS, row, &full[pipe.stage]);
            for (int p = 0; p < b_loads; ++p)
                gg::tma_load_2d(b_box + p * PANEL_BYTES, tmap_dc, it.col0 + p * PANEL_N, row, &full[pipe.stage]);
            if (kb == 0) span.mark();
        }
        span.end(trace, GG_TRACE_PRODUCER, t, it.expert, it.row0, it.rows, it.col0, blocks > 0);
    }
    deal.finish(deal_counters);
}

// Rows [valid, 64) of a stage's boxes (ring R) to zero, by the WG_THREADS threads of one
// warpgroup (tid): the A panels h and the dC panels p with h, p = first, first + step, ...
// (k5_wgrad: consumer c takes first c, step 2, half the A and half the dC panels; the ping-pong
// owner all of them: first 0, step 1). The caller fences and meets its barrier before the wgmma.
template <class R>
__device__ __forceinline__ void zero_rows_past(uint8_t *stage, int valid, int first, int step, int tid) {
    const uint4 zero = {0, 0, 0, 0};
    const int chunks = (WG_ROWS - valid) * (GG_SWIZZLE128_ROW_BYTES / 16);  // 16-byte chunks per box
    const int row_bytes = valid * GG_SWIZZLE128_ROW_BYTES;  // a row stays a row under the swizzle
    for (int h = first; h < R::A_PANELS; h += step)
        for (int i = tid; i < chunks; i += WG_THREADS)
            *reinterpret_cast<uint4 *>(stage + h * HALF_A_BYTES + row_bytes + 16 * i) = zero;
    for (int p = first; p < R::PANELS; p += step)
        for (int i = tid; i < chunks; i += WG_THREADS)
            *reinterpret_cast<uint4 *>(stage + R::A_BYTES + p * PANEL_BYTES + row_bytes + 16 * i) = zero;
}

// A split item's fp32 partial, by the THREADS threads that own it (tid among them): register i
// of half h at (h x ACC + i) x THREADS + tid of the item's slot, so that every split of a tile
// lays its partial out alike and the last one reads them all back in the same places.
template <class R, int HALVES, int THREADS, int ACC, int ACC1>
__device__ __forceinline__ void write_partial(float *partials, const GgWgradItem &it, const float (&acc0)[ACC],
                                              const float (&acc1)[ACC1], int tid) {
    float *mine = partials + (size_t)it.slot * (R::TILE_M * R::BLOCK_N);
#pragma unroll
    for (int i = 0; i < ACC; ++i) {
        __stcg(mine + i * THREADS + tid, acc0[i]);
        if constexpr (HALVES == 2) __stcg(mine + (ACC + i) * THREADS + tid, acc1[i]);
    }
}

// The fix-up, by the tile's last split: half h of this warp's 16 rows (from tile row `row`), the
// sum of the tile's partials in split order (the same bits whichever split is last), made eight
// registers at a time (a whole half's sums beside live accumulators spill) and stored as bf16
// through the TMA-store epilogue.
template <class R, int THREADS>
__device__ __forceinline__ void store_fixup(const float *partials, const GgWgradItem &it, const GgWgradParams &prm,
                                            int h, int row, int tid, uint8_t *staging, const CUtensorMap *tmap_db,
                                            int lane) {
    constexpr int ACC = R::BLOCK_N / 2, TILE_FLOATS = R::TILE_M * R::BLOCK_N;
    const float *first = partials + (size_t)(it.slot - it.split) * TILE_FLOATS;
    gg::wgmma_store_warp_rows_tma_fill<R::PANELS>(
        [&](int r, float (&v)[8]) {
            const float *p = first + (h * ACC + r) * THREADS + tid;
#pragma unroll
            for (int i = 0; i < 8; ++i) v[i] = __ldcg(p + i * THREADS);
            for (int s = 1; s < it.splits; ++s)
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] += __ldcg(p + (size_t)s * TILE_FLOATS + i * THREADS);
        },
        staging, tmap_db, prm.n, it.m0 + row, prm.k - it.m0 - row, it.col0, it.expert, lane);
}

// ---- Launch (host) ----
// What either kernel runs: k and n multiples of 8 (TMA's 16-byte rows), 1..1024 experts (the
// shared-memory tables).
inline int wgrad_can_implement(const char *name, const GgShape *s, char *why, size_t len) {
    if (s->k <= 0 || s->k % 8 != 0 || s->n <= 0 || s->n % 8 != 0) {
        snprintf(why, len, "%s needs k and n multiples of 8, > 0 (k = %d, n = %d)", name, s->k, s->n);
        return 0;
    }
    if (s->experts < 1 || s->experts > K5_WGRAD_MAX_EXPERTS) {
        snprintf(why, len, "%s handles 1..%d experts (experts = %d)", name, K5_WGRAD_MAX_EXPERTS, s->experts);
        return 0;
    }
    return 1;
}

// The work list's parameters for a launch on ring R's tile: the chunk depends on the grid
// (gg_wgrad_chunk), so the launch and the workspace size ask the same question.
template <class R>
cudaError_t wgrad_params(const GgLaunch *p, GgWgradParams *prm) {
    GgGpu gpu;
    CUDA_TRY(gg_launch_gpu(p, &gpu));
    *prm = gg_wgrad_params(p->experts, p->tokens, p->k, p->n, R::TILE_M, R::BLOCK_N, gpu.sms, gpu.l2_bytes);
    return cudaSuccess;
}

template <class R>
size_t wgrad_workspace_bytes(const GgLaunch *p) {
    GgWgradParams prm;
    if (p->tokens < 0 || p->experts <= 0 || wgrad_params<R>(p, &prm) != cudaSuccess) return 0;
    return (size_t)gg_wgrad_workspace_bytes(&prm);
}

// A wgrad kernel on ring R (and its traced twin: TRACE, the kernel records into trace,
// common/gg_trace.h) on the launch's shape: the same parameters, ring and grid.
template <bool TRACE>
using WgradKernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, const int *, int *, int *, float *,
                             GgWgradParams, typename gg::Trace<TRACE>::Sink);
template <class R, Deal D, bool TRACE>
cudaError_t launch_wgrad(const GgLaunch *p, WgradKernel<TRACE> kernel, const char *name,
                         const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->experts <= 0) return cudaSuccess;
    if (p->experts > K5_WGRAD_MAX_EXPERTS) return cudaErrorInvalidValue;  // the shared per-expert tables
    if (!gg_launch_aligned16(p, name)) return cudaErrorInvalidValue;
    GgWgradParams prm;
    CUDA_TRY(wgrad_params<R>(p, &prm));
    const long ticket_bytes = gg_wgrad_ticket_bytes(&prm);
    if ((D == Deal::Dynamic || gg_wgrad_max_slots(&prm) > 0) && !p->workspace) {
        fprintf(stderr, "%s: no workspace (GgKernelInfo.workspace_bytes)\n", name);
        return cudaErrorInvalidValue;
    }
    // With no rows at all every item is an empty expert's and A and dC are not read: their maps
    // are not encoded. dB's always is: its boxes are one warp's 16 rows x 64 columns.
    CUtensorMap tmap_a = {}, tmap_dc = {}, tmap_db;
    if (p->tokens > 0 && (gg_tmap_rows(&tmap_a, p->a, p->k, p->tokens, GG_WGRAD_BLOCK_R) ||
                          gg_tmap_rows(&tmap_dc, p->b, p->n, p->tokens, GG_WGRAD_BLOCK_R)))
        return cudaErrorInvalidValue;
    if (gg_tmap_experts(&tmap_db, p->c, p->experts, p->k, p->n, STAGING_ROWS)) return cudaErrorInvalidValue;
    CUDA_TRY(gg_launch_smem_opt_in((const void *)kernel, R::SMEM_BYTES));
    GgGpu gpu;
    CUDA_TRY(gg_launch_gpu(p, &gpu));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)gg_wgrad_grid(&prm, gpu.sms));
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = R::SMEM_BYTES;
    cfg.stream = p->stream;
    char *ws = (char *)p->workspace;  // the deal's counters, the tickets, the partials (gg_wgrad.h)
    int *deal = (int *)ws, *tickets = ws ? (int *)(ws + GG_WGRAD_DEAL_BYTES) : nullptr;
    float *partials = ws ? (float *)(ws + ticket_bytes) : nullptr;
    CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, tmap_a, tmap_dc, tmap_db, p->row_offsets, deal, tickets, partials, prm,
                                trace));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}

// A wgrad kernel's registry row, from its ring R: block_m and block_n are the output tile's rows
// of k and columns of n, and the ragged reduction runs in block_k (64-row) stages, to which an
// item's rows are padded (harness/csv.c reads it so).
template <class R, Deal D>
void wgrad_info(GgKernelInfo *info, const void *kernel, bool whole_tiles) {
    k3::info_of(info, kernel, Shape{R::BLOCK_N, false, false, whole_tiles});
    info->block_m = R::TILE_M;
    info->dynamic_smem = R::SMEM_BYTES;
    info->stages = R::STAGES;
    info->pass = GG_PASS_WGRAD;
    info->dynamic_deal = D == Deal::Dynamic;
    info->workspace_bytes = wgrad_workspace_bytes<R>;
}

}  // namespace k5

// One registered wgrad configuration NAME: kernel template KERNEL<RING, DEAL, TRACE> on ring
// RING with deal DEAL (k5::Deal), its C ABI (common/gg_kernel.h: NAME_can_implement,
// NAME_launch, NAME_trace_launch, NAME_info); WHOLE_TILES as wgrad_info's.
#define K5_WGRAD_REGISTER(NAME, KERNEL, RING, DEAL, WHOLE_TILES)                                      \
    extern "C" int NAME##_can_implement(const GgShape *s, char *why, size_t len) {                      \
        return k5::wgrad_can_implement(#NAME, s, why, len);                                             \
    }                                                                                                   \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p) {                                           \
        return k5::launch_wgrad<RING, DEAL, false>(p, KERNEL<RING, DEAL, false>, #NAME, {});            \
    }                                                                                                   \
    extern "C" cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {             \
        return k5::launch_wgrad<RING, DEAL, true>(p, KERNEL<RING, DEAL, true>, #NAME, *t);              \
    }                                                                                                   \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info) {                                            \
        k5::wgrad_info<RING, DEAL>(info, (const void *)KERNEL<RING, DEAL, false>, WHOLE_TILES);         \
        return cudaSuccess;                                                                             \
    }
