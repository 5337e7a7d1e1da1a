/* The k3_wgmma entry point's rule (k3_wgmma/k3_wgmma_entry.c) on the shapes the README
 * measures and on the cases that pin each branch: the column width with the least padding
 * (ties: 192, 256, 128) and adaptive rows up to two 128-row tiles per expert on average. */
#include <check.h>
#include <string.h>

#include "k3_wgmma/k3_wgmma.h"

static const char *pick(int tokens, int experts, int k, int n) {
    const GgShape s = {tokens, experts, k, n};
    char why[256];
    return k3_wgmma_choose(&s, why, sizeof why);
}

START_TEST(column_width_least_padding) {
    ck_assert_str_eq(pick(16384, 64, 1024, 2688), "k3_wgmma_split64");  /* 2688 = 14 x 192 = 21 x 128 */
    ck_assert_str_eq(pick(16384, 64, 2048, 1024), "k3_wgmma_n256");     /* 1024: 192 pads, 256 does not */
    ck_assert_str_eq(pick(16384, 64, 1024, 640), "k3_wgmma_n128");      /* 640 = 5 x 128 only */
    ck_assert_str_eq(pick(16384, 64, 1024, 1536), "k3_wgmma_split64");  /* 192, 256, 128 all exact: 192 */
    ck_assert_str_eq(pick(16384, 64, 1024, 8), "k3_wgmma_n128");        /* N = 8: 128 pads least */
    ck_assert_str_eq(pick(16384, 64, 1024, 3072), "k3_wgmma_split64");  /* all exact: 192 first */
}
END_TEST

START_TEST(rows_per_expert) {
    ck_assert_str_eq(pick(16384, 64, 1024, 2688), "k3_wgmma_split64");  /* 256 rows: two tiles */
    ck_assert_str_eq(pick(16385, 64, 1024, 2688), "k3_wgmma_persist");  /* just over */
    ck_assert_str_eq(pick(65536, 128, 2048, 1536), "k3_wgmma_persist"); /* Qwen3-like: 512 rows */
    ck_assert_str_eq(pick(8192, 8, 4096, 14336), "k3_wgmma_persist_n256"); /* Mixtral-like */
    ck_assert_str_eq(pick(32768, 256, 7168, 4096), "k3_wgmma_n256");    /* DeepSeek-V3-like */
    ck_assert_str_eq(pick(256, 64, 1024, 2688), "k3_wgmma_split64");    /* decode */
    ck_assert_str_eq(pick(0, 64, 1024, 2688), "k3_wgmma_split64");      /* no rows at all */
    ck_assert_str_eq(pick(1 << 20, 4, 1024, 640), "k3_wgmma_n128");     /* no fixed-row 128-wide one */
}
END_TEST

START_TEST(why_names_the_deciding_properties) {
    const GgShape s = {8192, 8, 4096, 14336};
    char why[256];
    k3_wgmma_choose(&s, why, sizeof why);
    ck_assert_ptr_nonnull(strstr(why, "k3_wgmma_persist_n256"));
    ck_assert_ptr_nonnull(strstr(why, "BLOCK_N 256"));
    ck_assert_ptr_nonnull(strstr(why, "fixed 128"));
    const GgShape narrow = {65536, 8, 1024, 128}; /* many rows, but 128 wide has only adaptive rows */
    ck_assert_str_eq(k3_wgmma_choose(&narrow, why, sizeof why), "k3_wgmma_n128");
    ck_assert_ptr_nonnull(strstr(why, "adaptive rows (no fixed-row configuration at this width)"));
}
END_TEST

Suite *entry_suite(void) {
    Suite *s = suite_create("k3_wgmma entry point");
    TCase *t = tcase_create("rule");
    tcase_add_test(t, column_width_least_padding);
    tcase_add_test(t, rows_per_expert);
    tcase_add_test(t, why_names_the_deciding_properties);
    suite_add_tcase(s, t);
    return s;
}
