/* k5_backward on the CPU: the wgrad work list (common/gg_wgrad.h, the functions the kernel
 * calls), the ticketed fix-up's arithmetic, the passes' shapes and fp64 references. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"
#include "gg_problem.h"
#include "gg_wgrad.h"

#define H100_L2 (50L << 20) /* results/h100-80gb-hbm3/backward.csv's l2_bytes */

/* Every item of a split: each (expert, tile) has splits items, split 0.. in order, covering the
 * expert's rows exactly, in chunks of at most 64 chunk rows; slots are distinct, inside the
 * bound from sizes; the ticket is split 0's slot; empty experts have one item of no rows; the
 * tiles of each expert, in whichever order gg_wgrad_k_first gives it, cover its k x n once. */
static void check_list(const int *m, int experts, int k, int n, int ctas) {
    GgProblem pr;
    ck_assert_int_eq(gg_problem_from_counts(&pr, m, experts, k, n), 0);
    const GgWgradParams p = gg_wgrad_params(experts, pr.tokens, k, n, 128, 192, ctas, H100_L2);
    ck_assert_int_ge(p.chunk, GG_WGRAD_MIN_CHUNK);
    int *item_start = malloc(sizeof(int) * (size_t)(experts + 1)), *slot_start = malloc(sizeof(int) * (size_t)(experts + 1));
    gg_wgrad_tables(&p, m, item_start, slot_start);
    const int items = item_start[experts], slots = slot_start[experts];
    ck_assert_int_le(slots, gg_wgrad_max_slots(&p));
    /* The launch's grid: at most the SMs, and its bound (any SM count) is at least the items. */
    ck_assert_int_le(gg_wgrad_grid(&p, ctas), ctas);
    ck_assert_int_ge(gg_wgrad_grid(&p, 1 << 30), items);
    char *slot_seen = calloc((size_t)slots + 1, 1), *covered = calloc((size_t)experts * p.tiles, 1);
    int *next_row = malloc(sizeof(int) * (size_t)experts * p.tiles);
    for (int e = 0; e < experts; ++e)
        for (int t = 0; t < p.tiles; ++t) next_row[e * p.tiles + t] = pr.offsets[e];
    int prev_expert = 0, prev_tile = -1, prev_split = -1;
    for (int i = 0; i < items; ++i) {
        const GgWgradItem it = gg_wgrad_at(&p, item_start, slot_start, pr.offsets, i);
        ck_assert_int_ge(it.expert, prev_expert); /* expert-major */
        if (it.expert == prev_expert && it.tile == prev_tile) ck_assert_int_eq(it.split, prev_split + 1);
        else ck_assert_int_eq(it.split, 0);
        prev_expert = it.expert;
        prev_tile = it.tile;
        prev_split = it.split;
        ck_assert_int_eq(it.splits, gg_wgrad_splits(&p, m[it.expert]));
        ck_assert(it.m0 < k && it.col0 < n && it.m0 % 128 == 0 && it.col0 % 192 == 0);
        ck_assert_int_eq(it.row0, next_row[it.expert * p.tiles + it.tile]);
        ck_assert_int_le(it.rows, GG_WGRAD_BLOCK_R * p.chunk);
        ck_assert(it.rows > 0 || m[it.expert] == 0);
        next_row[it.expert * p.tiles + it.tile] += it.rows;
        if (it.split == 0) { /* its block pair, once per expert */
            char *c = &covered[(long)it.expert * p.tiles + it.m0 / 128 * p.n_blocks + it.col0 / 192];
            ck_assert(!*c);
            *c = 1;
        }
        if (it.splits > 1) {
            ck_assert(it.slot >= 0 && it.slot < slots && !slot_seen[it.slot]);
            slot_seen[it.slot] = 1;
            ck_assert_int_eq(it.ticket, it.slot - it.split);
            /* whole blocks but in the last split; the splits of a tile within one block of each
             * other: floor(B / splits) or ceil of the expert's B blocks */
            const int blocks = gg_wgrad_cdiv(m[it.expert], GG_WGRAD_BLOCK_R);
            if (it.split < it.splits - 1) ck_assert_int_eq(it.rows % GG_WGRAD_BLOCK_R, 0);
            ck_assert_int_ge(gg_wgrad_cdiv(it.rows, GG_WGRAD_BLOCK_R), blocks / it.splits);
            ck_assert_int_le(gg_wgrad_cdiv(it.rows, GG_WGRAD_BLOCK_R), gg_wgrad_cdiv(blocks, it.splits));
        } else {
            ck_assert_int_eq(it.slot, -1);
            ck_assert_int_eq(it.ticket, -1);
        }
    }
    for (int e = 0; e < experts; ++e) /* every tile reduced over all of its expert's rows */
        for (int t = 0; t < p.tiles; ++t) ck_assert_int_eq(next_row[e * p.tiles + t], pr.offsets[e + 1]);
    for (int s = 0; s < slots; ++s) ck_assert(slot_seen[s]);
    for (long c = 0; c < (long)experts * p.tiles; ++c) ck_assert(covered[c]);
    free(covered);
    free(next_row);
    free(slot_seen);
    free(item_start);
    free(slot_start);
    gg_problem_free(&pr);
}

