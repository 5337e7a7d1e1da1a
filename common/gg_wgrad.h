/* The work list of the weight gradient dB_e = A_e^T dC_e (k5_backward/k5_wgrad.cu), callable
 * from host and device (GG_HD) and from C: the kernel builds its table and finds its items with
 * these functions, tests/suite_wgrad.c checks them on the CPU, and `ggemm tiles --pass wgrad`
 * prints the list that plots/diagrams.py draws.
 *
 * Output tiles. dB is [experts x k x n]; each expert's k x n is cut into tile_m x tile_n tiles
 * (tile_m rows of k, tile_n columns of n), `tiles` = ceil(k / tile_m) x ceil(n / tile_n) of them,
 * the same count for every expert, empty or not: an empty expert's tiles are written as zeros.
 *
 * The ragged reduction. Tile (e, t) sums over the m_e rows of expert e, in 64-row blocks
 * (GG_WGRAD_BLOCK_R, one ring stage). An expert of more than `chunk` blocks is split into
 * splits = ceil(m_e / (64 chunk)) items of whole blocks, as equal as whole blocks allow: of the
 * expert's ceil(m_e / 64) blocks, split s takes those from floor(s blocks / splits) up to
 * floor((s + 1) blocks / splits), at most `chunk`, only the last one ending in a partial block. Equal, not `chunk` blocks and a
 * short remainder: the round robin deals a tile's adjacent splits to neighbouring CTAs, and
 * with an even grid and two splits per tile every other CTA got every remainder of an expert
 * (k5_backward/TRIALS.md). Each split writes an fp32 partial, and the last of them to finish (an
 * integer ticket, not an fp atomic) adds the partials in split order 0, 1, ... and writes bf16:
 * the same sum, bit for bit, whichever CTA is last. Every other expert, tiny or empty, is one
 * item per tile, stored straight from registers.
 *
 * The list is expert-major; inside expert e, local item j is split j % splits of tile
 * j / splits (the splits of one tile adjacent: they run on neighbouring CTAs at the same time, so
 * the last one waits for nothing). Items of a split expert own `tiles x splits` consecutive slots
 * of the fp32 workspace, from that expert's slot_start; the ticket of tile t is the counter of its
 * split 0's slot.
 *
 * The tiles' order inside an expert (gg_wgrad_k_first: a rule of m_e and host-known sizes, so a
 * graph replays it with new m_e). The CTAs in flight work on neighbouring tiles: they share the
 * panels of one operand and sweep the other across its width, and the sweep comes back for every
 * block of the first. n block first (tile t covers rows (t / n_blocks) tile_m of k and columns
 * (t % n_blocks) tile_n of n) sweeps dC_e (m_e x n) once per block of k; k block first (rows
 * (t % k_blocks) tile_m, columns (t / k_blocks) tile_n) sweeps A_e (m_e x k) once per block of n.
 * A sweep costs DRAM reads only once if the swept operand stays in L2 until it comes back. The
 * rule prices each order's reads with that test against half the L2 (the conservative end of
 * plots/wgrad_l2.py's LRU model) and takes k block first only where it reads less: an expert
 * whose dC_e does not stay and whose A_e does (a Mixtral-like dW1), or one where neither stays and
 * k block first re-reads fewer bytes. Where both stay the reads tie and n block first stays: on
 * the worklog's 16k case, where every expert fits, k block first was slower at equal reads
 * (k5_backward/TRIALS.md, `k5-order-h100`).
 *
 * The chunk (a rule, from host-known sizes only, so that a CUDA graph replays with new m_e): the
 * longest item should be at most a quarter of a CTA's share of the work, which bounds the tail;
 * the work is at most tiles x (ceil(tokens / 64) + experts) blocks, its tiles counted
 * GG_WGRAD_CHUNK_TILE_M rows of k high whatever the kernel's own tile_m. A taller tile makes fewer
 * items; cutting its reductions finer to win the count back would give it more splits, each with
 * a larger partial (k5_backward/TRIALS.md, `k5-chunk-h100`). Never below GG_WGRAD_MIN_CHUNK
 * blocks: a split adds a partial write and read (fp32, twice the bf16 tile) that only a long item
 * hides. */
#ifndef GG_WGRAD_H
#define GG_WGRAD_H
#include "gg_hd.h"
#include "gg_schedule.h" /* gg_sched_clamp, gg_sched_group (the same binary search) */

