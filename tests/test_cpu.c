/* CPU tests (CTest label `cpu`): the problem model, the tile list, the counts behind
 * eta/FLOP/byte columns, bf16, the command line, CSV, the fp64 reference, and the
 * descriptor / swizzle encoders of the stages. No GPU needed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"
#include "gg_problem.h"

Suite *swizzle_suite(void);
Suite *desc_sm90_suite(void);
Suite *desc_sm100_suite(void);
Suite *props_suite(void);
Suite *layouts_suite(void);
Suite *schedule_suite(void);
Suite *entry_suite(void);
Suite *trace_suite(void);
Suite *moe_suite(void);
Suite *wgrad_suite(void);
Suite *moe_backward_suite(void);

/* ---------------- skew split ---------------- */
START_TEST(split_sums_and_is_monotone) {
    const int tokens[] = {16384, 2048, 1000, 63, 5, 0};
    const double skews[] = {0.0, 0.5, 1.2, 3.0};
    for (size_t t = 0; t < sizeof tokens / sizeof *tokens; ++t)
        for (size_t s = 0; s < sizeof skews / sizeof *skews; ++s) {
            int m[64];
            gg_split_rows(tokens[t], 64, skews[s], m);
            long sum = 0;
            for (int e = 0; e < 64; ++e) {
                ck_assert_int_ge(m[e], 0);
                if (e > 0) ck_assert_int_le(m[e], m[e - 1]);
                sum += m[e];
            }
            ck_assert_int_eq(sum, tokens[t]);
        }
}
END_TEST

START_TEST(split_uniform_and_worklog_facts) {
    int m[64];
    gg_split_rows(2048, 64, 0.0, m);
    for (int e = 0; e < 64; ++e) ck_assert_int_eq(m[e], 32);
    gg_split_rows(16384, 64, 1.2, m); /* the worklog's skewed case */
    ck_assert_int_eq(m[0], 4793);
    ck_assert_int_eq(m[63], 32);
}
END_TEST

START_TEST(split_fewer_tokens_than_experts) {
    int m[8];
    gg_split_rows(5, 8, 0.0, m);
    for (int e = 0; e < 8; ++e) ck_assert_int_eq(m[e], e < 5 ? 1 : 0);
}
END_TEST

/* ---------------- tile list ---------------- */
static void check_coverage(const GgProblem *p, int bm, int bn) {
    const long count = gg_tile_count(p, bm, bn);
    GgTile *tiles = malloc(sizeof(GgTile) * (size_t)(count + 1));
    ck_assert_int_eq(gg_build_tiles(p, bm, bn, tiles), count);
    unsigned char *owned = calloc((size_t)p->tokens * p->n + 1, 1);
    for (long t = 0; t < count; ++t) {
        const GgTile *x = &tiles[t];
        ck_assert(x->rows >= 1 && x->rows <= bm);
        /* never crosses an expert boundary */
        ck_assert_int_ge(x->row0, p->offsets[x->expert]);
        ck_assert_int_le(x->row0 + x->rows, p->offsets[x->expert + 1]);
        if (t > 0) ck_assert_int_ge(x->expert, tiles[t - 1].expert); /* expert-major */
        for (int r = x->row0; r < x->row0 + x->rows; ++r)
            for (int c = x->col0; c < x->col0 + bn && c < p->n; ++c) owned[(size_t)r * p->n + c]++;
    }
    for (size_t i = 0; i < (size_t)p->tokens * p->n; ++i) ck_assert_int_eq(owned[i], 1);
    free(owned);
    free(tiles);
}

START_TEST(tiles_cover_every_element_once) {
    const int m[] = {0, 1, 130, 0, 64, 1, 257, 3};
    GgProblem p;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 8, 64, 200), 0);
    const int bms[] = {32, 64, 128}, bns[] = {64, 128};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j) check_coverage(&p, bms[i], bns[j]);
    gg_problem_free(&p);
    ck_assert_int_eq(gg_problem_init(&p, 3000, 16, 64, 384, 1.2), 0);
    check_coverage(&p, 128, 128);
    gg_problem_free(&p);
}
END_TEST