/* The rule priced per expert, as gg_wgrad.h states it: each order's DRAM reads, a sweep costing
 * once if the swept operand, the other's panel and one block of outputs fit in half the L2. */
static int k_first_priced(long l2, int m, int k, int n, int tile_m, int tile_n) {
    const long budget = l2 / 2, a = 2L * m * k, dc = 2L * m * n;
    if (budget <= 0 || m <= 0) return 0;
    const int dc_stays = dc + 2L * m * tile_m + 2L * tile_m * n <= budget;
    const int a_stays = a + 2L * m * tile_n + 2L * k * tile_n <= budget;
    const long k_blocks = (k + tile_m - 1) / tile_m, n_blocks = (n + tile_n - 1) / tile_n;
    return dc + a * (a_stays ? 1 : n_blocks) < a + dc * (dc_stays ? 1 : k_blocks);
}

/* gg_wgrad_k_first's two row bounds and four cases give that pricing for every m, on both GPUs'
 * L2, on shapes wide, narrow and square, a tile wider than k, both tile heights, an L2 too small
 * for any sweep and one so large that the row bounds are clamped. */
START_TEST(test_tile_order_priced) {
    const int shapes[][2] = {{4096, 14336}, {14336, 4096}, {2048, 1536}, {1024, 2688}, {7168, 4096}, {64, 57344}, {3000, 3000}};
    const long l2s[] = {50L << 20, 60L << 20, 1L << 20, 0, 1L << 40};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i)
        for (size_t j = 0; j < sizeof l2s / sizeof *l2s; ++j)
            for (int tile_m = 128; tile_m <= 256; tile_m += 128) {
                const int k = shapes[i][0], n = shapes[i][1];
                const GgWgradParams p = gg_wgrad_params(1, 100, k, n, tile_m, 192, 132, l2s[j]);
                for (int m = 0; m <= 40000; m += m < 2000 ? 1 : 37)
                    ck_assert_msg(gg_wgrad_k_first(&p, m) == k_first_priced(l2s[j], m, k, n, tile_m, 192),
                                  "k %d n %d tile_m %d l2 %ld m %d", k, n, tile_m, l2s[j], m);
            }
}
END_TEST

/* The tiles' order inside an expert (gg_wgrad_k_first) on an H100's L2: k block first where it
 * reads less (dC_e's sweep leaves L2, A_e's does not; or neither stays and k first re-reads
 * less); whichever order, the tiles of an expert cover
 * its k x n once, and neighbouring tiles step along the order's first dimension. */
START_TEST(test_tile_order) {
    const struct { int m, k, n; long l2; int k_first; } cases[] = {
        {2535, 4096, 14336, H100_L2, 1}, /* Mixtral-like dW1, largest expert: dC_e 73 MB, A_e 21 MB */
        {1052, 4096, 14336, H100_L2, 1}, /* dC_e 30 MB: above half the L2 */
        {479, 4096, 14336, H100_L2, 0},  /* dC_e 14 MB: both stay, a tie, n first */
        {256, 1024, 2688, H100_L2, 0},   /* the worklog's 16k, s = 0: every expert fits */
        {20000, 2048, 1536, H100_L2, 0}, /* neither stays: n first re-reads the narrower dC_e */
        {2535, 4096, 14336, 0, 0},       /* L2 unknown: n first */
        {0, 4096, 14336, H100_L2, 0},    /* an empty expert */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        const int k = cases[i].k, n = cases[i].n, m = cases[i].m;
        const GgWgradParams p = gg_wgrad_params(1, m, k, n, 256, 192, 132, cases[i].l2);
        const int k_blocks = gg_wgrad_cdiv(k, 256), k_first = gg_wgrad_k_first(&p, m);
        ck_assert_msg(k_first == cases[i].k_first, "m %d k %d n %d: k first %d", m, k, n, k_first);
        ck_assert_int_eq(p.k_blocks, k_blocks);
        ck_assert_int_eq(p.tiles, k_blocks * p.n_blocks);
        char *seen = calloc((size_t)p.tiles, 1);
        for (int t = 0; t < p.tiles; ++t) {
            const GgWgradItem it = gg_wgrad_item(&p, 0, 0, m, t * gg_wgrad_splits(&p, m), 0);
            ck_assert_int_eq(it.tile, t);
            ck_assert(it.m0 % 256 == 0 && it.m0 < k && it.col0 % 192 == 0 && it.col0 < n);
            const int kb = it.m0 / 256, nb = it.col0 / 192;
            ck_assert(!seen[kb * p.n_blocks + nb]);
            seen[kb * p.n_blocks + nb] = 1;
            ck_assert_int_eq(k_first ? kb : nb, k_first ? t % k_blocks : t % p.n_blocks);
        }
        free(seen);
    }
}
END_TEST

