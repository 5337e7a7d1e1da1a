/* k3_wgmma, the entry point: one name that runs, for each problem, the registered configuration
 * a rule picks from the problem's shape and two properties of the GPU (SMs, L2 bytes). The rule
 * never reads the rows of each expert, so the choice needs no host copy of the split and a CUDA
 * graph of the launch replays correctly with new m_e (the device schedule reads them at run time).
 *
 * 1. Row tiles. Adaptive (an expert's remainder of 1..64 rows gets a 64-row tile) only where it
 *    pays:
 *    a. the experts average at most two 128-row tiles, where an expert's last, partial tile is a
 *       large share of its work; above that, the split tile's uneven halves cost more than its
 *       padding saves (measured with the split 64-row tile, before ping-pong, whose 64-row tile
 *       has one owner; the threshold stays);
 *    b. and, where experts have several row tiles (an average of at least one), the B panels
 *       those row tiles share stay in L2 while they drift apart. The row tiles of one column
 *       block start together and read the same B panel; a 64-row tile runs through its K loop
 *       up to twice as fast as its 128-row neighbours, so by its end it leads them by up to
 *       half the loop, and they re-read B from DRAM unless it is still in L2. In flight: one
 *       column block per `row tiles per expert` of the `sms` tiles running, each needing half
 *       of its K x BLOCK_N bf16 panel kept: sms / tiles_per_expert x K x BLOCK_N bytes.
 *       Below one tile per expert on average most experts have a single row tile and nothing
 *       drifts: adaptive. (Under skew the heavy experts have several even then; the rule cannot
 *       see the skew, so the choice steps at an average of one tile.) With fixed rows every row
 *       tile of a block runs at one pace (results/h200/evidence/ncu_k3_rows_dram-*.txt: DRAM
 *       bytes read, adaptive against fixed; at width 256 fixed rows read B about once).
 * 2. Column-block width BLOCK_N, from N: the width that pads the last column block least (a
 *    padded column costs a full K loop of MMAs and its B loads). Among equals 192 (ping-pong
 *    consumers, step 4, with adaptive or fixed rows), then 256 (one A box feeds the most columns), then
 *    128 (half the columns per A load). The L2 test of 1b is made at this width.
 * 3. Consumers. Where the experts average at least one 128-row tile, ping-pong if the width has
 *    it: each consumer warpgroup computes whole tiles (both 64-row halves, two accumulators),
 *    the CTA's tiles in turn, so one stores its tile while the other's MMAs run. Two 64 x 192
 *    accumulators take 192 of a consumer's 232 registers; two 64 x 256 would not fit, so 256 has
 *    no ping-pong. 192 and 128 have it with either row policy.
 *    Below one tile per expert most tiles are 64-row remainders, which one owner would compute
 *    at half a stage's MMAs; there both consumers share each tile (split by columns).
 * Not chosen: the host tile list (step 1, k3_wgmma_tile_m128_n192: not graph-safe, and slower
 * where B panels must be shared in L2) and the 2-CTA pairs (ablations: slower in every case
 * measured).
 * k3_wgmma/README.md has the measurements behind each branch. */
#include <stdio.h>
#include <string.h>

#include "gg_launch.h"
#include "k3_wgmma.h"

/* The configurations the rule can reach (k3_wgmma_coop_m128_n192, step 2, it cannot: fixed rows
 * come with at least one whole tile per expert, where the consumers take whole tiles). Their
 * width, row policy and consumers are read from their own info (GgKernelInfo: block_n;
 * block_m 0 = adaptive; whole_tiles), not restated here. */
typedef struct {
    const char *name;
    GgInfoFn info;
    GgLaunchFn launch;
    GgTraceLaunchFn trace_launch;
} Choice;
#define CHOICE(NAME) {#NAME, NAME##_info, NAME##_launch, NAME##_trace_launch}
static const Choice choices[] = {
    CHOICE(k3_wgmma_coop_m64_n192),      CHOICE(k3_wgmma_pingpong_m64_n192),
    CHOICE(k3_wgmma_pingpong_m128_n192), CHOICE(k3_wgmma_coop_m64_n256),
    CHOICE(k3_wgmma_coop_m128_n256),     CHOICE(k3_wgmma_coop_m64_n128),
    CHOICE(k3_wgmma_pingpong_m128_n128), CHOICE(k3_wgmma_pingpong_m64_n128),
};
enum { CHOICES = (int)(sizeof choices / sizeof choices[0]) };

/* Widths in the order that breaks ties; the row-tile threshold (128-row tiles per expert, on
 * average) up to which rows may be adaptive, and from which the consumers take whole tiles. */
static const int widths[] = {192, 256, 128};
enum { WIDTHS = 3, ADAPTIVE_MAX_ROW_TILES = 2, WHOLE_TILES_MIN_ROW_TILES = 1, ROW_TILE = 128 };

/* Without a GPU (`ggemm problem` on a laptop), the rule is shown for the H200 whose results
 * this repository commits (its sweep.csv header: sms, l2_bytes). */
static const GgGpu reference_gpu = {132, 60L << 20};

static long padded_columns(int n, int block_n) { return (long)(n + block_n - 1) / block_n * block_n - n; }

static int width(int n) {
    int block_n = widths[0];
    for (int i = 1; i < WIDTHS; ++i)
        if (padded_columns(n, widths[i]) < padded_columns(n, block_n)) block_n = widths[i];
    return block_n;
}

static double tiles_per_expert(const GgShape *s) {
    return s->experts > 0 ? (double)s->tokens / ((double)ROW_TILE * s->experts) : 0;
}

/* 1b's bytes, from one tile per expert on: the halves of the B panels in flight that drifting
 * row tiles re-read. */