START_TEST(tile_counts_match_worklog) {
    GgProblem p;
    gg_problem_init(&p, 16384, 64, 1024, 2688, 0.0);
    ck_assert_int_eq(gg_tile_count(&p, 64, 64), 10752);
    ck_assert_int_eq(gg_tile_count(&p, 128, 128), 2688);
    ck_assert_int_eq(gg_tile_count(&p, 32, 128), 10752);
    gg_problem_free(&p);
    gg_problem_init(&p, 16384, 64, 1024, 2688, 1.2);
    ck_assert_int_eq(gg_tile_count(&p, 64, 64), 11970);
    ck_assert_int_eq(gg_tile_count(&p, 128, 128), 3444);
    gg_problem_free(&p);
    gg_problem_init(&p, 2048, 64, 1024, 2688, 0.0);
    ck_assert_int_eq(gg_tile_count(&p, 128, 128), 1344);
    ck_assert_int_eq(gg_tile_count(&p, 64, 64), 2688);
    gg_problem_free(&p);
}
END_TEST

START_TEST(empty_experts_give_no_tiles) {
    const int m[] = {0, 0, 5, 0};
    GgProblem p;
    gg_problem_from_counts(&p, m, 4, 64, 64);
    ck_assert_int_eq(gg_tile_count(&p, 128, 128), 1);
    ck_assert_int_eq(gg_empty_experts(&p), 3);
    gg_problem_free(&p);
    const int none[] = {0, 0};
    gg_problem_from_counts(&p, none, 2, 64, 64);
    ck_assert_int_eq(gg_tile_count(&p, 128, 128), 0);
    ck_assert_double_eq(gg_eta(&p, 128), 1.0);
    gg_problem_free(&p);
}
END_TEST

/* ---------------- eta, FLOPs, bytes ---------------- */
START_TEST(eta_flops_bytes) {
    GgProblem p;
    gg_problem_init(&p, 16384, 64, 1024, 2688, 1.2);
    /* worklog: 22.0% of BM=128 rows and 10.2% of BM=64 rows are padding at s = 1.2 */
    ck_assert_double_eq_tol(gg_eta(&p, 128), 0.780, 0.0005);
    ck_assert_double_eq_tol(gg_eta(&p, 64), 0.898, 0.0005);
    ck_assert(gg_eta(&p, 0) > gg_eta(&p, 128)); /* adaptive pads less */
    ck_assert_double_eq_tol(gg_useful_flops(&p), 2.0 * 16384 * 1024 * 2688, 1.0);
    ck_assert_double_eq_tol(gg_scheduled_flops(&p, 128, 128), gg_useful_flops(&p) / gg_eta(&p, 128), 1.0);
    /* A once, B once per expert (none empty here), C once, all bf16 */
    const double bytes = 2.0 * (16384.0 * 1024 + 64.0 * 1024 * 2688 + 16384.0 * 2688);
    ck_assert_double_eq_tol(gg_min_bytes(&p), bytes, 1.0);
    gg_problem_free(&p);
    const int m[] = {100, 0, 28};
    gg_problem_from_counts(&p, m, 3, 64, 96);
    ck_assert_double_eq_tol(gg_min_bytes(&p), 2.0 * (128 * 64 + 2 * 64 * 96 + 128 * 96), 0.5);
    ck_assert_int_eq(gg_scheduled_rows(&p, 64), 128 + 64);
    ck_assert_int_eq(gg_scheduled_rows(&p, 0), 128 + 64); /* 100 -> one 128; 28 -> one 64 */
    ck_assert_double_eq_tol(gg_scheduled_flops(&p, 64, 64), 2.0 * 192 * 64 * 128, 0.5);
    gg_problem_free(&p);
}
END_TEST

/* ---------------- bf16 ---------------- */
START_TEST(bf16_round_trip) {
    /* every bf16 pattern that is a number survives f32 and back */
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = gg_bf16_to_f32((uint16_t)h);
        if (isnan(f)) {
            ck_assert(isnan(gg_bf16_to_f32(gg_f32_to_bf16(f))));
            continue;
        }
        ck_assert_uint_eq(gg_f32_to_bf16(f), h);
    }
    ck_assert_uint_eq(gg_f32_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(gg_f32_to_bf16(1.00390625f), 0x3f80); /* tie -> even */
    ck_assert_uint_eq(gg_f32_to_bf16(1.01171875f), 0x3f82); /* tie -> even, upwards */
    ck_assert_uint_eq(gg_f32_to_bf16(1.005f), 0x3f81);      /* above half -> up */
}
END_TEST

