/* The arithmetic of the device-side tile schedule, callable from host and device (GG_HD) and
 * from C: gg::TileSchedule (gg_schedule.cuh) builds its table and finds its tiles with these
 * functions, and tests/suite_schedule.c runs the same functions on the CPU.
 *
 * The schedule is a flat, expert-major list of entries. An entry is one tile, or (paired, for
 * 2-CTA clusters) two tiles that share an operand; tile `rank` (0 or 1) of an entry goes to CTA
 * `rank` of the pair. Inside expert e, with mt = ceil(m_e / tile_m) row tiles and nb column
 * blocks, local entry j is row tile j % mt of column block j / mt; paired by rows, pair
 * j % ceil(mt / 2) of column block j / ceil(mt / 2); paired by columns, row tile j % mt of
 * column-block pair j / mt. The row tiles of one column block are adjacent.
 *
 * The index over that list is two-level, so that it stays small in shared memory whatever the
 * expert count: at most max_groups (GG_SCHED_MAX_GROUPS) groups of span = ceil(experts /
 * max_groups) consecutive experts each, the last group possibly shorter. The table holds, per
 * group g, row_start[g], the clamped row offset of its first expert g span (row_start[groups]:
 * of the end, row_offsets[experts]), and entry_start[g], the exclusive prefix sum of entries over
 * the groups (entry_start[groups]: the total). With span 1 a group is an expert and the table
 * says everything; with a larger span a lookup finds the group in the table, then walks its
 * experts' row offsets in global memory. Only the index changes with the span, never the list. */
#ifndef GG_SCHEDULE_H
#define GG_SCHEDULE_H
#include "gg_adaptive.h"
#include "gg_hd.h"

/* The index's bounds: a table of at most 256 groups (+ 1), at most 16 experts per group. */
#define GG_SCHED_MAX_GROUPS 256
#define GG_SCHED_MAX_SPAN 16
#define GG_SCHED_MAX_EXPERTS (GG_SCHED_MAX_GROUPS * GG_SCHED_MAX_SPAN)

/* A walk over a group's experts loads their row offsets GG_SCHED_BATCH at a time: independent
 * loads in flight together. More registers than k3_wgmma's ping-pong consumers have to spare
 * spill: at 2 their spill bytes are those of the one-level table; 4 added a spill store to
 * pingpong_m128_n192, 8 and 16 up to 60 bytes (ptxas -v, CUDA 13.0). */
#define GG_SCHED_BATCH 2

/* A row offset from global memory: through the read-only cache on the device. */
#ifdef __CUDA_ARCH__
#define GG_SCHED_LOAD(p) __ldg(p)
#define GG_SCHED_UNROLL _Pragma("unroll")
#define GG_SCHED_ROLLED _Pragma("unroll 1")
#else
#define GG_SCHED_LOAD(p) (*(p))
#define GG_SCHED_UNROLL
#define GG_SCHED_ROLLED
#endif

typedef enum GgPairing {
    GG_PAIR_NONE,  /* an entry is one tile */
    GG_PAIR_ROWS,  /* row tiles 2p, 2p + 1 of one expert and column block: they share B */
    GG_PAIR_COLS   /* column blocks 2q, 2q + 1 of one row tile: they share A */
} GgPairing;

typedef struct GgSchedTile {
    int expert;  /* which B_e */
    int row0;    /* first row in A and C */
    int rows;    /* valid rows, 1..height (rows past row0 + rows belong to the next expert and
                    are never stored); 0 only for the idle tile of a GG_PAIR_ROWS entry */
    int height;  /* rows computed: tile_m, or tile_m / 2 for an adaptive remainder tile; 0 for
                    the idle tile of a GG_PAIR_ROWS entry */
    int col0;    /* first column in C, a multiple of block_n; the tile may hang past n. The idle
                    tile of a GG_PAIR_COLS entry starts at or past n */
} GgSchedTile;

/* A schedule's run-time parameters, beside its table (row_start, entry_start: groups + 1 each)
 * and the row offsets it was built from (gg_sched_params fills them). */
