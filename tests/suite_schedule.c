/* CPU checks of the device tile schedule's arithmetic (common/gg_schedule.h): the functions
 * gg::TileSchedule calls on the GPU, here called from C. The block-wide build (a warp scan in
 * gg_schedule.cuh) is replaced by a plain prefix sum over the same per-group entry counts; a
 * persistent grid is played by walking entries c, c + clusters, ... for every cluster c.
 *
 * Configurations checked are those the kernels build: k3_wgmma (128-row tiles, adaptive or
 * not, unpaired or paired by rows or columns) and k3_tcgen05 (256-row pair tiles, one entry per
 * CTA pair, not adaptive). The table is the kernels' two-level index (at most 256 groups); the
 * flat one-level table of one entry per expert is the reference it must agree with. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gg_problem.h"
#include "gg_schedule.h"

enum { MAX_EXPERTS = GG_SCHED_MAX_EXPERTS };  /* 4096, k3_wgmma's and the harness's limit */

/* The table gg::TileSchedule holds in shared memory (groups + 1 entries, at most 257), or the
 * flat reference's (experts + 1), and the row offsets it was built from. */
typedef struct Sched {
    int row_start[MAX_EXPERTS + 1];
    int entry_start[MAX_EXPERTS + 1];
    const int *row_offsets;  /* the caller's; read again by a lookup when a group spans experts */
    GgSchedParams params;
    int tile_m;
} Sched;

/* What TileSchedule::build computes, sequentially: a table of at most 256 groups. */
static void build(Sched *s, const int *offsets, int experts, int tokens, int n, int block_n,
                  int tile_m, int adaptive, GgPairing pair) {
    s->params = gg_sched_params(experts, tokens, n, block_n, adaptive, pair, GG_SCHED_MAX_GROUPS);
    s->row_offsets = offsets;
    s->tile_m = tile_m;
    const GgSchedParams *p = &s->params;
    ck_assert_int_le(p->groups, GG_SCHED_MAX_GROUPS);
    ck_assert_int_le(p->span, GG_SCHED_MAX_SPAN);
    for (int g = 0; g <= p->groups; ++g) s->row_start[g] = gg_sched_group_row(offsets, p, g);
    s->entry_start[0] = 0;
    for (int g = 0; g < p->groups; ++g)
        s->entry_start[g + 1] =
            s->entry_start[g] + gg_sched_group_entries(offsets, p, g, tile_m, GG_SCHED_MAX_SPAN);
}

/* The reference: a one-level table, one entry per expert (the kernels' table up to 256 experts,
 * built here without the group functions). */
static void build_flat(Sched *s, const int *offsets, int experts, int tokens, int n, int block_n,
                       int tile_m, int adaptive, GgPairing pair) {
    s->params = gg_sched_params(experts, tokens, n, block_n, adaptive, pair, MAX_EXPERTS);
    s->row_offsets = NULL;  /* never read with one expert per entry */
    s->tile_m = tile_m;
    ck_assert_int_eq(s->params.span, 1);
    ck_assert_int_eq(s->params.groups, experts);
    const int row_group = gg_sched_row_group(pair);
    for (int e = 0; e <= experts; ++e) s->row_start[e] = gg_sched_clamp(offsets[e], tokens);
    s->entry_start[0] = 0;
    for (int e = 0; e < experts; ++e)
        s->entry_start[e + 1] =
            s->entry_start[e] + gg_sched_entries(gg_sched_expert_rows(s->row_start, e), tile_m,
                                                 row_group, s->params.col_groups);
}

static int total(const Sched *s) { return s->entry_start[s->params.groups]; }

static GgSchedTile at(const Sched *s, int index, int rank) {
    return gg_sched_at(s->row_start, s->entry_start, s->row_offsets, &s->params, index, rank,
                       s->tile_m, GG_SCHED_MAX_SPAN);
}

