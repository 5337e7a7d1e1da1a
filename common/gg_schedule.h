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

/* A schedule's run-time parameters, beside its two tables (row_start: the clamped row offsets,
 * experts + 1 of them; entry_start: the exclusive prefix sum of entries per expert, its last
 * element the total). */
typedef struct GgSchedParams {
    int experts;
    int block_n;       /* columns per tile */
    int adaptive;      /* nonzero: a remainder of 1..tile_m / 2 rows gets a half-height tile */
    GgPairing pairing;
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

/* The expert that owns entry `index`: the largest e with entry_start[e] <= index, where
 * entry_start is the exclusive prefix sum of entries over `experts` experts (entry_start[experts]
 * is the total; 0 <= index < total). That expert has at least one entry. */
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
GG_HD GgSchedTile gg_sched_at(const int *row_start, const int *entry_start, const GgSchedParams *p,
                              int index, int rank, int tile_m) {
    const int e = gg_sched_expert(entry_start, p->experts, index);
    const int m = gg_sched_expert_rows(row_start, e);
    int full, half; /* row tiles of full height, of half height (0 or 1) */
    const int mt_count = gg_row_tiles(m, tile_m, &full, &half);
    const int local = index - entry_start[e];
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
