/* The arithmetic of the device-side tile schedule, callable from host and device (GG_HD) and
 * from C: gg::TileSchedule (gg_schedule.cuh) builds its table and finds its tiles with these
 * functions, and tests/suite_schedule.c runs the same functions on the CPU.
 *
 * The schedule is a flat, expert-major list of entries. An entry is one tile, or (paired, for
 * 2-CTA clusters) two tiles that share an operand; tile `rank` (0 or 1) of an entry goes to CTA
 * `rank` of the pair. Inside expert e, with mt = ceil(m_e / tile_m) row tiles and nb column
 * blocks, local entry j is row tile j % mt of column block j / mt; paired by rows, pair
 * j % ceil(mt / 2) of column block j / ceil(mt / 2); paired by columns, row tile j % mt of
 * column-block pair j / mt. The row tiles of one column block are adjacent. */
#ifndef GG_SCHEDULE_H
#define GG_SCHEDULE_H
#include "gg_adaptive.h"
#include "gg_hd.h"

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

/* In which order the CTAs walk the list. A persistent grid of W CTAs (clusters) takes walk
 * positions c, c + W, c + 2W, ...: positions wW .. wW + W - 1 run side by side, wave w. */
typedef enum GgOrder {
    GG_ORDER_EXPERT, /* position p is entry p: experts in index order, one after the other */
    GG_ORDER_FOLDED  /* experts sorted by rows, most first; the list folded in two: in every
                        wave half the positions take entries from its front (the largest
                        experts: tiles that reuse a B panel from L2, bound by the tensor cores)
                        and half from its back (the smallest: tiles that read their panel from
                        DRAM once), so both kinds run side by side all through the launch
                        instead of in two phases, one leaving DRAM idle and the other the MMAs */
} GgOrder;

/* A schedule's run-time parameters, beside its tables (row_start: the clamped row offsets,
 * experts + 1 of them; expert_at: the expert at each place of the list, NULL for index order;
 * entry_start: the exclusive prefix sum of entries over the list's experts, its last element
 * the total). */
typedef struct GgSchedParams {
    int experts;
    int block_n;       /* columns per tile */
    int adaptive;      /* nonzero: a remainder of 1..tile_m / 2 rows gets a half-height tile */
    GgPairing pairing;
    GgOrder order;
    int walkers;       /* CTAs (clusters) walking the list side by side: a wave's positions */
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
    return (gg_sched_row_tiles(m, tile_m) + row_group - 1) / row_group * col_groups;
}

/* GG_ORDER_FOLDED's sort: expert e's place when experts are sorted by rows, most first, ties
 * by index (a permutation of 0 .. experts - 1). One expert per thread on the device. */
GG_HD int gg_sched_place(const int *row_start, int experts, int e) {
    const int m = gg_sched_expert_rows(row_start, e);
    int place = 0;
    for (int j = 0; j < experts; ++j) {
        const int mj = gg_sched_expert_rows(row_start, j);
        place += mj > m || (mj == m && j < e);
    }
    return place;
}

/* The list entry at walk position pos (0 <= pos < total). GG_ORDER_FOLDED: in wave w, offset
 * o takes from the front when o + w is even, so every CTA alternates between the two ends
 * (with an odd wave width the waves alternate between one more front or one more back).
 * Front positions take entries 0, 1, 2, ... in walk order; back ones total - 1, total - 2, ...
 * A bijection: the fronts before pos, counted in closed form, is its front rank. */
GG_HD int gg_sched_walk(const GgSchedParams *p, int pos, int total) {
    if (p->order != GG_ORDER_FOLDED || p->walkers <= 0) return pos;
    const int wave = pos / p->walkers, o = pos % p->walkers;
    /* Fronts in waves before this one: ceil(walkers / 2) in even waves, floor in odd ones. */
    const long earlier = ((long)wave * p->walkers + 1) / 2;
    const int front_rank = (int)earlier + (o + 1 - (wave & 1)) / 2;
    if (((o + wave) & 1) == 0) return front_rank;
    return total - 1 - (pos - front_rank);
}

/* The place in the list (an expert, unless the list is sorted) that owns entry `index`: the
 * largest e with entry_start[e] <= index, where entry_start is the exclusive prefix sum of
 * entries over `experts` places (entry_start[experts] is the total; 0 <= index < total). That
 * place has at least one entry. */
GG_HD int gg_sched_expert(const int *entry_start, int experts, int index) {
    int lo = 0, hi = experts;  /* entry_start[lo] <= index < entry_start[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (entry_start[mid] <= index) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Tile `rank` of entry `index` (0 <= index < entry_start[p->experts]). */
GG_HD GgSchedTile gg_sched_at(const int *row_start, const int *expert_at, const int *entry_start,
                              const GgSchedParams *p, int index, int rank, int tile_m) {
    const int place = gg_sched_expert(entry_start, p->experts, index);
    const int e = expert_at ? expert_at[place] : place;
    const int m = gg_sched_expert_rows(row_start, e);
    int full, half; /* row tiles of full height, of half height (0 or 1) */
    const int mt_count = gg_row_tiles(m, tile_m, &full, &half);
    const int local = index - entry_start[place];
    int mt, nb; /* row tile, column block */
    if (p->pairing == GG_PAIR_ROWS) {
        const int pair_rows = (mt_count + 1) / 2;
        mt = 2 * (local % pair_rows) + rank;
        nb = local / pair_rows;
    } else {
        mt = local % mt_count;
        nb = p->pairing == GG_PAIR_COLS ? 2 * (local / mt_count) + rank : local / mt_count;
    }
    GgSchedTile t;
    t.expert = e;
    t.row0 = row_start[e] + tile_m * mt; /* a half-height tile comes last: it starts at tile_m mt */
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

#endif
