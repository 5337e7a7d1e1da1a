/* The k3_wgmma entry point's rule (k3_wgmma/k3_wgmma_entry.c) on the shapes the README
 * measures and on the cases that pin each branch: adaptive rows up to two 128-row tiles per
 * expert on average, and from one tile per expert on only while the drifting B panels fit in
 * L2; the column width with the least padding (ties: 192, 256, 128); ping-pong consumers
 * from one tile per expert on, where the width has them (192 and 128, not 256). On an
 * H200's SMs and L2, given, so no GPU is needed. */
#include <check.h>
#include <string.h>

#include "k3_wgmma/k3_wgmma.h"

static const GgGpu h200 = {132, 60L << 20}; /* results/h200/sweep.csv: sms, l2_bytes */

static const char *pick_on(const GgGpu *g, int tokens, int experts, int k, int n) {
    const GgShape s = {tokens, experts, k, n};
    char why[512];
    return k3_wgmma_choose_on(&s, g, why, sizeof why);
}
static const char *pick(int tokens, int experts, int k, int n) { return pick_on(&h200, tokens, experts, k, n); }

START_TEST(column_width_least_padding) {
    ck_assert_str_eq(pick(16384, 64, 1024, 2688), "k3_wgmma_pingpong_m64_n192"); /* 2688 = 14 x 192 = 21 x 128 */
    ck_assert_str_eq(pick(16384, 64, 2048, 1024), "k3_wgmma_coop_m64_n256");     /* 1024: 192 pads, 256 does not */
    ck_assert_str_eq(pick(16384, 64, 1024, 640), "k3_wgmma_pingpong_m64_n128"); /* 640 = 5 x 128 only */
    ck_assert_str_eq(pick(16384, 64, 1024, 1536), "k3_wgmma_pingpong_m64_n192"); /* 192, 256, 128 all exact: 192 */
    ck_assert_str_eq(pick(65536, 64, 1024, 1536), "k3_wgmma_pingpong_m128_n192");  /* the same, fixed rows */
    ck_assert_str_eq(pick(16384, 64, 1024, 8), "k3_wgmma_pingpong_m64_n128"); /* N = 8: 128 pads least */
    ck_assert_str_eq(pick(16384, 64, 1024, 3072), "k3_wgmma_pingpong_m64_n192"); /* all exact: 192 first */
    ck_assert_str_eq(pick(2048, 64, 1024, 3072), "k3_wgmma_coop_m64_n192");   /* the same, a quarter tile each */
}
END_TEST

START_TEST(rows_per_expert) {
    ck_assert_str_eq(pick(16384, 64, 1024, 2688), "k3_wgmma_pingpong_m64_n192"); /* 256 rows: two tiles */
    ck_assert_str_eq(pick(16385, 64, 1024, 2688), "k3_wgmma_pingpong_m128_n192");  /* just over */
    ck_assert_str_eq(pick(65536, 128, 2048, 1536), "k3_wgmma_pingpong_m128_n192"); /* Qwen3-like: 512 rows */
    ck_assert_str_eq(pick(8192, 8, 4096, 14336), "k3_wgmma_coop_m128_n256"); /* Mixtral-like */
    ck_assert_str_eq(pick(16384, 64, 2048, 1024), "k3_wgmma_coop_m64_n256");     /* OLMoE-like: 33 MiB drift */
    ck_assert_str_eq(pick(2048, 64, 1024, 2688), "k3_wgmma_coop_m64_n192");   /* a quarter tile each */
    ck_assert_str_eq(pick(256, 64, 1024, 2688), "k3_wgmma_coop_m64_n192");    /* decode */
    ck_assert_str_eq(pick(0, 64, 1024, 2688), "k3_wgmma_coop_m64_n192");      /* no rows at all */
    ck_assert_str_eq(pick(1 << 20, 4, 1024, 640), "k3_wgmma_pingpong_m128_n128"); /* fixed rows at 128: ping-pong */
}
END_TEST