typedef struct GgSchedParams {
    int experts;
    int block_n;       /* columns per tile */
    int adaptive;      /* nonzero: a remainder of 1..tile_m / 2 rows gets a half-height tile */
    GgPairing pairing;
    int tokens;        /* row offsets are clamped to [0, tokens] */
    int col_groups;    /* column groups per expert (gg_sched_col_groups) */
    int span;          /* experts per group, 1.. */
    int groups;        /* ceil(experts / span): the table's length less one */
} GgSchedParams;

/* An offset clamped to [0, tokens]: a bad table gives wrong results, never a row out of bounds. */
GG_HD int gg_sched_clamp(int offset, int tokens) {
    const int low = offset > 0 ? offset : 0;
    return low < tokens ? low : tokens;
}

/* Rows of expert e from clamped offsets; a decreasing pair gives 0. */
GG_HD int gg_sched_expert_rows(const int *row_start, int e) {
    const int m = row_start[e + 1] - row_start[e];
    return m > 0 ? m : 0;
}

/* Row tiles of an expert of m rows: ceil(m / tile_m), adaptive or not (gg_adaptive.h). */
GG_HD int gg_sched_row_tiles(int m, int tile_m) {
    int full, half;
    return gg_row_tiles(m, tile_m, &full, &half);
}

/* An expert's entries are row groups x column groups. Paired by rows, a row group is two row
 * tiles; paired by columns, a column group is two of the col_blocks column blocks. */
GG_HD int gg_sched_row_group(GgPairing pair) { return pair == GG_PAIR_ROWS ? 2 : 1; }
GG_HD int gg_sched_col_groups(int col_blocks, GgPairing pair) {
    return pair == GG_PAIR_COLS ? (col_blocks + 1) / 2 : col_blocks;
}
GG_HD int gg_sched_entries(int m, int tile_m, int row_group, int col_groups) {
    const int row_tiles = gg_sched_row_tiles(m, tile_m);
    return (row_group == 2 ? (row_tiles + 1) / 2 : row_tiles) * col_groups; /* row_group: 1 or 2 */
}

/* Experts per group when the table holds at most max_groups groups: 1 up to max_groups experts. */
GG_HD int gg_sched_span(int experts, int max_groups) {
    return experts > max_groups ? (experts + max_groups - 1) / max_groups : 1;
}

/* The parameters of a schedule over 0.. experts whose table holds at most max_groups groups. */
GG_HD GgSchedParams gg_sched_params(int experts, int tokens, int n, int block_n, int adaptive,
                                    GgPairing pair, int max_groups) {
    GgSchedParams p;
    p.experts = experts;
    p.block_n = block_n;
    p.adaptive = adaptive;
    p.pairing = pair;
    p.tokens = tokens;
    p.col_groups = gg_sched_col_groups((n + block_n - 1) / block_n, pair);
    p.span = gg_sched_span(experts, max_groups);
    p.groups = (experts + p.span - 1) / p.span;
    return p;
}

/* Experts in group g (< groups): span, fewer in the last group. */
GG_HD int gg_sched_group_size(const GgSchedParams *p, int g) {
    const int left = p->experts - g * p->span;
    return left < p->span ? left : p->span;
}

/* row_start[g] of the table, 0 <= g <= groups: the clamped offset of expert g span (of the end
 * for g = groups). */
GG_HD int gg_sched_group_row(const int *row_offsets, const GgSchedParams *p, int g) {
    const int e = g * p->span < p->experts ? g * p->span : p->experts;
    return gg_sched_clamp(GG_SCHED_LOAD(row_offsets + e), p->tokens);
}

/* Entries of group g (< groups): the sum over its experts, from their clamped offsets. The
 * span must not exceed max_span (a compile-time constant on the device: 1 leaves one expert and
 * no loop). */