static double drift_bytes(const GgShape *s, const GgGpu *g, int block_n) {
    return (double)g->sms / tiles_per_expert(s) * s->k * block_n;
}

int k3_wgmma_adaptive_rows(const GgShape *s, const GgGpu *g, int block_n) {
    const double tiles = tiles_per_expert(s);
    if (tiles > ADAPTIVE_MAX_ROW_TILES) return 0;
    if (tiles < 1) return 1;  /* most experts have one row tile: nothing drifts */
    return drift_bytes(s, g, block_n > 0 ? block_n : width(s->n)) <= (double)g->l2_bytes;
}

/* The choice of this width, row policy and consumers. Where the width has none, the one that
 * matches the most of the rest: the row policy first. `got` says what was found. */
typedef struct {
    int adaptive, whole;
} Policy;
static const Choice *find(int block_n, Policy want, Policy *got) {
    const Choice *best = NULL;
    int best_score = -1;
    for (int i = 0; i < CHOICES; ++i) {
        GgKernelInfo info = {0};
        if (choices[i].info(&info) != cudaSuccess || info.block_n != block_n) continue;
        const Policy p = {info.block_m == 0, info.whole_tiles};
        const int score = 2 * (p.adaptive == want.adaptive) + (p.whole == want.whole);
        if (score > best_score) {
            best = &choices[i];
            best_score = score;
            *got = p;
        }
    }
    return best;
}

static const Choice *choose(const GgShape *s, const GgGpu *g, char *why, size_t len) {
    const double tiles = tiles_per_expert(s);
    const Policy want = {k3_wgmma_adaptive_rows(s, g, 0), tiles >= WHOLE_TILES_MIN_ROW_TILES};
    const int block_n = width(s->n);
    Policy got = want;
    const Choice *c = find(block_n, want, &got);
    if (why) {
        char rows[160];
        if (tiles > ADAPTIVE_MAX_ROW_TILES)
            snprintf(rows, sizeof rows, "%d rows > %d x %d-row tiles x %d experts: fixed rows", s->tokens,
                     ADAPTIVE_MAX_ROW_TILES, ROW_TILE, s->experts);
        else if (tiles < 1)
            snprintf(rows, sizeof rows, "%.3f 128-row tiles per expert < 1: adaptive rows", tiles);
        else
            snprintf(rows, sizeof rows, "%.3f 128-row tiles per expert, drifting B %.1f MiB %s L2 %.1f MiB: %s",
                     tiles, drift_bytes(s, g, block_n) / (1 << 20), want.adaptive ? "<=" : ">",
                     (double)g->l2_bytes / (1 << 20), want.adaptive ? "adaptive rows" : "fixed rows");
        const char *missing = got.adaptive != want.adaptive
                                  ? (got.adaptive ? " (no fixed-row configuration at this width)"
                                                  : " (no adaptive configuration at this width)")
                              : got.whole != want.whole ? " (no ping-pong one with these rows at this width)"
                                                        : "";
        snprintf(why, len, "%s: %s; N %d pads %ld at BLOCK_N %d; %s%s", c->name, rows, s->n,
                 padded_columns(s->n, block_n), block_n,
                 got.whole ? "ping-pong consumers" : "consumers share tiles", missing);
    }
    return c;
}

const char *k3_wgmma_choose_on(const GgShape *s, const GgGpu *g, char *why, size_t len) {
    return choose(s, g, why, len)->name;
}

/* No GPU to ask, as opposed to a GPU that failed. */
static int no_gpu(cudaError_t err) {
    return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver;
}

/* The current GPU, or the reference one (said in why) where there is none; NULL (why says so)
 * if the GPU is there but cannot be asked. */
static const Choice *choose_here(const GgShape *s, char *why, size_t len) {
    GgGpu g;
    const cudaError_t err = gg_launch_gpu(NULL, &g);
    if (err == cudaSuccess) return choose(s, &g, why, len);
    if (!no_gpu(err)) {
        if (why) snprintf(why, len, "(cannot ask the GPU: %s)", cudaGetErrorString(err));
        return NULL;
    }
    cudaGetLastError(); /* the failed query's own error, not one of the caller's */
    const Choice *c = choose(s, &reference_gpu, why, len);
    if (why) {
        const size_t used = strlen(why);
        snprintf(why + used, len - used, " (no GPU here: for %d SMs and %ld MiB of L2, the H200 of results/h200)",
                 reference_gpu.sms, reference_gpu.l2_bytes >> 20);
    }
    return c;
}

const char *k3_wgmma_choose(const GgShape *s, char *why, size_t len) {
    const Choice *c = choose_here(s, why, len);
    return c ? c->name : NULL;
}

/* A launch: the GPU it runs on. */
static cudaError_t choose_for(const GgLaunch *p, const Choice **c) {
    const GgShape s = {p->tokens, p->experts, p->k, p->n};
    GgGpu g;
    const cudaError_t err = gg_launch_gpu(p, &g);
    if (err != cudaSuccess) return err;
    *c = choose(&s, &g, NULL, 0);
    return cudaSuccess;
}

cudaError_t k3_wgmma_launch(const GgLaunch *p) {
    const Choice *c;
    const cudaError_t err = choose_for(p, &c);
    return err != cudaSuccess ? err : c->launch(p);
}

cudaError_t k3_wgmma_trace_launch(const GgLaunch *p, const GgTraceBuffer *trace) {
    const Choice *c;
    const cudaError_t err = choose_for(p, &c);
    return err != cudaSuccess ? err : c->trace_launch(p, trace);
}

/* Without a shape: the worklog's configuration (what the rule picks there), for listings. */
cudaError_t k3_wgmma_info(GgKernelInfo *info) { return k3_wgmma_pingpong_m64_n192_info(info); }