/* ---------------- command line ---------------- */
static int parse(GgOptions *o, char *err, int argc, const char **argv) {
    return gg_parse_args(argc, (char **)argv, o, err, 256);
}

START_TEST(cli_accepts_good_input) {
    GgOptions o;
    char err[256];
    const char *a[] = {"ggemm", "run", "--kernel", "k0_fma", "--tokens", "2048", "--skew", "1.2", "--k", "64",
                       "--n", "8", "--reps", "20", "--seed", "7", "--no-check"};
    ck_assert_int_eq(parse(&o, err, 17, a), 0);
    ck_assert_int_eq(o.command, GG_CMD_RUN);
    ck_assert_int_eq(o.tokens.v[0], 2048);
    ck_assert_double_eq(o.skews.v[0], 1.2);
    ck_assert_int_eq(o.k.v[0], 64);
    ck_assert_int_eq(o.n.v[0], 8);
    ck_assert_int_eq(o.check, 0);
    ck_assert_uint_eq(o.seed, 7);
    const char *b[] = {"ggemm", "problem", "--m-list", "0,1,130"};
    ck_assert_int_eq(parse(&o, err, 4, b), 0);
    ck_assert_int_eq(o.experts.v[0], 3);
    ck_assert_int_eq(o.tokens.v[0], 131);
    const char *c[] = {"ggemm", "sweep", "--tokens", "16384,2048", "--skews", "0:2:0.2", "--k", "1024,8192"};
    ck_assert_int_eq(parse(&o, err, 8, c), 0);
    ck_assert_int_eq(o.tokens.count, 2);
    ck_assert_int_eq(o.k.v[1], 8192);
    ck_assert_int_eq(o.skews.count, 11);
    ck_assert_double_eq(o.skews.v[3], 0.6); /* rounded: no 0.6000000000000001 in the CSV */
    ck_assert_double_eq(o.skews.v[10], 2.0);
    /* COMMAND --help, wherever it stands, and ggemm help COMMAND: that command's usage */
    const char *h[] = {"ggemm", "run", "--kernel", "k0_fma", "-h"};
    ck_assert_int_eq(parse(&o, err, 5, h), 0);
    ck_assert(o.help && o.command == GG_CMD_RUN);
    const char *hl[] = {"ggemm", "help", "trace"};
    ck_assert_int_eq(parse(&o, err, 3, hl), 0);
    ck_assert(o.help && o.command == GG_CMD_TRACE);
}
END_TEST

START_TEST(skew_lists) {
    GgDoubleList l;
    ck_assert_int_eq(gg_parse_skews("0,0.5,1.2", &l), 0);
    ck_assert_int_eq(l.count, 3);
    ck_assert_int_eq(gg_parse_skews("1:1:0.5", &l), 0);
    ck_assert_int_eq(l.count, 1);
    ck_assert_int_eq(gg_parse_skews("0:1:0.25", &l), 0);
    ck_assert_int_eq(l.count, 5);
    const char *bad[] = {"", "1:0:0.1", "0:1:0", "0:1", "0:1:0.1:2", "0,,1", "0:9:1", "a", "0:2:0.001"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) ck_assert_msg(gg_parse_skews(bad[i], &l), "%s", bad[i]);
}
END_TEST

/* The sweep's cases come from harness/cases.csv unless a shape option says otherwise. */
START_TEST(case_selection) {
    GgOptions o;
    char err[256];
    GgCaseList l;
    const char *a[] = {"ggemm", "cases", "--tokens", "100,200", "--skews", "0,1", "--kernels", "k0_fma"};
    ck_assert_int_eq(parse(&o, err, 8, a), 0);
    ck_assert_int_eq(gg_cases_select(&o, &l), 0);
    ck_assert_int_eq(l.count, 4);
    ck_assert_int_eq(l.cases[3].tokens, 200);
    ck_assert_double_eq(l.cases[3].skew, 1.0);
    ck_assert(gg_case_has(&l.cases[0], "k0_fma", o.kernels));
    ck_assert(!gg_case_has(&l.cases[0], "k3_wgmma", o.kernels));
    gg_cases_free(&l);
    const char *b[] = {"ggemm", "cases", "--set", "skew"};
    ck_assert_int_eq(parse(&o, err, 4, b), 0);
    ck_assert_int_eq(gg_cases_select(&o, &l), 0);
    ck_assert_int_ge(l.count, 16); /* 2 token counts x at least 8 skews */
    for (int i = 0; i < l.count; ++i) ck_assert_str_eq(l.cases[i].set, "skew");
    gg_cases_free(&l);
    const char *c[] = {"ggemm", "cases", "--set", "no_such_set"};
    ck_assert_int_eq(parse(&o, err, 4, c), 0);
    ck_assert_int_ne(gg_cases_select(&o, &l), 0);
    gg_error_clear();
}
END_TEST