#define GG_WGRAD_BLOCK_R 64   /* reduction rows per ring stage */
#define GG_WGRAD_MIN_CHUNK 16 /* blocks: 1024 rows */
#define GG_WGRAD_ITEMS_PER_CTA 4
#define GG_WGRAD_CHUNK_TILE_M 128 /* rows of k per tile as the chunk rule counts tiles */

typedef struct GgWgradParams {
    int experts, tokens, k, n;
    int tile_m, tile_n;  /* output tile: rows of k, columns of n */
    int n_blocks;        /* ceil(n / tile_n) */
    int k_blocks;        /* ceil(k / tile_m) */
    int tiles;           /* output tiles per expert: k_blocks x n_blocks */
    int dc_stays_rows;   /* the most rows whose dC_e sweep stays in L2 (the tile order's rule); -1: none */
    int a_stays_rows;    /* the same for A_e */
    int k_first_cases;   /* bit (dC_e stays) | (A_e stays) << 1: 1 where k block first reads less */
    int chunk;           /* reduction blocks per item of a split expert */
} GgWgradParams;

typedef struct GgWgradItem {
    int expert;
    int tile;    /* 0 .. tiles - 1 */
    int split;   /* 0 .. splits - 1 */
    int splits;  /* 1: stored from registers; > 1: through the workspace */
    int row0;    /* first reduction row, in A and dC */
    int rows;    /* reduction rows of this item: 0 (an empty expert) .. 64 chunk; a multiple of 64
                    but in the expert's last item */
    int m0;      /* first row of the tile in dB_e (a k index) */
    int col0;    /* first column of the tile (an n index) */
    int slot;    /* fp32 partial slot, or -1 (splits == 1) */
    int ticket;  /* counter index of the tile (split 0's slot), or -1 */
} GgWgradItem;

GG_HD int gg_wgrad_cdiv(long a, long b) { return (int)((a + b - 1) / b); }

/* Reduction blocks per item for `ctas` CTAs (the rule above). */
GG_HD int gg_wgrad_chunk(int tokens, int experts, int tiles, int ctas) {
    const long work = (long)tiles * (gg_wgrad_cdiv(tokens, GG_WGRAD_BLOCK_R) + experts);
    const long share = (long)(ctas > 0 ? ctas : 1) * GG_WGRAD_ITEMS_PER_CTA;
    const long chunk = (work + share - 1) / share;
    return chunk > GG_WGRAD_MIN_CHUNK ? (int)chunk : GG_WGRAD_MIN_CHUNK;
}

/* The most rows of an operand `width` columns wide whose sweep stays in `budget` bytes beside the
 * other operand's panel (`panel` columns) and one block of bf16 outputs (`block` x width): -1 if none. */
GG_HD int gg_wgrad_stays_rows(long budget, long width, long panel, long block) {
    const long room = budget - 2 * block * width, rows = room < 0 ? -1 : room / (2 * (width + panel));
    return rows > 0x7fffffffL ? 0x7fffffff : (int)rows;
}

/* The tile order's rule for an L2 of l2_bytes (<= 0: unknown, n block first everywhere). An
 * expert's DRAM reads, per row: n block first 2k + 2n (dC_e stays) or 2k + 2n k_blocks; k block
 * first 2n + 2k (A_e stays) or 2n + 2k n_blocks. Which sweep stays depends on m only through the
 * two row bounds, so the four cases are priced here once. */
GG_HD void gg_wgrad_order(GgWgradParams *p, long l2_bytes) {
    const long budget = l2_bytes / 2;
    p->dc_stays_rows = gg_wgrad_stays_rows(budget, p->n, p->tile_m, p->tile_m);
    p->a_stays_rows = gg_wgrad_stays_rows(budget, p->k, p->tile_n, p->tile_n);
    p->k_first_cases = 0;
    for (int c = 0; c < 4 && budget > 0; ++c) {
        const long n_first = 2L * p->k + 2L * p->n * (c & 1 ? 1 : p->k_blocks);
        const long k_first = 2L * p->n + 2L * p->k * (c & 2 ? 1 : p->n_blocks);
        p->k_first_cases |= (k_first < n_first) << c;
    }
}

GG_HD GgWgradParams gg_wgrad_params(int experts, int tokens, int k, int n, int tile_m, int tile_n,
                                    int ctas, long l2_bytes) {
    GgWgradParams p;
    p.experts = experts;
    p.tokens = tokens;
    p.k = k;
    p.n = n;
    p.tile_m = tile_m;
    p.tile_n = tile_n;
    p.n_blocks = gg_wgrad_cdiv(n, tile_n);
    p.k_blocks = gg_wgrad_cdiv(k, tile_m);
    p.tiles = p.k_blocks * p.n_blocks;
    gg_wgrad_order(&p, l2_bytes);
    p.chunk = gg_wgrad_chunk(tokens, experts, gg_wgrad_cdiv(k, GG_WGRAD_CHUNK_TILE_M) * p.n_blocks, ctas);
    return p;
}

