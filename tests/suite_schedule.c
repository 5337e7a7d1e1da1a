/* CPU checks of the device tile schedule's arithmetic (common/gg_schedule.h): the functions
 * gg::TileSchedule calls on the GPU, here called from C. The block-wide build (a warp scan in
 * gg_schedule.cuh) is replaced by a plain prefix sum over the same per-expert entry counts; a
 * persistent grid is played by walking entries c, c + clusters, ... for every cluster c.
 *
 * Configurations checked are those the kernels build: k3_wgmma (128-row tiles, adaptive or
 * not, unpaired or paired by rows or columns) and k3_tcgen05 (256-row pair tiles, one entry per
 * CTA pair, not adaptive). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gg_problem.h"
#include "gg_schedule.h"

enum { MAX_EXPERTS = 256 };

/* The table gg::TileSchedule holds in shared memory. */
typedef struct Sched {
    int row_start[MAX_EXPERTS + 1];
    int entry_start[MAX_EXPERTS + 1];
    GgSchedParams params;
    int tile_m;
} Sched;

/* What TileSchedule::build computes, sequentially. */
static void build(Sched *s, const int *offsets, int experts, int tokens, int n, int block_n,
                  int tile_m, int adaptive, GgPairing pair) {
    const int row_group = gg_sched_row_group(pair);
    const int col_groups = gg_sched_col_groups((n + block_n - 1) / block_n, pair);
    s->params.experts = experts;
    s->params.block_n = block_n;
    s->params.adaptive = adaptive;
    s->params.pairing = pair;
    s->tile_m = tile_m;
    for (int e = 0; e <= experts; ++e) s->row_start[e] = gg_sched_clamp(offsets[e], tokens);
    s->entry_start[0] = 0;
    for (int e = 0; e < experts; ++e)
        s->entry_start[e + 1] =
            s->entry_start[e] + gg_sched_entries(gg_sched_expert_rows(s->row_start, e), tile_m,
                                                 row_group, col_groups);
}

static int total(const Sched *s) { return s->entry_start[s->params.experts]; }

static GgSchedTile at(const Sched *s, int index, int rank) {
    return gg_sched_at(s->row_start, s->entry_start, &s->params, index, rank, s->tile_m);
}

/* xorshift32: reproducible random cases without touching the C library's generator. */
static unsigned next(unsigned *x) {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* A random row split with the cases that break schedules: empty experts, 1-row experts,
 * remainders either side of tile_m / 2, everything in one expert. */
static int random_split(unsigned *x, int *m) {
    const int experts = 1 + (int)(next(x) % MAX_EXPERTS);
    const int style = (int)(next(x) % 4);
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
    unsigned x = 0x9e3779b9u;
    int m[MAX_EXPERTS];
    const int widths[] = {128, 192, 256};
    for (int round = 0; round < 100; ++round) {
        const int experts = random_split(&x, m);
        const int n = 8 * (1 + (int)(next(&x) % 336));  /* 8 .. 2688 */
        const int clusters = 1 + (int)(next(&x) % 132);
        const int block_n = widths[next(&x) % 3];
        for (int adaptive = 0; adaptive <= 1; ++adaptive)
            for (int pair = GG_PAIR_NONE; pair <= GG_PAIR_COLS; ++pair)
                check_schedule(m, experts, n, block_n, 128, adaptive, (GgPairing)pair, clusters);
        check_schedule(m, experts, n, 256, 256, 0, GG_PAIR_NONE, clusters);  /* k3_tcgen05 */
    }
}
END_TEST

/* Expert-major; inside an expert, column block by column block, the row tiles of one column
 * block adjacent (they read the same B_e panel). */
START_TEST(test_order) {
    unsigned x = 12345u;
    int m[MAX_EXPERTS], offsets[MAX_EXPERTS + 1];
    for (int round = 0; round < 100; ++round) {
        const int experts = random_split(&x, m);
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
    unsigned x = 777u;
    int m[MAX_EXPERTS];
    for (int round = 0; round < 100; ++round) {
        const int experts = random_split(&x, m);
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

Suite *schedule_suite(void) {
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("tiles");
    tcase_add_test(tc, test_every_tile_exactly_once);
    tcase_add_test(tc, test_order);
    tcase_add_test(tc, test_matches_host_model);
    tcase_add_test(tc, test_bad_offsets_stay_in_bounds);
    tcase_add_test(tc, test_hand_worked);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