START_TEST(cli_rejects_bad_input) {
    GgOptions o;
    char err[256];
    const char *cases[][4] = {
        {"ggemm", "bogus", NULL, NULL},           {"ggemm", "problem", "--k", "100"},
        {"ggemm", "problem", "--n", "12"},        {"ggemm", "problem", "--tokens", "12x"},
        {"ggemm", "problem", "--tokens", "-1"},   {"ggemm", "problem", "--skew", "nan"},
        {"ggemm", "problem", "--experts", "0"},   {"ggemm", "problem", "--format", "xml"},
        {"ggemm", "problem", "--m-list", "1,,2"}, {"ggemm", "problem", "--frobnicate", "1"},
        {"ggemm", "problem", "--k", NULL},        {"ggemm", "run", NULL, NULL},
        {"ggemm", "problem", "--tokens", "1,2"},  {"ggemm", "problem", "--kernel", "k0_fma"},
        {"ggemm", "list", "--tokens", "5"},       {"ggemm", "problem", "frob", NULL},
        {"ggemm", "problem", "--tokens=2048", NULL}, {"ggemm", "problem", "", NULL},
        {"ggemm", "sweep", "--skews", "0:1"},     {"ggemm", "sweep", "--set", "skew"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int argc = 0;
        while (argc < 4 && cases[i][argc]) ++argc;
        err[0] = '\0';
        int rc = parse(&o, err, argc, cases[i]);
        if (i == sizeof cases / sizeof cases[0] - 1) { /* --set alone is fine; with a shape it is not */
            ck_assert_int_eq(rc, 0);
            const char *both[] = {"ggemm", "sweep", "--set", "skew", "--tokens", "5"};
            rc = parse(&o, err, 6, both);
        }
        ck_assert_msg(rc == GG_EXIT_USAGE, "case %zu accepted", i);
        ck_assert(strlen(err) > 0 && !strchr(err, '\n')); /* one clear line */
    }
}
END_TEST

START_TEST(number_parsing_is_strict) {
    int v;
    double d;
    ck_assert_int_eq(gg_parse_int("42", 0, 100, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_ne(gg_parse_int("4 2", 0, 100, &v), 0);
    ck_assert_int_ne(gg_parse_int("101", 0, 100, &v), 0);
    ck_assert_int_ne(gg_parse_int("", 0, 100, &v), 0);
    ck_assert_int_ne(gg_parse_int("99999999999999999999", 0, 100, &v), 0);
    ck_assert_int_eq(gg_parse_double("1.2", 0, 8, &d), 0);
    ck_assert_int_ne(gg_parse_double("inf", 0, 8, &d), 0);
    ck_assert_int_ne(gg_parse_double("1.2.3", 0, 8, &d), 0);
    ck_assert_int_eq(gg_parse_double("1e-320", 0, 8, &d), 0); /* underflow: in range all the same */
    ck_assert(d > 0 && d < 1e-300);
    ck_assert_int_ne(gg_parse_double("1e400", 0, 8, &d), 0); /* overflow */
}
END_TEST

/* ---------------- CSV ---------------- */
static int ends_with(const char *s, const char *tail) {
    const size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

START_TEST(csv_row_round_trip) {
    GgProblem p;
    gg_problem_init(&p, 2048, 64, 1024, 2688, 1.2);
    GgDeviceInfo d = {.gemm_tflops = 800.0, .bw_gbps = 4000.0};
    snprintf(d.name, sizeof d.name, "Test GPU");
    GgImpl impl;
    ck_assert_int_eq(gg_impl_find("k0_fma", &impl), 0);
    impl.config = "64x64, \"fma\"";
    const GgCheck chk = {.pass = 1};
    const GgTiming tm = {.median_us = 100.0, .p10_us = 90.0, .p90_us = 110.0};
    GgRow r;
    gg_row_fill(&r, &impl, &p, &d, &chk, &tm, 3);
    /* useful 2*2048*1024*2688 FLOP in 100 us */
    ck_assert_double_eq_tol(r.useful_tflops, 2.0 * 2048 * 1024 * 2688 / 100e-6 * 1e-12, 1e-9);
    ck_assert_double_eq_tol(r.gbps, gg_min_bytes(&p) / 100e-6 * 1e-9, 1e-6);
    /* the roofline floor here is the bytes: 352 MB at 4 TB/s = 88 us of 100 */
    ck_assert_double_eq_tol(r.roofline_pct, 100.0 * gg_min_bytes(&p) / 4000e9 / 100e-6, 1e-6);
    FILE *f = tmpfile();
    gg_csv_metadata(f, &d, "abc123", "2026-01-01");
    gg_csv_header(f);
    gg_csv_row(f, &r);
    /* The same row with a power state (telemetry.c): its last fields, where NVML answered. */
    GgRow powered = r;
    powered.telemetry = (GgTelemetry){.power_capped_pct = 12.5, .thermal_capped_pct = 0, .sm_clock_mhz = 1755,
                                      .valid = 1};
    gg_csv_row(f, &powered);
    rewind(f);
    char line[1024], header[1024] = "", row[1024] = "", row2[1024] = "";
    int meta = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') ++meta;
        else if (!header[0]) strcpy(header, line);
        else if (!row[0]) strcpy(row, line);
        else strcpy(row2, line);
    }
    fclose(f);
    ck_assert(ends_with(header, ",set,power_capped_pct,thermal_capped_pct,sm_clock_mhz\n"));
    ck_assert(ends_with(row, ",cli,,,\n")); /* no power state: empty fields */
    ck_assert(ends_with(row2, ",cli,12.5,0.0,1755\n"));
    ck_assert_int_ge(meta, 10);
    ck_assert(strstr(header, "kernel,config,tokens,experts,k,n,skew,block_m,block_n,tiles,eta,time_us_median,"
                             "time_us_p10,time_us_p90,useful_tflops,scheduled_tflops,gbps,roofline_pct") == header);
    int commas_h = 0, commas_r = 0, quoted = 0;
    for (char *c = header; *c; ++c) commas_h += *c == ',';
    for (char *c = row; *c; ++c) {
        quoted ^= *c == '"';
        commas_r += *c == ',' && !quoted; /* separators only */
    }
    ck_assert_int_eq(commas_h, commas_r);
    ck_assert(strstr(row, "k0_fma,\"64x64, \"\"fma\"\"\",2048,64,1024,2688,1.2,64,64,") == row);
    ck_assert(strstr(row, ",pass,") != NULL);
    gg_problem_free(&p);
}
END_TEST

/* k5_wgrad's row: the tile is 128 rows of dB_e x 192 columns (block_m, as `ggemm list` says);
 * tiles, eta and the scheduled FLOPs pad the ragged reduction to its 64-row stage (block_k). */
START_TEST(csv_row_wgrad_pads_reduction) {
    const int m[] = {300, 0, 1, 64, 65};
    GgProblem p;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 5, 256, 392), 0);
    GgDeviceInfo d = {.gemm_tflops = 800.0, .bw_gbps = 4000.0};
    GgImpl impl;
    ck_assert_int_eq(gg_impl_find("k5_wgrad", &impl), 0);
    ck_assert_int_eq(impl.info.block_m, 128);
    ck_assert_int_eq(impl.info.block_k, 64);
    const GgCheck chk = {.pass = 1};
    const GgTiming tm = {.median_us = 100.0};
    GgRow r;
    gg_row_fill(&r, &impl, &p, &d, &chk, &tm, 3);
    ck_assert_int_eq(r.block_m, 128);
    ck_assert_int_eq(r.tiles, (5 + 1 + 1 + 2) * 3); /* 64-row reduction blocks x column blocks */
    ck_assert_double_eq_tol(r.eta, 430.0 / 576.0, 1e-12);
    ck_assert_double_eq_tol(r.scheduled_tflops, 2.0 * 576 * 256 * 576 / 100e-6 * 1e-12, 1e-9);
    gg_problem_free(&p);
}
END_TEST

/* ---------------- timing ---------------- */

START_TEST(median_index_of_rounds) {
    const double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, ties[] = {2, 2, 1, 2}, one[] = {7};
    ck_assert_int_eq(gg_median_index(odd, 3), 2);   /* 2 */
    ck_assert_int_eq(gg_median_index(even, 4), 3);  /* the lower middle: 2 */
    ck_assert_int_eq(gg_median_index(ties, 4), 0);  /* 1 2 2 2: the first 2 */
    ck_assert_int_eq(gg_median_index(one, 1), 0);
    ck_assert_int_eq(gg_median_index(one, 0), -1);
}
END_TEST

/* ---------------- fp64 reference ---------------- */
START_TEST(reference_fp64_small) {
    /* Two experts of 1 and 2 rows, k = 2, n = 2, worked by hand. */
    const int m[] = {1, 2};
    GgProblem p;
    gg_problem_from_counts(&p, m, 2, 2, 2);
    const float af[] = {1, 2, /* expert 0 */ 3, 4, -1, 0.5f /* expert 1 */};
    const float bf[] = {1, 0, 0, 1, /* B_0 = I */ 2, 1, -1, 3 /* B_1 */};
    uint16_t a[6], b[8];
    for (int i = 0; i < 6; ++i) a[i] = gg_f32_to_bf16(af[i]);
    for (int i = 0; i < 8; ++i) b[i] = gg_f32_to_bf16(bf[i]);
    double c[6];
    gg_reference_fp64(&p, a, b, c);
    const double want[] = {1, 2, 3 * 2 + 4 * -1, 3 * 1 + 4 * 3, -1 * 2 + 0.5 * -1, -1 * 1 + 0.5 * 3};
    for (int i = 0; i < 6; ++i) ck_assert_double_eq(c[i], want[i]);
    gg_problem_free(&p);
}
END_TEST

START_TEST(tolerance_is_justified) {
    /* rtol is bf16's rounding bound; atol stays far below one typical output (sqrt(k)/3). */
    ck_assert_double_eq(gg_rtol(), 1.0 / 256);
    ck_assert(gg_atol(1024) < 0.01 * sqrt(1024.0) / 3);
    ck_assert(gg_atol(64) > 0);
}
END_TEST

static Suite *model_suite(void) {
    Suite *s = suite_create("model");
    TCase *t = tcase_create("split");
    tcase_add_test(t, split_sums_and_is_monotone);
    tcase_add_test(t, split_uniform_and_worklog_facts);
    tcase_add_test(t, split_fewer_tokens_than_experts);
    suite_add_tcase(s, t);
    t = tcase_create("tiles");
    tcase_add_test(t, tiles_cover_every_element_once);
    tcase_add_test(t, tile_counts_match_worklog);
    tcase_add_test(t, empty_experts_give_no_tiles);
    tcase_add_test(t, eta_flops_bytes);
    suite_add_tcase(s, t);
    t = tcase_create("numbers");
    tcase_add_test(t, bf16_round_trip);
    tcase_add_test(t, reference_fp64_small);
    tcase_add_test(t, median_index_of_rounds);
    tcase_add_test(t, tolerance_is_justified);
    suite_add_tcase(s, t);
    return s;
}

static Suite *harness_suite(void) {
    Suite *s = suite_create("harness");
    TCase *t = tcase_create("cli");
    tcase_add_test(t, cli_accepts_good_input);
    tcase_add_test(t, cli_rejects_bad_input);
    tcase_add_test(t, number_parsing_is_strict);
    tcase_add_test(t, skew_lists);
    tcase_add_test(t, case_selection);
    suite_add_tcase(s, t);
    t = tcase_create("csv");
    tcase_add_test(t, csv_row_round_trip);
    tcase_add_test(t, csv_row_wgrad_pads_reduction);
    suite_add_tcase(s, t);
    return s;
}

int main(void) {
    SRunner *r = srunner_create(model_suite());
    srunner_add_suite(r, harness_suite());
    srunner_add_suite(r, swizzle_suite());
    srunner_add_suite(r, moe_suite());
    srunner_add_suite(r, desc_sm90_suite());
    srunner_add_suite(r, desc_sm100_suite());
    srunner_add_suite(r, props_suite());
    srunner_add_suite(r, layouts_suite());
    srunner_add_suite(r, schedule_suite());
    srunner_add_suite(r, entry_suite());
    srunner_add_suite(r, trace_suite());
    srunner_add_suite(r, wgrad_suite());
    srunner_add_suite(r, moe_backward_suite());
    srunner_run_all(r, CK_NORMAL);
    const int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