START_TEST(test_list_edge_splits) {
    const int a[] = {0, 1, 130, 0, 64, 1, 257, 3};
    check_list(a, 8, 256, 384, 132);
    const int one[] = {0, 0, 16384, 0}; /* all rows in one expert: split */
    check_list(one, 4, 1024, 2688, 132);
    check_list(one, 4, 64, 8, 132); /* minimum k and n: one tile per expert */
    const int empty[] = {0, 0, 0};
    check_list(empty, 3, 64, 64, 132);
    check_list(one, 4, 200, 200, 1); /* one CTA: a long chunk, no split */
}
END_TEST

/* Power-law splits at the worklog's size, several skews and grids, and random ragged ones. */
START_TEST(test_list_random) {
    int m[1024];
    const double skews[] = {0.0, 0.6, 1.2, 3.0};
    for (int s = 0; s < 4; ++s) {
        gg_split_rows(16384, 64, skews[s], m);
        check_list(m, 64, 1024, 2688, 132);
        check_list(m, 64, 1024, 2688, 16);
    }
    srand(7);
    for (int trial = 0; trial < 40; ++trial) {
        const int experts = 1 + rand() % 1024;
        for (int e = 0; e < experts; ++e) m[e] = rand() % 4 == 0 ? 0 : rand() % (1 + rand() % 9000);
        check_list(m, experts, 8 * (1 + rand() % 80), 8 * (1 + rand() % 80), 1 + rand() % 132);
    }
}
END_TEST

/* The rule: never below the minimum, never longer for more CTAs, and about a quarter of a CTA's
 * share of the blocks. */
START_TEST(test_chunk_rule) {
    int prev = 1 << 30;
    for (int ctas = 1; ctas <= 264; ++ctas) {
        const int c = gg_wgrad_chunk(16384, 64, 112, ctas);
        ck_assert_int_ge(c, GG_WGRAD_MIN_CHUNK);
        ck_assert_int_le(c, prev);
        prev = c;
    }
    /* 112 tiles x (256 + 64) blocks over 132 x 4 items: ceil(35840 / 528) = 68 */
    ck_assert_int_eq(gg_wgrad_chunk(16384, 64, 112, 132), 68);
    ck_assert_int_eq(gg_wgrad_chunk(64, 1, 1, 132), GG_WGRAD_MIN_CHUNK);
    /* Tiles counted GG_WGRAD_CHUNK_TILE_M rows high: a 256-row tile cuts at the 128-row tile's chunk
     * (k5_backward/TRIALS.md, k5-chunk-h100), whatever k's tail. */
    const int ks[] = {64, 128, 1024, 1032, 2880, 7168};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; ++i) {
        const GgWgradParams p128 = gg_wgrad_params(64, 16384, ks[i], 2688, 128, 192, 132, 0);
        const GgWgradParams p256 = gg_wgrad_params(64, 16384, ks[i], 2688, 256, 192, 132, 0);
        ck_assert_int_eq(p256.chunk, p128.chunk);
    }
}
END_TEST

/* The 32-bit arithmetic of the item lookup (gg_wgrad_splits, gg_wgrad_first_block) against the
 * 64-bit formulas they replace, up to the largest int row counts and past 2^16 splits (the
 * 64-bit fallback of gg_wgrad_first_block). */