/* Both tables hand out the same tile for every entry and rank. */
static void check_same_tiles(const Sched *s, const Sched *flat) {
    ck_assert_int_eq(total(s), total(flat));
    const int ranks = s->params.pairing == GG_PAIR_NONE ? 1 : 2;
    for (int t = 0; t < total(s); ++t)
        for (int r = 0; r < ranks; ++r) {
            const GgSchedTile a = at(s, t, r), b = at(flat, t, r);
            if (a.expert != b.expert || a.row0 != b.row0 || a.rows != b.rows ||
                a.height != b.height || a.col0 != b.col0) /* asserting only then: ~1M tiles */
                ck_abort_msg("experts %d span %d, entry %d rank %d: expert %d row0 %d rows %d "
                             "height %d col0 %d, the flat table says %d %d %d %d %d",
                             s->params.experts, s->params.span, t, r, a.expert, a.row0, a.rows,
                             a.height, a.col0, b.expert, b.row0, b.rows, b.height, b.col0);
        }
}

/* xorshift32: reproducible random cases without touching the C library's generator. */
static unsigned next(unsigned *x) {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* A random row split with the cases that break schedules: empty experts, 1-row experts,
 * remainders either side of tile_m / 2, everything in one expert; 1..most experts. Above 256
 * experts (groups of several) only the styles of few rows, 1 and 3: the checks below assert per
 * tile, and their time is in the tile count. */
static int random_split(unsigned *x, int *m, int most) {
    const int experts = 1 + (int)(next(x) % (unsigned)most);
    int style = (int)(next(x) % 4);
    if (experts > GG_SCHED_MAX_GROUPS) style |= 1;
    for (int e = 0; e < experts; ++e) {
        const unsigned r = next(x);
        if (style == 0) m[e] = (int)(r % 600);                               /* anything */
        else if (style == 1) m[e] = (int)(r % 3);                            /* 0, 1, 2 rows */
        else if (style == 2) m[e] = 128 * (int)(r % 4) + 63 + (int)(r % 3);  /* 63..65 past */
        else m[e] = 0;
    }
    if (style == 3) m[next(x) % experts] = 1 + (int)(next(x) % 5000);  /* one expert has all */
    return experts;
}

/* The random tests' rounds: 100 of 1..256 experts, then 6 of 1..4096 from a second stream. */
enum { ROUNDS = 100, WIDE_ROUNDS = 6 };
static int round_split(unsigned *x, unsigned *wide, int round, int *m) {
    return round < ROUNDS ? random_split(x, m, GG_SCHED_MAX_GROUPS) : random_split(wide, m, MAX_EXPERTS);
}

/* Play a persistent grid over the schedule and check every tile it hands out:
 *  - a working tile lies inside its expert's rows and inside [0, n) at its first column, its
 *    height is tile_m, or tile_m / 2 for an adaptive remainder of 1..tile_m / 2 rows;
 *  - every (expert, row tile, column block) is handed out exactly once, whatever the grid;
 *  - the two tiles of a pair entry share what their CTAs multicast: (expert, col0) for rows,
 *    (expert, row0, rows, height) for columns;
 *  - the only tiles without work are the idle halves of pairs at an odd count. */
static void check_schedule(const int *m, int experts, int n, int block_n, int tile_m,
                           int adaptive, GgPairing pair, int clusters) {
    int offsets[MAX_EXPERTS + 1];
    offsets[0] = 0;
    for (int e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + m[e];
    const int tokens = offsets[experts];
    Sched s;
    build(&s, offsets, experts, tokens, n, block_n, tile_m, adaptive, pair);

    const int nb = (n + block_n - 1) / block_n;
    int tile_base[MAX_EXPERTS + 1];  /* where expert e's (row tile, column block) counters start */
    tile_base[0] = 0;
    for (int e = 0; e < experts; ++e)
        tile_base[e + 1] = tile_base[e] + gg_sched_row_tiles(m[e], tile_m) * nb;
    int *seen = calloc((size_t)tile_base[experts] + 1, sizeof *seen);
    ck_assert_ptr_nonnull(seen);

    const int ranks = pair == GG_PAIR_NONE ? 1 : 2;
    for (int c = 0; c < clusters; ++c)
        for (int t = c; t < total(&s); t += clusters) {
            GgSchedTile tile[2];
            for (int r = 0; r < ranks; ++r) tile[r] = at(&s, t, r);
            for (int r = 0; r < ranks; ++r) {
                const GgSchedTile g = tile[r];
                ck_assert_int_ge(g.expert, 0);
                ck_assert_int_lt(g.expert, experts);
                ck_assert_int_eq(g.col0 % block_n, 0);
                if (g.height == 0) {  /* idle half of a row pair: odd row-tile count only */
                    ck_assert_int_eq(pair, GG_PAIR_ROWS);
                    ck_assert_int_eq(r, 1);
                    ck_assert_int_eq(g.rows, 0);
                    ck_assert_int_eq(gg_sched_row_tiles(m[g.expert], tile_m) % 2, 1);
                    continue;
                }
                if (g.col0 >= n) {  /* idle half of a column pair: odd column-block count only */
                    ck_assert_int_eq(pair, GG_PAIR_COLS);
                    ck_assert_int_eq(r, 1);
                    ck_assert_int_eq(nb % 2, 1);
                    ck_assert_int_eq(g.col0, nb * block_n);
                    continue;
                }
                const int e = g.expert, local_row = g.row0 - offsets[e];
                ck_assert_int_ge(g.rows, 1);
                ck_assert_int_le(g.rows, g.height);
                ck_assert_int_eq(local_row % tile_m, 0);
                ck_assert_int_le(g.row0 + g.rows, offsets[e + 1]);  /* never crosses an expert */
                ck_assert_int_eq(g.rows, m[e] - local_row < tile_m ? m[e] - local_row : tile_m);
                const int rest = m[e] % tile_m;
                const int half = adaptive && local_row + tile_m > m[e] && rest <= tile_m / 2;
                ck_assert_int_eq(g.height, half ? tile_m / 2 : tile_m);
                const int mt = local_row / tile_m, cb = g.col0 / block_n;
                seen[tile_base[e] + mt * nb + cb] += 1;
            }
            if (pair == GG_PAIR_ROWS) {
                ck_assert_int_eq(tile[0].expert, tile[1].expert);
                ck_assert_int_eq(tile[0].col0, tile[1].col0);
                ck_assert_int_eq(tile[1].row0, tile[0].row0 + tile_m);
            } else if (pair == GG_PAIR_COLS) {
                ck_assert_int_eq(tile[0].expert, tile[1].expert);
                ck_assert_int_eq(tile[0].row0, tile[1].row0);
                ck_assert_int_eq(tile[0].rows, tile[1].rows);
                ck_assert_int_eq(tile[0].height, tile[1].height);
                ck_assert_int_eq(tile[1].col0, tile[0].col0 + block_n);
            }
        }
    for (int i = 0; i < tile_base[experts]; ++i) ck_assert_int_eq(seen[i], 1);
    free(seen);
}

/* Random splits, shapes and grids, every configuration the kernels build. */
START_TEST(test_every_tile_exactly_once) {
    unsigned x = 0x9e3779b9u, wide = ~0x9e3779b9u;
    int m[MAX_EXPERTS];
    const int widths[] = {128, 192, 256};
    for (int round = 0; round < ROUNDS + WIDE_ROUNDS; ++round) {
        const int experts = round_split(&x, &wide, round, m);
        const int n = 8 * (1 + (int)(next(&x) % 336));  /* 8 .. 2688 */
        const int clusters = 1 + (int)(next(&x) % 132);
        const int block_n = widths[next(&x) % 3];
        for (int adaptive = 0; adaptive <= 1; ++adaptive)
            for (int pair = GG_PAIR_NONE; pair <= GG_PAIR_COLS; ++pair)
                check_schedule(m, experts, n, block_n, 128, adaptive, (GgPairing)pair, clusters);
        check_schedule(m, experts, n, 256, 256, 0, GG_PAIR_NONE, clusters);  /* k3_tcgen05 */
        check_schedule(m, experts, n, 128, 256, 1, GG_PAIR_NONE, clusters);  /* k4's cp_async_m256 */
    }
}
END_TEST

/* Expert-major; inside an expert, column block by column block, the row tiles of one column
 * block adjacent (they read the same B_e panel). */
START_TEST(test_order) {
    unsigned x = 12345u, wide = ~12345u;
    int m[MAX_EXPERTS], offsets[MAX_EXPERTS + 1];
    for (int round = 0; round < ROUNDS + WIDE_ROUNDS; ++round) {
        const int experts = round_split(&x, &wide, round, m);
        offsets[0] = 0;
        for (int e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + m[e];
        Sched s;
        build(&s, offsets, experts, offsets[experts], 2688, 192, 128, 1, GG_PAIR_NONE);
        long prev = -1;
        for (int t = 0; t < total(&s); ++t) {
            const GgSchedTile g = at(&s, t, 0);
            const long row_tile = (g.row0 - offsets[g.expert]) / 128;
            const long key = ((long)g.expert * 4096 + g.col0 / 192) * 4096 + row_tile;
            ck_assert_int_gt(key, prev);
            prev = key;
        }
    }
}
END_TEST

/* The device schedule and the host model (common/problem.c, used for eta and the tile counts
 * in the tables) agree: same number of tiles and the same rows computed, adaptive or not. */
START_TEST(test_matches_host_model) {
    unsigned x = 777u, wide = ~777u;
    int m[MAX_EXPERTS];
    for (int round = 0; round < ROUNDS + WIDE_ROUNDS; ++round) {
        const int experts = round_split(&x, &wide, round, m);
        GgProblem p;
        ck_assert_int_eq(gg_problem_from_counts(&p, m, experts, 64, 2688), 0);
        for (int adaptive = 0; adaptive <= 1; ++adaptive) {
            Sched s;
            build(&s, p.offsets, experts, p.tokens, p.n, 192, 128, adaptive, GG_PAIR_NONE);
            const int bm = adaptive ? 0 : 128;
            ck_assert_int_eq(total(&s), gg_tile_count(&p, bm, 192));
            long rows = 0;
            for (int t = 0; t < total(&s); ++t) {
                const GgSchedTile g = at(&s, t, 0);
                if (g.col0 == 0) rows += g.height;
            }
            ck_assert_int_eq(rows, gg_scheduled_rows(&p, bm));
        }
        gg_problem_free(&p);
    }
}
END_TEST

/* A bad offset table (negative, past tokens, decreasing) gives wrong results at worst, never
 * a row outside [0, tokens). (The idle half of a row pair has no rows; its row0 is not read.) */
START_TEST(test_bad_offsets_stay_in_bounds) {
    const int tokens = 1000;
    const int offsets[] = {-50, 300, 200, 5000, 900, 1000};  /* 5 experts */
    for (int pair = GG_PAIR_NONE; pair <= GG_PAIR_COLS; ++pair) {
        Sched s;
        build(&s, offsets, 5, tokens, 256, 128, 128, 1, (GgPairing)pair);
        for (int t = 0; t < total(&s); ++t)
            for (int r = 0; r < (pair == GG_PAIR_NONE ? 1 : 2); ++r) {
                const GgSchedTile g = at(&s, t, r);
                if (g.height == 0) continue;
                ck_assert_int_ge(g.row0, 0);
                ck_assert_int_le(g.row0 + g.rows, tokens);
            }
    }
    /* The same with groups of 4 experts (1000 of them): the walk clamps as the flat table. */
    static int bad[1001];
    static Sched s, flat;
    unsigned x = 99u;
    for (int e = 0; e <= 1000; ++e) bad[e] = (int)(next(&x) % 1400) - 200;
    for (int pair = GG_PAIR_NONE; pair <= GG_PAIR_COLS; ++pair) {
        build(&s, bad, 1000, tokens, 256, 128, 128, 1, (GgPairing)pair);
        build_flat(&flat, bad, 1000, tokens, 256, 128, 128, 1, (GgPairing)pair);
        check_same_tiles(&s, &flat);
        for (int t = 0; t < total(&s); ++t)
            for (int r = 0; r < (pair == GG_PAIR_NONE ? 1 : 2); ++r) {
                const GgSchedTile g = at(&s, t, r);
                if (g.height == 0) continue;
                ck_assert_int_ge(g.row0, 0);
                ck_assert_int_le(g.row0 + g.rows, tokens);
            }
    }
}
END_TEST

/* Row splits over `experts` experts that the index must not care about: 0 random (any of
 * random_split's styles), 1 and 2 power-law skews 1.2 and 3 with every third expert emptied, 3
 * every row in one expert, 4 rows only in the first and the last expert. */
static void split_of_kind(unsigned *x, int kind, int experts, int *m) {
    const int tokens = 1 + (int)(next(x) % 40000);
    if (kind == 0) {
        const int style = (int)(next(x) % 3);
        for (int e = 0; e < experts; ++e) {
            const unsigned r = next(x);
            m[e] = style == 0 ? (int)(r % 600) : style == 1 ? (int)(r % 3) : 128 * (int)(r % 4) + 63 + (int)(r % 3);
        }
    } else if (kind == 1 || kind == 2) {
        gg_split_rows(tokens, experts, kind == 1 ? 1.2 : 3.0, m);
        for (int e = 2; e < experts; e += 3) m[e] = 0;
    } else {
        for (int e = 0; e < experts; ++e) m[e] = 0;
        if (kind == 3) m[next(x) % (unsigned)experts] = tokens;
        else m[0] = m[experts - 1] = tokens / 2 + 1;
    }
}

/* The two-level index against the flat table, around its boundaries: one expert per group up
 * to 256 experts, then spans of 2 (257, 384, 512), 4 (1000) and 16 (4096), the last group
 * shorter where the span does not divide the count; every configuration the kernels build. */
START_TEST(test_two_level_matches_flat) {
    static const int counts[] = {1, 7, 256, 257, 384, 512, 1000, 4096};
    static const int spans[] = {1, 1, 1, 2, 2, 2, 4, 16};
    static int m[MAX_EXPERTS], offsets[MAX_EXPERTS + 1];
    static Sched s, flat;
    const int widths[] = {128, 192, 256};
    unsigned x = 4242u;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
        for (int kind = 0; kind < 5; ++kind) {
            const int experts = counts[c];
            split_of_kind(&x, kind, experts, m);
            offsets[0] = 0;
            for (int e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + m[e];
            const int tokens = offsets[experts];
            const int n = 8 * (1 + (int)(next(&x) % 336));
            const int block_n = widths[next(&x) % 3];
            for (int adaptive = 0; adaptive <= 1; ++adaptive)
                for (int pair = GG_PAIR_NONE; pair <= GG_PAIR_COLS; ++pair) {
                    build(&s, offsets, experts, tokens, n, block_n, 128, adaptive, (GgPairing)pair);
                    ck_assert_int_eq(s.params.span, spans[c]);
                    build_flat(&flat, offsets, experts, tokens, n, block_n, 128, adaptive,
                               (GgPairing)pair);
                    check_same_tiles(&s, &flat);
                }
            build(&s, offsets, experts, tokens, n, 256, 256, 0, GG_PAIR_NONE);  /* k3_tcgen05 */
            build_flat(&flat, offsets, experts, tokens, n, 256, 256, 0, GG_PAIR_NONE);
            check_same_tiles(&s, &flat);
        }
}
END_TEST

/* Worked by hand: m = {100, 28, 0, 300}, n = 256, BLOCK_N = 128, adaptive. Expert 0: one
 * 128-row tile (100 valid); expert 1: one 64-row tile (28 valid); expert 2: none; expert 3:
 * 128 + 128 + one 64-row tile for the remaining 44. Two column blocks each: 10 tiles. */
START_TEST(test_hand_worked) {
    const int offsets[] = {0, 100, 128, 128, 428};
    Sched s;
    build(&s, offsets, 4, 428, 256, 128, 128, 1, GG_PAIR_NONE);
    ck_assert_int_eq(total(&s), 10);
    const int want[10][5] = {/* expert, row0, rows, height, col0 */
                             {0, 0, 100, 128, 0},   {0, 0, 100, 128, 128}, {1, 100, 28, 64, 0},
                             {1, 100, 28, 64, 128}, {3, 128, 128, 128, 0}, {3, 256, 128, 128, 0},
                             {3, 384, 44, 64, 0},   {3, 128, 128, 128, 128},
                             {3, 256, 128, 128, 128}, {3, 384, 44, 64, 128}};
    for (int t = 0; t < 10; ++t) {
        const GgSchedTile g = at(&s, t, 0);
        ck_assert_int_eq(g.expert, want[t][0]);
        ck_assert_int_eq(g.row0, want[t][1]);
        ck_assert_int_eq(g.rows, want[t][2]);
        ck_assert_int_eq(g.height, want[t][3]);
        ck_assert_int_eq(g.col0, want[t][4]);
    }
    /* The same rows as k3_tcgen05 pair tiles (256 rows, BLOCK_N 256): 1 + 1 + 0 + 2 tiles. */
    build(&s, offsets, 4, 428, 256, 256, 256, 0, GG_PAIR_NONE);
    ck_assert_int_eq(total(&s), 4);
    const GgSchedTile last = at(&s, 3, 0);
    ck_assert_int_eq(last.row0, 384);
    ck_assert_int_eq(last.rows, 44);
    ck_assert_int_eq(last.height, 256);
}
END_TEST

/* The split last wave (gg_tail_*, k5_dgrad_tail.cu): every tile's k-blocks covered exactly once,
 * by one whole item or by its pieces in order; the pieces fit in one wave; the worked case is the
 * Mixtral-like backward's dgrad (1088 tiles of 224 k-blocks on 132 SMs: 32 tail tiles, 4 pieces). */
START_TEST(test_tail_split) {
    ck_assert_int_eq(gg_tail_splits(1088, 132, 224), 4);
    ck_assert_int_eq(gg_tail_items(1088, 132, 4), 1056 + 32 * 4);
    ck_assert_int_eq(gg_tail_splits(1056, 132, 224), 1); /* whole waves */
    ck_assert_int_eq(gg_tail_splits(1100, 132, 224), 3); /* 44 tail tiles: 132 / 44 pieces each */
    ck_assert_int_eq(gg_tail_splits(1056 + 67, 132, 224), 1); /* more than half a wave */
    ck_assert_int_eq(gg_tail_splits(1056 + 60, 132, 224), 2);
    ck_assert_int_eq(gg_tail_splits(1088, 132, 15), 1);  /* pieces of fewer than 8 k-blocks */
    ck_assert_int_eq(gg_tail_splits(1088, 132, 16), 2);
    ck_assert_int_eq(gg_tail_splits(3, 132, 224), 4);   /* one short wave: split-k */
    ck_assert_int_eq(gg_tail_splits(0, 132, 224), 1);
    const GgTailItem piece = gg_tail_item(1088, 132, 4, 224, 1056 + 4 * 5 + 3);
    ck_assert_int_eq(piece.tile, 1056 + 5);
    ck_assert_int_eq(piece.piece, 3);
    ck_assert_int_eq(piece.kb0, 168);
    ck_assert_int_eq(piece.kb1, 224);
    ck_assert_int_eq(piece.slot, 23);
    for (int tiles = 1; tiles <= 600; tiles += 7)
        for (int ctas = 1; ctas <= 140; ctas += 13)
            for (int kb = 1; kb <= 70; kb += 23) {
                const int splits = gg_tail_splits(tiles, ctas, kb), items = gg_tail_items(tiles, ctas, splits);
                ck_assert_int_le(splits, GG_TAIL_MAX_SPLITS);
                ck_assert(splits == 1 || kb / splits >= GG_TAIL_MIN_KBLOCKS);
                ck_assert_int_le(items - gg_tail_full(tiles, ctas, splits), ctas); /* the pieces: one wave */
                int next = 0, expect_kb = 0;                                      /* items in list order */
                for (int w = 0; w < items; ++w) {
                    const GgTailItem it = gg_tail_item(tiles, ctas, splits, kb, w);
                    ck_assert_int_eq(it.tile, next);
                    ck_assert_int_eq(it.kb0, expect_kb);
                    ck_assert_int_lt(it.kb0, it.kb1);
                    if (it.pieces > 1) /* slot q splits + p, q the tail tile's index */
                        ck_assert_int_eq(it.slot, (it.tile - gg_tail_full(tiles, ctas, splits)) * splits + it.piece);
                    expect_kb = it.kb1;
                    if (it.kb1 == kb) ++next, expect_kb = 0;
                }
                ck_assert_int_eq(next, tiles);
            }
}
END_TEST

Suite *schedule_suite(void) {
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("tiles");
    tcase_add_test(tc, test_every_tile_exactly_once);
    tcase_add_test(tc, test_order);
    tcase_add_test(tc, test_matches_host_model);
    tcase_add_test(tc, test_bad_offsets_stay_in_bounds);
    tcase_add_test(tc, test_hand_worked);
    tcase_add_test(tc, test_two_level_matches_flat);
    tcase_add_test(tc, test_tail_split);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
