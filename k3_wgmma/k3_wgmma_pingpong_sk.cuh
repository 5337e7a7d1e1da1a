// k3_wgmma_pingpong_sk — the ping-pong kernel (k3_wgmma_pingpong.cuh, fixed 128-row tiles at
// width 192) with a stream-K split of its last partial wave. Included at the end of
// k3_wgmma_ablations.cu, after the ping-pong kernel, whose K loop it calls.
//
// Why: T tiles on G persistent CTAs take ceil(T / G) rounds of tiles, and when R = T mod G is
// not 0 the last round keeps only R of the G SMs busy (the trace table's tail column). Here the
// first T - R tiles go round by round as before (T - R is a multiple of G: every CTA takes the
// same number), and the last R tiles' k-blocks are cut into equal ranges, one per CTA, in CTA
// pairs that share their B loads (SkWork). A range is shorter than a tile (R < G), so it holds
// parts of two tiles at most. Each part of a split tile ends in a hand-in: the CTA writes its fp32
// partial sum to its own slot in global memory and counts itself in on the tile's counter; the
// last to arrive adds the others' partials and stores the tile (sk_hand_in). Nobody waits for
// another CTA. (The first fixup had the CTA holding a tile's first k-block wait for the later
// ones' partials; its traces showed those waits eating the split's gain.)
// Partials and counters are this module's (static device memory): one launch of this
// configuration at a time per device. The last one resets its tile's counter, so the next launch
// (or a graph replay) starts from zeros.
// Work items   per CTA: its whole tiles, then at most two segments (tile, k-blocks [lo, hi)); the
//              three roles walk the same list, the consumers taking items in turn (ping-pong).
// Run it       build/bin/ggemm run --kernel k3_wgmma_pingpong_sk --k 8192

namespace {

constexpr int SK_MAX_CTAS = 256;
constexpr int SK_BLOCK_N = 192;
constexpr int SK_SLOT_FLOAT4 = WG_THREADS * SK_BLOCK_N / 4;  // one warpgroup's two accumulators
__device__ float4 sk_partials[2 * SK_MAX_CTAS * SK_SLOT_FLOAT4];  // two segments per CTA at most
__device__ unsigned sk_arrivals[SK_MAX_CTAS];                      // per split tile (R < G)

struct SkItem {
    int tile, lo, hi;  // schedule index; k-blocks [lo, hi) of it
};

// The CTA's items. Whole tiles first (the static stride), then its range of the stream-K units.
// The split keeps the B sharing of the whole-tile rounds: the last R tiles go in pairs (tiles
// dp + 2p and dp + 2p + 1, an expert's two row tiles of one column block where it has them), the
// units are (pair, k-block), and CTAs 2q and 2q + 1 take the same range of units, one tile of each
// pair apiece: both read the same B k-blocks at the same time, as CTAs c and c + 1 do in the rounds
// before. (The first version cut the tiles' k-blocks in one sequence, so a tile's two row tiles ran
// their k ranges on different CTAs at different times, and at K = 8192 ncu read B twice from DRAM.)
struct SkWork {
    int cta, ctas, k_blocks, whole_tiles, dp_tiles, num_tiles, half, q, pair_ctas;
    long units, x0, x1;  // stream-K units ((pair, k-block), pair-major); this CTA pair's [x0, x1)