START_TEST(test_item_arithmetic) {
    const int blocks_list[] = {1, 2, 3, 7, 64, 1000, 65535, 65536, 65537, 200000, 33554431};
    const int splits_list[] = {1, 2, 3, 5, 8, 255, 4096, 65535, 65536, 65537, 100000};
    for (size_t b = 0; b < sizeof blocks_list / sizeof *blocks_list; ++b)
        for (size_t q = 0; q < sizeof splits_list / sizeof *splits_list; ++q) {
            const int blocks = blocks_list[b], splits = splits_list[q];
            if (splits > blocks) continue;
            for (int i = 0; i < 64; ++i) {
                const int s = i < 32 ? i : splits - (i - 32);  /* both ends of the range */
                if (s < 0 || s > splits) continue;
                ck_assert_int_eq(gg_wgrad_first_block(s, blocks, splits), (int)((long long)s * blocks / splits));
            }
        }
    GgWgradParams p = gg_wgrad_params(1, 1 << 30, 128, 192, 128, 192, 132, 0);
    const int ms[] = {0, 1, 64 * p.chunk, 64 * p.chunk + 1, 1 << 29, 2147483647};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; ++i) {
        const long long rows = 64LL * p.chunk, m = ms[i];
        ck_assert_int_eq(gg_wgrad_splits(&p, ms[i]), m > rows ? (int)((m + rows - 1) / rows) : 1);
    }
}
END_TEST

/* The fix-up: of the splits' ticket arrivals exactly one sees splits - 1 and sets the counter
 * back to 0, and the sum it makes adds the partials in split order, so its bits do not depend on
 * which split arrived last (the arrival order does not enter the sum at all). */
START_TEST(test_ticket_fixup) {
    srand(11);
    for (int splits = 2; splits <= 9; ++splits) {
        float part[9];
        for (int s = 0; s < splits; ++s) part[s] = (float)(rand() % 2000 - 1000) / 7.0f;
        float want = part[0];
        for (int s = 1; s < splits; ++s) want += part[s];
        int counter = 0, last = 0;
        float got = NAN;
        for (int a = 0; a < splits; ++a) {
            const int arrived = counter++; /* atomicAdd */
            if (arrived == splits - 1) {
                ++last;
                counter = 0;
                got = part[0];
                for (int s = 1; s < splits; ++s) got += part[s];
            }
        }
        ck_assert_int_eq(last, 1);
        ck_assert_int_eq(counter, 0);
        ck_assert(memcmp(&got, &want, sizeof got) == 0);
    }
}
END_TEST

/* What each pass's a, b and c hold (GgPass). */
START_TEST(test_pass_shapes) {
    const int m[] = {3, 0, 5};
    GgProblem p;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 3, 16, 24), 0);
    GgPassShape s = gg_pass_shape(&p, GG_PASS_FORWARD);
    ck_assert(s.a == 8 * 16 && s.b == 3 * 16 * 24 && s.c == 8 * 24 && s.c_cols == 24 && s.reduction == 16);
    s = gg_pass_shape(&p, GG_PASS_DGRAD);
    ck_assert(s.a == 8 * 24 && s.b == 3 * 16 * 24 && s.c == 8 * 16 && s.c_cols == 16 && s.reduction == 24);
    s = gg_pass_shape(&p, GG_PASS_WGRAD);
    ck_assert(s.a == 8 * 16 && s.b == 8 * 24 && s.c == 3 * 16 * 24 && s.c_cols == 24 && s.reduction == 5);
    /* The roofline's numbers: the same FLOPs; dgrad moves the forward's bytes (the empty expert's
     * B_e unread), wgrad reads A and dC and writes all three dB_e, the empty one too. */
    for (int pass = GG_PASS_FORWARD; pass <= GG_PASS_WGRAD; ++pass)
        ck_assert(gg_pass_shape(&p, (GgPass)pass).flops == 2.0 * 8 * 16 * 24);
    ck_assert(gg_pass_shape(&p, GG_PASS_FORWARD).bytes == 2.0 * (8 * 16 + 2 * 16 * 24 + 8 * 24));
    ck_assert(gg_pass_shape(&p, GG_PASS_DGRAD).bytes == 2.0 * (8 * 24 + 2 * 16 * 24 + 8 * 16));
    ck_assert(gg_pass_shape(&p, GG_PASS_WGRAD).bytes == 2.0 * (8 * 16 + 8 * 24 + 3 * 16 * 24));
    /* Whole tiles: dgrad pads its output columns (k) to block_n, reduces over n; wgrad pads the
     * reduction rows to its block_m and n to block_n; the forward is gg_scheduled_flops. */
    ck_assert(gg_pass_scheduled_flops(&p, GG_PASS_DGRAD, 2, 16) == 2.0 * (4 + 6) * 24 * 16);
    ck_assert(gg_pass_scheduled_flops(&p, GG_PASS_WGRAD, 4, 16) == 2.0 * (4 + 8) * 16 * 32);
    ck_assert(gg_pass_scheduled_flops(&p, GG_PASS_FORWARD, 4, 16) == gg_scheduled_flops(&p, 4, 16));
    gg_problem_free(&p);
}
END_TEST