GG_HD int gg_sched_group_entries(const int *row_offsets, const GgSchedParams *p, int g, int tile_m,
                                 int max_span) {
    const int first = g * p->span, count = max_span > 1 ? gg_sched_group_size(p, g) : 1;
    const int row_group = gg_sched_row_group(p->pairing);
    int start = gg_sched_clamp(GG_SCHED_LOAD(row_offsets + first), p->tokens), sum = 0;
    GG_SCHED_ROLLED
    for (int base = 0; base < count; base += GG_SCHED_BATCH) {
        int end[GG_SCHED_BATCH];
        GG_SCHED_UNROLL
        for (int j = 0; j < GG_SCHED_BATCH; ++j)
            end[j] = base + j < count
                         ? gg_sched_clamp(GG_SCHED_LOAD(row_offsets + first + base + j + 1), p->tokens)
                         : 0;
        GG_SCHED_UNROLL
        for (int j = 0; j < GG_SCHED_BATCH; ++j)
            if (base + j < count) {
                sum += gg_sched_entries(end[j] > start ? end[j] - start : 0, tile_m, row_group,
                                        p->col_groups);
                start = end[j];
            }
    }
    return sum;
}

/* The group that owns entry `index`: the largest g with entry_start[g] <= index, where
 * entry_start is the exclusive prefix sum of entries over `groups` groups (entry_start[groups]
 * is the total; 0 <= index < total). That group has at least one entry. */