/* From one tile per expert on, adaptive rows only while half of each B panel in flight fits
 * in L2: SMs / (tiles per expert) x K x BLOCK_N bytes; below one tile, adaptive. */
START_TEST(drifting_panels_against_l2) {
    ck_assert_str_eq(pick(32768, 256, 7168, 4096), "k3_wgmma_coop_m128_n256"); /* DeepSeek-V3-like: 231 MiB */
    ck_assert_str_eq(pick(16384, 64, 8192, 2688), "k3_wgmma_pingpong_m128_n192");  /* 66 x 8192 x 192: 99 MiB */
    ck_assert_str_eq(pick(16384, 64, 4928, 2688), "k3_wgmma_pingpong_m64_n192"); /* 59.6 MiB: just fits */
    ck_assert_str_eq(pick(16384, 64, 4992, 2688), "k3_wgmma_pingpong_m128_n192");  /* 60.3 MiB: just over */
    ck_assert_str_eq(pick(8191, 64, 8192, 2688), "k3_wgmma_coop_m64_n192");   /* under one tile: nothing drifts */
    ck_assert_str_eq(pick(8192, 64, 8192, 2688), "k3_wgmma_pingpong_m128_n192");  /* one: 132 x 8192 x 192, 198 MiB */
    const GgGpu small_l2 = {132, 8L << 20};                              /* the L2 decides */
    ck_assert_str_eq(pick_on(&small_l2, 16384, 64, 1024, 2688), "k3_wgmma_pingpong_m128_n192");
    const GgGpu few_sms = {16, 60L << 20};                                /* so do the SMs */
    ck_assert_str_eq(pick_on(&few_sms, 32768, 256, 7168, 4096), "k3_wgmma_coop_m64_n256");
}
END_TEST

START_TEST(why_names_the_deciding_properties) {
    const GgShape s = {8192, 8, 4096, 14336};
    char why[512];
    k3_wgmma_choose_on(&s, &h200, why, sizeof why);
    ck_assert_ptr_nonnull(strstr(why, "k3_wgmma_coop_m128_n256"));
    ck_assert_ptr_nonnull(strstr(why, "BLOCK_N 256"));
    ck_assert_ptr_nonnull(strstr(why, "fixed rows"));
    const GgShape deepseek = {32768, 256, 7168, 4096};
    k3_wgmma_choose_on(&deepseek, &h200, why, sizeof why);
    ck_assert_ptr_nonnull(strstr(why, "drifting B 231.0 MiB > L2 60.0 MiB"));
    const GgShape narrow = {16384, 64, 1024, 640}; /* adaptive rows at 128: ping-pong */
    ck_assert_str_eq(k3_wgmma_choose_on(&narrow, &h200, why, sizeof why), "k3_wgmma_pingpong_m64_n128");
    ck_assert_ptr_nonnull(strstr(why, "; ping-pong consumers"));
    const GgShape few = {2048, 64, 1024, 640}; /* under one tile per expert: shared tiles at 128 */
    ck_assert_str_eq(k3_wgmma_choose_on(&few, &h200, why, sizeof why), "k3_wgmma_coop_m64_n128");
    const GgShape qwen3 = {65536, 128, 2048, 1536};
    ck_assert_str_eq(k3_wgmma_choose_on(&qwen3, &h200, why, sizeof why), "k3_wgmma_pingpong_m128_n192");
    ck_assert_ptr_nonnull(strstr(why, "; ping-pong consumers"));
    k3_wgmma_choose_on(&s, &h200, why, sizeof why); /* Mixtral-like: 256 wide */
    ck_assert_ptr_nonnull(strstr(why, "consumers share tiles (no ping-pong one with these rows at this width)"));
}
END_TEST

Suite *entry_suite(void) {
    Suite *s = suite_create("k3_wgmma entry point");
    TCase *t = tcase_create("rule");
    tcase_add_test(t, column_width_least_padding);
    tcase_add_test(t, rows_per_expert);
    tcase_add_test(t, drifting_panels_against_l2);
    tcase_add_test(t, why_names_the_deciding_properties);
    suite_add_tcase(s, t);
    return s;
}