/* The three fp64 references are adjoint: sum(dC . C) = sum(dA . A) = sum(dB . B), and an empty
 * expert's dB_e is zeros. */
START_TEST(test_references_adjoint) {
    const int m[] = {4, 0, 7, 1};
    GgProblem p;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 4, 24, 16), 0);
    const size_t tk = (size_t)p.tokens * p.k, tn = (size_t)p.tokens * p.n, ekn = (size_t)p.experts * p.k * p.n;
    uint16_t *a = malloc(tk * 2), *b = malloc(ekn * 2), *dc = malloc(tn * 2);
    double *c = malloc(tn * 8), *da = malloc(tk * 8), *db = malloc(ekn * 8);
    srand(3);
    for (size_t i = 0; i < tk; ++i) a[i] = gg_f32_to_bf16((float)(rand() % 64 - 32) / 16.f);
    for (size_t i = 0; i < ekn; ++i) b[i] = gg_f32_to_bf16((float)(rand() % 64 - 32) / 16.f);
    for (size_t i = 0; i < tn; ++i) dc[i] = gg_f32_to_bf16((float)(rand() % 64 - 32) / 16.f);
    gg_reference_fp64(&p, a, b, c);
    gg_reference_dgrad_fp64(&p, dc, b, da);
    gg_reference_wgrad_fp64(&p, a, dc, db);
    double s_c = 0, s_a = 0, s_b = 0;
    for (size_t i = 0; i < tn; ++i) s_c += gg_bf16_to_f32(dc[i]) * c[i];
    for (size_t i = 0; i < tk; ++i) s_a += gg_bf16_to_f32(a[i]) * da[i];
    for (size_t i = 0; i < ekn; ++i) s_b += gg_bf16_to_f32(b[i]) * db[i];
    ck_assert(s_c != 0.0 && s_c == s_a && s_c == s_b); /* small integers / 2^k: exact in fp64 */
    for (size_t i = 0; i < (size_t)p.k * p.n; ++i) ck_assert(db[(size_t)p.k * p.n + i] == 0.0);
    free(a);
    free(b);
    free(dc);
    free(c);
    free(da);
    free(db);
    gg_problem_free(&p);
}
END_TEST

/* The check names wgrad's first bad element by (expert, row of dB_e, column); a forward output
 * by (row, column), as before. dB of 3 experts x k 4 x n 8, one element wrong at (2, 1, 5). */
START_TEST(test_check_names_expert) {
    enum { E = 3, K = 4, N = 8, COUNT = E * K * N };
    uint16_t out[COUNT];
    float ref[COUNT];
    for (int i = 0; i < COUNT; ++i) {
        ref[i] = (float)(i % 7) - 3.f;
        out[i] = gg_f32_to_bf16(ref[i]);
    }
    const int bad = (2 * K + 1) * N + 5;
    out[bad] = gg_f32_to_bf16(ref[bad] + 1.f);
    GgCheck chk;
    char why[512];
    gg_check_compare(out, ref, NULL, COUNT, N, 16, K, &chk);
    gg_check_describe(&chk, why, sizeof why);
    ck_assert(!chk.pass && chk.bad == 1);
    ck_assert_msg(strstr(why, "first at expert 2 row 1 col 5 of dB (got"), "%s", why);
    gg_check_compare(out, ref, NULL, COUNT, N, 16, 0, &chk);
    gg_check_describe(&chk, why, sizeof why);
    ck_assert_msg(strstr(why, "first at row 9 col 5 (got") && chk.first_expert == -1, "%s", why);
}
END_TEST

Suite *wgrad_suite(void) {
    Suite *s = suite_create("wgrad");
    TCase *tc = tcase_create("work_list");
    tcase_add_test(tc, test_tile_order);
    tcase_add_test(tc, test_tile_order_priced);
    tcase_add_test(tc, test_list_edge_splits);
    tcase_add_test(tc, test_list_random);
    tcase_add_test(tc, test_chunk_rule);
    tcase_add_test(tc, test_item_arithmetic);
    tcase_add_test(tc, test_ticket_fixup);
    tcase_add_test(tc, test_pass_shapes);
    tcase_add_test(tc, test_references_adjoint);
    tcase_add_test(tc, test_check_names_expert);
    suite_add_tcase(s, tc);
    return s;
}