/* Items per tile of an expert of m rows: 1 up to 64 chunk rows (0 rows too), else
 * ceil(m / (64 chunk)). In 32-bit arithmetic (the kernel finds every item with this: a 64-bit
 * division is a called routine of some 70 instructions): when m > 64 chunk both fit in 31 bits,
 * so their sum fits in 32 unsigned ones. */
GG_HD int gg_wgrad_splits(const GgWgradParams *p, int m) {
    const long rows = (long)GG_WGRAD_BLOCK_R * p->chunk;
    return m > rows ? (int)(((unsigned)m + (unsigned)rows - 1u) / (unsigned)rows) : 1;
}
GG_HD int gg_wgrad_items(const GgWgradParams *p, int m) { return p->tiles * gg_wgrad_splits(p, m); }
/* Workspace slots an expert takes: one per item if it is split, none otherwise. */
GG_HD int gg_wgrad_slots(const GgWgradParams *p, int m) {
    const int s = gg_wgrad_splits(p, m);
    return s > 1 ? p->tiles * s : 0;
}

/* The kernel's two exclusive prefix sums over the experts (experts + 1 entries each), on one
 * thread, from each expert's m[e] rows: the host's list (`ggemm tiles`, tests/suite_wgrad.c). */
GG_HD void gg_wgrad_tables(const GgWgradParams *p, const int *m, int *item_start, int *slot_start) {
    item_start[0] = slot_start[0] = 0;
    for (int e = 0; e < p->experts; ++e) {
        item_start[e + 1] = item_start[e] + gg_wgrad_items(p, m[e]);
        slot_start[e + 1] = slot_start[e] + gg_wgrad_slots(p, m[e]);
    }
}

/* Slots any split of `tokens` rows can need, from sizes alone: a split expert has
 * m > 64 chunk rows and ceil(m / (64 chunk)) < 2 m / (64 chunk) splits, so all of them together
 * fewer than 2 tokens / (64 chunk). */
GG_HD long gg_wgrad_max_slots(const GgWgradParams *p) {
    return (long)p->tiles * ((2L * p->tokens) / ((long)GG_WGRAD_BLOCK_R * p->chunk));
}

/* Workspace bytes: the deal's two counters (a kernel that hands out items from a counter, the
 * next item and the CTAs done: GG_WGRAD_DEAL_BYTES), the tickets (one int per slot, rounded up
 * to 256 bytes), then the fp32 partials (tile_m x tile_n floats per slot). The counters and the
 * tickets are zeroed once, and every launch that completes leaves them zero
 * (gg_wgrad_ticket_bytes covers both); after a launch that did not (an aborted context), zero
 * them again, or a dynamic-deal launch would skip items. */
#define GG_WGRAD_DEAL_BYTES 256
GG_HD long gg_wgrad_ticket_bytes(const GgWgradParams *p) {
    return GG_WGRAD_DEAL_BYTES + (gg_wgrad_max_slots(p) * 4 + 255) / 256 * 256;
}
GG_HD long gg_wgrad_workspace_bytes(const GgWgradParams *p) {
    return gg_wgrad_ticket_bytes(p) + gg_wgrad_max_slots(p) * p->tile_m * p->tile_n * 4L;
}

/* The most items any split of `tokens` rows can make, from sizes alone: every expert has `tiles`
 * items, and the split experts at most 2 tokens / (64 chunk) more per tile. */
GG_HD long gg_wgrad_max_items(const GgWgradParams *p) {
    return (long)p->tiles * (p->experts + 2L * p->tokens / ((long)GG_WGRAD_BLOCK_R * p->chunk) + 1);
}
/* The persistent grid: one CTA per SM, no more than there can be items. */
GG_HD int gg_wgrad_grid(const GgWgradParams *p, int sms) {
    const long bound = gg_wgrad_max_items(p);
    return (int)(bound < sms ? bound : sms);
}

/* The deal of the list to the grid's CTAs, as a model in which every CTA reduces a block in the
 * same time (`ggemm tiles` and the wgrad lab deal with it). The round robin: item t on CTA
 * t % grid. The dynamic deal (k5_wgrad.cuh's WgradDeal<Deal::Dynamic>): a CTA holds one item
 * ahead, so it draws two at launch and then one each time it starts an item; the next item goes
 * to the CTA whose draw comes first, on a tie the one that has drawn fewer, then the
 * lowest-numbered.
 * Arrays of `grid` ints, zeroed by the caller: busy, each CTA's blocks dealt so far; draw_at,
 * when it draws next (in blocks); drawn, its items so far. */