    __device__ SkWork(int num_tiles_, int cta_, int ctas_, int k_blocks_)
        : cta(cta_), ctas(ctas_), k_blocks(k_blocks_), num_tiles(num_tiles_) {
        const bool split = num_tiles > ctas && k_blocks > 1 && ctas <= SK_MAX_CTAS && ctas >= 2;
        const int rest = split ? num_tiles % ctas : 0;
        dp_tiles = num_tiles - rest;
        whole_tiles = cta < dp_tiles ? (dp_tiles - cta + ctas - 1) / ctas : 0;
        pair_ctas = ctas / 2;
        q = cta / 2;
        half = cta % 2;
        units = (long)((rest + 1) / 2) * k_blocks;
        x0 = q < pair_ctas ? start(q) : 0;  // an odd grid's last CTA takes no units
        x1 = q < pair_ctas ? start(q + 1) : 0;
    }
    __device__ long start(int pair_cta) const { return (long)pair_cta * units / pair_ctas; }
    __device__ int tile_of(long pair) const { return dp_tiles + 2 * (int)pair + half; }
    __device__ int count() const {
        if (x1 <= x0) return whole_tiles;
        const long first = x0 / k_blocks, last = (x1 - 1) / k_blocks;
        // an odd R: the last pair has no second tile
        return whole_tiles + (int)(last - first) + 1 - (tile_of(last) >= num_tiles ? 1 : 0);
    }
    // The CTA pairs [first, last] whose ranges reach into `pair`, one of which is this CTA's
    // (empty ranges among them hold nothing). Scanned outwards from this CTA's: every start() is a
    // 64-bit division, too many to spend on all the pairs of the grid.
    __device__ void holders(long pair, int &first, int &last) const {
        first = last = q;
        while (first > 0 && start(first) > pair * k_blocks) --first;
        while (last + 1 < pair_ctas && start(last + 1) < (pair + 1) * k_blocks) ++last;
    }
    // The partial slot of CTA pair qq's segment of `pair` (this CTA's half): its CTA's second slot
    // when the range began in the pair before.
    __device__ int slot(int qq, long pair) const {
        return 2 * (2 * qq + half) + (int)(pair - start(qq) / k_blocks);
    }
    __device__ SkItem item(int j) const {
        if (j < whole_tiles) return SkItem{cta + j * ctas, 0, k_blocks};
        const int seg = j - whole_tiles;
        const long s = x0 / k_blocks + seg;
        const int lo = seg == 0 ? (int)(x0 % k_blocks) : 0;
        const long hi = x1 - s * k_blocks;
        return SkItem{tile_of(s), lo, hi < k_blocks ? (int)hi : k_blocks};
    }
};

// One consumer warpgroup (tid: 0..127) and its barrier `bar` (128 threads).
// One consumer warpgroup (tid: 0..127, named barrier `bar`) hands in its segment of a split tile:
// it writes its partial sum to its slot and counts itself in; 1 if it was the last of the tile's
// contributors, which then finishes the tile (the threadfence-reduction pattern: the stores, a
// fence and a barrier before the count; the count, a fence and a barrier before the reads).
// Nobody waits for another CTA, so a late contributor delays only the tile's end, by its own.
__device__ __forceinline__ bool sk_hand_in(const float (&acc0)[SK_BLOCK_N / 2], const float (&acc1)[SK_BLOCK_N / 2],
                                           int slot, unsigned *arrivals, unsigned contributors, int tid, int bar,
                                           int *last) {
    float4 *dst = sk_partials + (size_t)slot * SK_SLOT_FLOAT4;
#pragma unroll
    for (int i = 0; i < SK_BLOCK_N / 8; ++i) {
        dst[i * WG_THREADS + tid] = make_float4(acc0[4 * i], acc0[4 * i + 1], acc0[4 * i + 2], acc0[4 * i + 3]);
        dst[(SK_BLOCK_N / 8 + i) * WG_THREADS + tid] =
            make_float4(acc1[4 * i], acc1[4 * i + 1], acc1[4 * i + 2], acc1[4 * i + 3]);
    }
    __threadfence();
    gg::named_barrier_sync(bar, WG_THREADS);
    if (tid == 0) {
        *last = atomicAdd(arrivals, 1u) == contributors - 1;
        __threadfence();
    }
    gg::named_barrier_sync(bar, WG_THREADS);
    return *last;
}

__device__ __forceinline__ void sk_add_partial(float (&acc0)[SK_BLOCK_N / 2], float (&acc1)[SK_BLOCK_N / 2],
                                               int slot, int tid) {
    const float4 *src = sk_partials + (size_t)slot * SK_SLOT_FLOAT4;
#pragma unroll
    for (int i = 0; i < SK_BLOCK_N / 8; ++i) {
        const float4 a = __ldcg(src + i * WG_THREADS + tid), b = __ldcg(src + (SK_BLOCK_N / 8 + i) * WG_THREADS + tid);
        acc0[4 * i] += a.x, acc0[4 * i + 1] += a.y, acc0[4 * i + 2] += a.z, acc0[4 * i + 3] += a.w;
        acc1[4 * i] += b.x, acc1[4 * i + 1] += b.y, acc1[4 * i + 2] += b.z, acc1[4 * i + 3] += b.w;
    }
}

// TRACE: the traced twin. A stream-K segment records a second consumer event, computed = 0: from
// the end of its K loop (start) past the partials it waited for (mark) to its store or its own
// partial written (end).
template <bool TRACE>
__global__ void __launch_bounds__(THREADS, 1)
    k3_pingpong_sk_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                          uint16_t *__restrict__ C, const int *__restrict__ row_offsets, int tokens, int experts,
                          int k, int n, const typename gg::Trace<TRACE>::Sink trace) {
    using R = Ring<SK_BLOCK_N>;
    using Trace = gg::Trace<TRACE>;
    const uint64_t entry = Trace::now();
    constexpr int STAGES = R::STAGES, OWNER_WARPS = 4, ACC = SK_BLOCK_N / 2;
    extern __shared__ uint8_t smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ Schedule sched;
    __shared__ int sk_last[2];  // per consumer: its hand-in was the tile's last
    const uint32_t misalign = gg::smem_u32(smem_raw) % SWIZZLE_ALIGN;
    uint8_t *smem = smem_raw + (misalign ? SWIZZLE_ALIGN - misalign : 0);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gg::mbarrier_init(&full[s], 1);
            gg::mbarrier_init(&empty[s], OWNER_WARPS);
        }
        gg::fence_mbarrier_init();
    }
    sched.build(row_offsets, experts, tokens, n, SK_BLOCK_N, false, GG_PAIR_NONE);  // ends in __syncthreads
    if (threadIdx.x == 0) Trace::setup(trace, entry);
    const int k_blocks = k / BLOCK_K, wg = threadIdx.x / WG_THREADS;
    const SkWork work(sched.total(), blockIdx.x, gridDim.x, k_blocks);
    const int items = work.count();
    if (wg == 0) {
        gg::setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            GgPipe pipe = {0, 0};
            for (int j = 0; j < items; ++j) {
                const SkItem w = work.item(j);
                const gg::SchedTile tile = sched.at(w.tile);
                int a_loads = 0, b_loads = 0;
                for (int h = 0; h < BLOCK_M / WG_ROWS; ++h) a_loads += (tile.row0 + h * WG_ROWS < tokens);
                for (int p = 0; p < R::PANELS; ++p) b_loads += (tile.col0 + p * PANEL_N < n);
                const uint32_t stage_tx = a_loads * HALF_A_BYTES + b_loads * PANEL_BYTES;
                Trace span;
                for (int kb = w.lo; kb < w.hi; ++kb, gg_pipe_advance(&pipe, STAGES)) {
                    const int stage = pipe.stage;
                    gg::mbarrier_wait_parity(&empty[stage], gg_pipe_empty_parity(pipe));
                    uint8_t *a_box = smem + stage * R::STAGE_BYTES, *b_box = a_box + A_BYTES;
                    gg::mbarrier_arrive_expect_tx(&full[stage], stage_tx);
                    for (int h = 0; h < a_loads; ++h)
                        gg::tma_load_2d(a_box + h * HALF_A_BYTES, &tmap_a, kb * BLOCK_K, tile.row0 + h * WG_ROWS,
                                        &full[stage]);
                    for (int p = 0; p < b_loads; ++p)
                        gg::tma_load_3d(b_box + p * PANEL_BYTES, &tmap_b, tile.col0 + p * PANEL_N, kb * BLOCK_K,
                                        tile.expert, &full[stage]);
                    if (kb == w.lo) span.mark();
                }
                span.end(trace, GG_TRACE_PRODUCER, w.tile, tile.expert, tile.row0, tile.rows, tile.col0, true);
            }
        }
    } else {
        gg::setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, tid = threadIdx.x % WG_THREADS;
        const int warp_row = warp * STAGING_ROWS, bar = 3 + c;  // 1, 2: the turns
        uint8_t *staging = smem + R::STAGING_OFFSET + (c * 4 + warp) * STAGING_WARP_BYTES;
        const uint32_t base = gg::smem_u32(smem);
        GgPipe pipe = {0, 0};
        float acc0[ACC], acc1[ACC];
        for (int j = 0; j < items; ++j) {
            const SkItem w = work.item(j);
            if (j % 2 != c) {  // the other consumer's item: step over its stages
                for (int kb = w.lo; kb < w.hi; ++kb) gg_pipe_advance(&pipe, STAGES);
                continue;
            }
            const gg::SchedTile tile = sched.at(w.tile);
            if (j > 0) gg::named_barrier_sync(1 + (j - 1) % 2, 2 * WG_THREADS);
            Trace span;
            pingpong_k_loop<SK_BLOCK_N, STAGES, R::STAGE_BYTES, 2>(acc0, acc1, full, empty, base, pipe, w.hi - w.lo,
                                                                 lane == 0, span);
            gg::named_barrier_arrive(1 + j % 2, 2 * WG_THREADS);
            Trace fix;  // traced twin: a segment's hand-in, from its K loop's end
            const bool segment = w.lo > 0 || w.hi < k_blocks;
            if (segment) {
                const long pair = (w.tile - work.dp_tiles) / 2;
                int first, last;
                work.holders(pair, first, last);
                unsigned contributors = 0;
                for (int qq = first; qq <= last; ++qq) contributors += work.start(qq + 1) > work.start(qq);
                if (!sk_hand_in(acc0, acc1, work.slot(work.q, pair), &sk_arrivals[w.tile - work.dp_tiles],
                                contributors, tid, bar, &sk_last[c])) {
                    if (tid == 0) {
                        fix.mark();
                        span.end(trace, GG_TRACE_CONSUMER + c, w.tile, tile.expert, tile.row0, tile.rows, tile.col0,
                                 true);
                        fix.end(trace, GG_TRACE_CONSUMER + c, w.tile, tile.expert, tile.row0, tile.rows, tile.col0,
                                false);
                    }
                    continue;
                }
                for (int qq = first; qq <= last; ++qq)  // the last in: every other contributor's sum
                    if (qq != work.q && work.start(qq + 1) > work.start(qq))
                        sk_add_partial(acc0, acc1, work.slot(qq, pair), tid);
                if (tid == 0) sk_arrivals[w.tile - work.dp_tiles] = 0;  // for the next launch
            }
            fix.mark();
            gg::wgmma_store_warp_rows<R::PANELS>(acc0, staging, C, n, tile.row0 + warp_row, tile.rows - warp_row,
                                                 tile.col0, lane);
            gg::wgmma_store_warp_rows<R::PANELS>(acc1, staging, C, n, tile.row0 + WG_ROWS + warp_row,
                                                 tile.rows - WG_ROWS - warp_row, tile.col0, lane);
            if (tid == 0) {
                span.end(trace, GG_TRACE_CONSUMER + c, w.tile, tile.expert, tile.row0, tile.rows, tile.col0, true);
                if (segment)
                    fix.end(trace, GG_TRACE_CONSUMER + c, w.tile, tile.expert, tile.row0, tile.rows, tile.col0, false);
            }
        }
    }
}

}  // namespace

