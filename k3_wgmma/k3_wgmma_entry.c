/* k3_wgmma, the entry point: one name that runs, for each problem, the registered configuration
 * a rule picks from the problem's shape. The rule reads only tokens, experts, K and N, never the
 * rows of each expert, so the choice needs no host copy of the split and a CUDA graph of the
 * launch replays correctly with new m_e (the device schedule reads them at run time).
 *
 * 1. Column-block width BLOCK_N, from N alone: the width that pads the last column block least
 *    (a padded column costs a full K loop of MMAs and its B loads). Among equals: 192 first
 *    (five 40 KiB stages), then 256 (four stages; the widest MMA, and a 64-row tile splits
 *    evenly at its 128-column panel boundary), then 128 (six stages, but each A load feeds
 *    half as many columns).
 * 2. Row tiles: adaptive (a remainder of 1..64 rows gets a 64-row tile, split by columns over
 *    both consumers) when the experts average at most two 128-row tiles, where an expert's last,
 *    partial tile is a large share of its work; fixed 128-row tiles otherwise, where it is not
 *    and the split tile's uneven halves cost more than its padding saves (at BLOCK_N = 192 one
 *    consumer computes 128 columns, the other 64). k3_wgmma/README.md has the measurements.
 * Not chosen: the host tile list (k3_wgmma_tile: not graph-safe, and slower where B panels
 * must be shared in L2) and the 2-CTA pairs (slower in every case measured). */
#include <stdio.h>

#include "k3_wgmma.h"

/* The configurations the rule chooses from. Their width and row policy are read from their
 * own info (GgKernelInfo: block_n; block_m 0 = adaptive), not restated here. */
typedef struct {
    const char *name;
    GgInfoFn info;
    GgLaunchFn launch;
    GgTraceLaunchFn trace_launch;
} Choice;
#define CHOICE(NAME) {#NAME, NAME##_info, NAME##_launch, NAME##_trace_launch}
static const Choice choices[] = {
    CHOICE(k3_wgmma_split64), CHOICE(k3_wgmma_persist), CHOICE(k3_wgmma_n256),
    CHOICE(k3_wgmma_persist_n256), CHOICE(k3_wgmma_n128),
};
enum { CHOICES = (int)(sizeof choices / sizeof choices[0]) };

/* Widths in the order that breaks ties, and the row-tile threshold (128-row tiles per expert,
 * on average) up to which rows are adaptive. */
static const int widths[] = {192, 256, 128};
enum { ADAPTIVE_MAX_ROW_TILES = 2, ROW_TILE = 128 };

static long padded_columns(int n, int block_n) { return (long)(n + block_n - 1) / block_n * block_n - n; }

/* The choice of this width and row policy; the other policy at this width when it has none. */
static const Choice *find(int block_n, int adaptive, int *got_adaptive) {
    const Choice *other = NULL;
    for (int i = 0; i < CHOICES; ++i) {
        GgKernelInfo info;
        if (choices[i].info(&info) != cudaSuccess || info.block_n != block_n) continue;
        const int a = info.block_m == 0;
        if (a == adaptive) {
            *got_adaptive = a;
            return &choices[i];
        }
        other = &choices[i];
        *got_adaptive = a;
    }
    return other;
}

int k3_wgmma_adaptive_rows(const GgShape *s) {
    return (long)s->tokens <= (long)ADAPTIVE_MAX_ROW_TILES * ROW_TILE * s->experts;
}

static const Choice *choose(const GgShape *s, char *why, size_t len) {
    int block_n = widths[0];
    for (int i = 1; i < (int)(sizeof widths / sizeof widths[0]); ++i)
        if (padded_columns(s->n, widths[i]) < padded_columns(s->n, block_n)) block_n = widths[i];
    const int adaptive = k3_wgmma_adaptive_rows(s);
    int got = adaptive;
    const Choice *c = find(block_n, adaptive, &got);
    if (why)
        snprintf(why, len, "%s: N %d pads %ld columns at BLOCK_N %d; %d rows over %d experts is %s %d %d-row tiles "
                 "per expert: %s",
                 c->name, s->n, padded_columns(s->n, block_n), block_n, s->tokens, s->experts,
                 adaptive ? "at most" : "more than", ADAPTIVE_MAX_ROW_TILES, ROW_TILE,
                 got == adaptive ? (adaptive ? "adaptive rows" : "fixed 128-row tiles")
                                 : (got ? "adaptive rows (no fixed-row configuration at this width)"
                                        : "fixed 128-row tiles (no adaptive configuration at this width)"));
    return c;
}

const char *k3_wgmma_choose(const GgShape *s, char *why, size_t len) { return choose(s, why, len)->name; }

static const Choice *choose_for(const GgLaunch *p) {
    const GgShape s = {p->tokens, p->experts, p->k, p->n};
    return choose(&s, NULL, 0);
}

cudaError_t k3_wgmma_launch(const GgLaunch *p) { return choose_for(p)->launch(p); }

cudaError_t k3_wgmma_trace_launch(const GgLaunch *p, const GgTraceBuffer *trace) {
    return choose_for(p)->trace_launch(p, trace);
}

/* Without a shape: the worklog's configuration (what the rule picks there), for listings. */
cudaError_t k3_wgmma_info(GgKernelInfo *info) { return k3_wgmma_split64_info(info); }