GG_HD int gg_sched_group(const int *entry_start, int groups, int index) {
    int lo = 0, hi = groups;  /* entry_start[lo] <= index < entry_start[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (entry_start[mid] <= index) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Tile `rank` of local entry `local` of expert e, whose m rows start at row0. With consistent
 * tables the expert has an entry `local` (m >= 1); an expert without rows (offsets that changed
 * between build and lookup) gives a tile without rows at row0, never a division by zero. */
GG_HD GgSchedTile gg_sched_tile(const GgSchedParams *p, int e, int row0, int m, int local,
                                int rank, int tile_m) {
    int full, half; /* row tiles of full height, of half height (0 or 1) */
    const int mt_count = gg_row_tiles(m, tile_m, &full, &half);
    int mt, nb; /* row tile, column block */
    if (p->pairing == GG_PAIR_ROWS) {
        const int pair_rows = mt_count > 0 ? (mt_count + 1) / 2 : 1;
        mt = 2 * (local % pair_rows) + rank;
        nb = local / pair_rows;
    } else {
        const int mt_div = mt_count > 0 ? mt_count : 1;
        mt = local % mt_div;
        nb = p->pairing == GG_PAIR_COLS ? 2 * (local / mt_div) + rank : local / mt_div;
    }
    GgSchedTile t;
    t.expert = e;
    t.row0 = row0 + tile_m * mt; /* a half-height tile comes last: it starts at tile_m mt */
    t.col0 = nb * p->block_n;
    if (mt >= mt_count) { /* the idle half of an expert's last row pair (odd row-tile count) */
        t.rows = 0;
        t.height = 0;
        return t;
    }
    const int left = m - tile_m * mt;
    t.rows = left < tile_m ? left : tile_m;
    t.height = p->adaptive && mt >= full ? tile_m / 2 : tile_m;
    return t;
}

/* Tile `rank` of entry `index` (0 <= index < entry_start[p->groups]). The group comes from the
 * table; with a span above 1, the expert and its local entry from a walk over the group's
 * experts, their offsets read from row_offsets (the array the table was built from, unchanged
 * since) GG_SCHED_BATCH at a time. max_span bounds the span (a compile-time constant on the
 * device: with 1 the walk is compiled out and row_offsets is never read). */
GG_HD GgSchedTile gg_sched_at(const int *row_start, const int *entry_start, const int *row_offsets,
                              const GgSchedParams *p, int index, int rank, int tile_m,
                              int max_span) {
    const int g = gg_sched_group(entry_start, p->groups, index);
    int local = index - entry_start[g];
    int e = g, row0 = row_start[g], m = gg_sched_expert_rows(row_start, g); /* a group = an expert */
    if (max_span > 1 && p->span > 1) {
        const int last = g * p->span + gg_sched_group_size(p, g); /* past the group's experts */
        const int row_group = gg_sched_row_group(p->pairing);
        e = g * p->span; /* the expert under test: its rows start at row0 */
        m = 0;           /* 0 until the expert is found (it has rows) */
        GG_SCHED_ROLLED
        for (int next = e; next < last && m == 0; next += GG_SCHED_BATCH) {
            int end[GG_SCHED_BATCH]; /* clamped offsets of experts next + 1 .. next + BATCH */
            GG_SCHED_UNROLL
            for (int j = 0; j < GG_SCHED_BATCH; ++j)
                end[j] = next + j < last
                             ? gg_sched_clamp(GG_SCHED_LOAD(row_offsets + next + j + 1), p->tokens)
                             : 0;
            GG_SCHED_UNROLL
            for (int j = 0; j < GG_SCHED_BATCH; ++j)
                if (m == 0 && next + j < last) {
                    const int rows = end[j] > row0 ? end[j] - row0 : 0;
                    const int entries = gg_sched_entries(rows, tile_m, row_group, p->col_groups);
                    if (local < entries) {
                        m = rows;
                    } else {
                        local -= entries;
                        row0 = end[j];
                        ++e;
                    }
                }
        }
        if (e == last) e = last - 1; /* not found (offsets changed since the build): no rows */
    }
    return gg_sched_tile(p, e, row0, m, local, rank, tile_m);
}

/* The last wave split along the reduction (k5_dgrad_tail_*: k5_backward/k5_dgrad_tail.cu).
 * A persistent grid of `ctas` CTAs runs `tiles` tiles in waves of ctas; when the last wave holds
 * r = tiles % ctas tiles and r is at most half the grid, most SMs sit idle for a whole tile's time
 * at the end. Each of those r tiles is then cut into `splits` pieces of consecutive k-blocks, as
 * many as the idle CTAs allow (ctas / r), at most GG_TAIL_MAX_SPLITS and each piece at least
 * GG_TAIL_MIN_KBLOCKS long: the last wave lasts about 1 / splits of a tile. A piece writes an fp32
 * partial; the tile's last piece to finish adds them in piece order (the same bits whoever is last)
 * and stores the tile. The work list is the full waves' tiles, then the tail tiles' pieces, a tile's
 * pieces adjacent: item w < full is tile w; item full + q splits + p is piece p of tile full + q. */
#define GG_TAIL_MAX_SPLITS 4  /* a piece's partial is written and read once: 4 reads per tile at most */
#define GG_TAIL_MIN_KBLOCKS 8 /* a piece's partial costs about what a few k-blocks do */

typedef struct GgTailItem {
    int tile;   /* index in the schedule's tile list */
    int piece;  /* 0..pieces - 1 */
    int pieces; /* 1: a whole tile, stored as it is; else the tile's splits */
    int kb0;    /* the piece's k-blocks: [kb0, kb1) */
    int kb1;
    int slot;   /* pieces > 1: the piece's partial slot, q splits + p (q: the tail tile's index) */
} GgTailItem;

/* How many pieces each tile of the last wave is cut into (1: none). */
GG_HD int gg_tail_splits(int tiles, int ctas, int k_blocks) {
    if (tiles <= 0 || ctas <= 0) return 1;
    const int r = tiles % ctas;
    if (r == 0 || 2 * r > ctas) return 1;
    int s = ctas / r;
    if (s > GG_TAIL_MAX_SPLITS) s = GG_TAIL_MAX_SPLITS;
    if (s > k_blocks / GG_TAIL_MIN_KBLOCKS) s = k_blocks / GG_TAIL_MIN_KBLOCKS;
    return s > 1 ? s : 1;
}

/* Tiles before the split ones: the full waves' (all of them when there is no split). */
GG_HD int gg_tail_full(int tiles, int ctas, int splits) { return splits > 1 ? tiles - tiles % ctas : tiles; }

/* Items in the work list: one per tile of the full waves, `splits` per tail tile. */
GG_HD int gg_tail_items(int tiles, int ctas, int splits) {
    const int full = gg_tail_full(tiles, ctas, splits);
    return full + (tiles - full) * splits;
}

/* Item w of the work list (0 <= w < gg_tail_items). */
GG_HD GgTailItem gg_tail_item(int tiles, int ctas, int splits, int k_blocks, int w) {
    const int full = gg_tail_full(tiles, ctas, splits);
    GgTailItem it = {w, 0, 1, 0, k_blocks, 0};
    if (w >= full) {
        const int j = w - full;
        it.tile = full + j / splits;
        it.piece = j % splits;
        it.pieces = splits;
        it.kb0 = it.piece * k_blocks / splits;
        it.kb1 = (it.piece + 1) * k_blocks / splits;
        it.slot = j;
    }
    return it;
}

#endif