extern "C" cudaError_t k3_wgmma_pingpong_sk_info(GgKernelInfo *info) {
    info->kernel = (const void *)k3_pingpong_sk_kernel<false>;
    info->threads = THREADS;
    info->dynamic_smem = Ring<SK_BLOCK_N>::SMEM_BYTES;
    info->cluster = 1;
    info->block_m = BLOCK_M;
    info->block_n = SK_BLOCK_N;
    info->block_k = BLOCK_K;
    info->stages = Ring<SK_BLOCK_N>::STAGES;
    info->host_tiles = 0;
    info->whole_tiles = 1;
    return cudaSuccess;
}

template <bool TRACE>
static cudaError_t sk_launch(const GgLaunch *p, const typename gg::Trace<TRACE>::Sink &trace) {
    if (p->tokens <= 0 || p->experts <= 0) return cudaSuccess;  // no rows: nothing to write
    if (!gg_launch_aligned16(p, "k3_wgmma")) return cudaErrorInvalidValue;
    CUtensorMap tmap_a, tmap_b;
    if (gg_tmap_a(&tmap_a, p, WG_ROWS) || gg_tmap_b(&tmap_b, p)) return cudaErrorInvalidValue;
    const void *kernel = (const void *)k3_pingpong_sk_kernel<TRACE>;
    const size_t smem = Ring<SK_BLOCK_N>::SMEM_BYTES;
    CUDA_TRY(gg_launch_smem_opt_in(kernel, smem));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = p->stream;
    int grid;
    CUDA_TRY(gg_launch_persistent_ctas(p, kernel, &cfg, 1, BLOCK_M, SK_BLOCK_N, &grid));
    cfg.gridDim = dim3(grid);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, k3_pingpong_sk_kernel<TRACE>, tmap_a, tmap_b, p->c, p->row_offsets, p->tokens,
                                p->experts, p->k, p->n, trace));
    CUDA_LAUNCH_CHECK();
    return cudaSuccess;
}
extern "C" cudaError_t k3_wgmma_pingpong_sk_launch(const GgLaunch *p) { return sk_launch<false>(p, {}); }
extern "C" cudaError_t k3_wgmma_pingpong_sk_trace_launch(const GgLaunch *p, const GgTraceBuffer *t) {
    return sk_launch<true>(p, *t);
}