typedef struct GgWgradDeal {
    int grid, dynamic;
    int *busy, *draw_at, *drawn;
} GgWgradDeal;

/* Deals item t (t = 0, 1, ... in list order) of `blocks` blocks: its CTA, and in *start where in
 * that CTA's sequence it begins. */
GG_HD int gg_wgrad_deal(GgWgradDeal *d, int t, int blocks, int *start) {
    int c = t % d->grid;
    if (d->dynamic) {
        c = 0;
        for (int i = 1; i < d->grid; ++i)
            if (d->draw_at[i] < d->draw_at[c] || (d->draw_at[i] == d->draw_at[c] && d->drawn[i] < d->drawn[c])) c = i;
    }
    *start = d->busy[c];
    d->busy[c] += blocks;
    d->draw_at[c] = *start; /* its next draw: when it starts this item */
    d->drawn[c] += 1;
    return c;
}

/* floor(s blocks / splits), the first block of split s (0 <= s <= splits), as s q + floor(s r /
 * splits) with blocks = q splits + r: s r < splits^2 fits 32 bits unless an expert has more than
 * 2^16 splits (2^26 rows), the only case that pays a 64-bit division. */
GG_HD int gg_wgrad_first_block(int s, int blocks, int splits) {
    const int q = blocks / splits, r = blocks % splits;
    const unsigned long long sr = (unsigned long long)s * (unsigned)r;
    return s * q + (int)(sr <= 0xffffffffull ? (unsigned)sr / (unsigned)splits : sr / (unsigned)splits);
}

/* 1 if an expert of m rows has its tiles k block first (the rule above; gg_wgrad_params priced the
 * four cases of which sweep stays in L2, so the kernel's producer pays two compares per item). */
GG_HD int gg_wgrad_k_first(const GgWgradParams *p, int m) {
    return m > 0 && (p->k_first_cases >> ((m <= p->dc_stays_rows) | (m <= p->a_stays_rows) << 1) & 1);
}

/* Item `local` of expert e (m rows from row0), whose slots start at slot_start. */
GG_HD GgWgradItem gg_wgrad_item(const GgWgradParams *p, int e, int row0, int m, int local,
                                int slot_start) {
    GgWgradItem it;
    const int splits = gg_wgrad_splits(p, m), blocks = gg_wgrad_cdiv(m > 0 ? m : 0, GG_WGRAD_BLOCK_R);
    it.expert = e;
    it.splits = splits;
    it.tile = local / splits;
    it.split = local % splits;
    const long first = gg_wgrad_first_block(it.split, blocks, splits);
    const long past = gg_wgrad_first_block(it.split + 1, blocks, splits);
    const long end = GG_WGRAD_BLOCK_R * past < m ? GG_WGRAD_BLOCK_R * past : m; /* the last block: m */
    it.row0 = row0 + (int)(GG_WGRAD_BLOCK_R * first);
    it.rows = end > GG_WGRAD_BLOCK_R * first ? (int)(end - GG_WGRAD_BLOCK_R * first) : 0;
    const int k_first = gg_wgrad_k_first(p, m), inner = k_first ? p->k_blocks : p->n_blocks;
    const int outer = it.tile / inner, in = it.tile - outer * inner; /* one division */
    it.m0 = (k_first ? in : outer) * p->tile_m;
    it.col0 = (k_first ? outer : in) * p->tile_n;
    it.slot = splits > 1 ? slot_start + local : -1;
    it.ticket = splits > 1 ? slot_start + it.tile * splits : -1;
    return it;
}

/* Item `index` (0 <= index < item_start[experts]) from the two exclusive prefix sums over the
 * experts (item_start, slot_start: experts + 1 entries) and the clamped row offsets. */
GG_HD GgWgradItem gg_wgrad_at(const GgWgradParams *p, const int *item_start, const int *slot_start,
                              const int *row_offsets, int index) {
    const int e = gg_sched_group(item_start, p->experts, index);
    const int row0 = gg_sched_clamp(GG_SCHED_LOAD(row_offsets + e), p->tokens);
    const int end = gg_sched_clamp(GG_SCHED_LOAD(row_offsets + e + 1), p->tokens);
    return gg_wgrad_item(p, e, row0, end > row0 ? end - row0 : 0, index - item_start[e], slot_start[e]);
}

#endif
