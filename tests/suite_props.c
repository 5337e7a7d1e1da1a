/* Property tests of the problem model on random row lists: whatever the split, every row lands
 * in exactly one tile, no tile crosses an expert, and tile counts, scheduled rows and eta agree
 * with their closed forms (tests/model_props.c). The generator favours the shapes that break
 * tile arithmetic: empty experts, 1-row experts, multiples of 64 and 128 and their neighbours. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "gg_harness.h"
#include "gg_problem.h"
#include "model_props.h"

static uint64_t next(uint64_t *s) { /* splitmix64: reproducible from the seed alone */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int draw_rows(uint64_t *s) {
    static const int edges[] = {0, 0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 256, 4096};
    switch (next(s) % 4) {
    case 0: return edges[next(s) % (sizeof edges / sizeof *edges)];
    case 1: return (int)(next(s) % 8);
    case 2: return (int)(next(s) % 600);
    default: return (int)(next(s) % 20000);
    }
}

START_TEST(random_row_lists) {
    uint64_t seed = 20261201;
    int *m = malloc(512 * sizeof *m);
    for (int trial = 0; trial < 400; ++trial) {
        const int experts = 1 + (int)(next(&seed) % (trial % 10 == 0 ? 512 : 40));
        for (int e = 0; e < experts; ++e) m[e] = draw_rows(&seed);
        const int n = 8 * (1 + (int)(next(&seed) % 64));
        GgProblem p;
        ck_assert_int_eq(gg_problem_from_counts(&p, m, experts, 64, n), 0);
        char why[256];
        ck_assert_msg(gg_model_props(&p, 1 << 20, why, sizeof why) == 0, "trial %d: %s", trial, why);
        gg_problem_free(&p);
    }
    free(m);
}
END_TEST

START_TEST(random_power_law_splits) {
    uint64_t seed = 7;
    for (int trial = 0; trial < 400; ++trial) {
        const int experts = 1 + (int)(next(&seed) % 256);
        const int tokens = (int)(next(&seed) % (trial % 8 == 0 ? 1000000 : 40000));
        const double skew = (double)(next(&seed) % 3001) / 1000.0;
        GgProblem p;
        ck_assert_int_eq(gg_problem_init(&p, tokens, experts, 64, 128, skew), 0);
        char why[256];
        ck_assert_msg(gg_model_props(&p, 1 << 20, why, sizeof why) == 0, "trial %d (%d rows, %d experts, s %g): %s",
                      trial, tokens, experts, skew, why);
        gg_problem_free(&p);
    }
}
END_TEST

/* ggemm fuzz's generator: valid problems, reproducible, and the edge shapes do come up. */
START_TEST(fuzz_problems) {
    int empty = 0, one_row = 0, wide = 0, min_k = 1 << 30, min_n = 1 << 30;
    for (int i = 0; i < 300; ++i) {
        GgProblem p, q;
        double skew, skew2;
        ck_assert_int_eq(gg_fuzz_problem(42, i, &p, &skew), 0);
        ck_assert_int_eq(gg_fuzz_problem(42, i, &q, &skew2), 0);
        ck_assert_int_eq(p.experts, q.experts);
        for (int e = 0; e < p.experts; ++e) ck_assert_int_eq(p.m[e], q.m[e]);
        ck_assert(p.experts >= 1 && p.experts <= GG_MAX_EXPERTS && skew >= 0 && skew <= 3);
        wide += p.experts > 256;
        ck_assert(p.k % 8 == 0 && p.n % 8 == 0 && p.k >= 8 && p.n >= 8 && p.k <= 4096 && p.n <= 4096);
        empty += gg_empty_experts(&p) > 0;
        for (int e = 0; e < p.experts; ++e) one_row += p.m[e] == 1;
        min_k = p.k < min_k ? p.k : min_k;
        min_n = p.n < min_n ? p.n : min_n;
        char why[256];
        ck_assert_msg(gg_model_props(&p, 1 << 20, why, sizeof why) == 0, "case %d: %s", i, why);
        gg_problem_free(&p);
        gg_problem_free(&q);
    }
    ck_assert(empty > 100 && one_row > 100 && wide > 10 && wide < 75 && min_k == 8 && min_n == 8);
}
END_TEST

Suite *props_suite(void) {
    Suite *s = suite_create("model properties");
    TCase *t = tcase_create("random");
    tcase_add_test(t, random_row_lists);
    tcase_add_test(t, random_power_law_splits);
    tcase_add_test(t, fuzz_problems);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}
