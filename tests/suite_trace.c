/* The trace decoder and summary (harness/trace.c) on a synthetic trace whose busy time, tail and
 * imbalance are known, and the trace buffer's size bound. No GPU. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, open_memstream */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gg_harness.h"
#include "gg_problem.h"
#include "gg_wgrad.h"

/* %globaltimer is far from zero on a GPU: every time below is offset by this. */
#define T0 1700000000000000000ull
#define US 1000ull

static GgTraceEvent event(int sm, int cta, int role, int tile, int start_us, int end_us, int computed) {
    GgTraceEvent e;
    memset(&e, 0, sizeof e);
    e.sm = sm;
    e.cta = cta;
    e.role = role;
    e.tile = tile;
    e.expert = tile % 3;
    e.row0 = 128 * tile;
    e.rows = 128;
    e.start = T0 + US * (uint64_t)start_us;
    e.mark = e.start + US;
    e.end = T0 + US * (uint64_t)end_us;
    e.computed = computed;
    return e;
}

/* Five SMs over 0..100 us. Busy time per SM (the union of its computing consumers' tiles):
 *   SM 0: consumer 0 on [2, 50] and [50, 100], consumer 1 on [2, 100]   -> 98, idle at 100
 *   SM 1: [2, 40], [50, 90]                                             -> 78, idle at 90
 *   SM 2: [3, 80], then an idle tile (computed 0) on [80, 95]           -> 77, idle at 80
 *   SM 3: CTA 3 on [2, 40] and CTA 4, started while 3 runs, on [22, 70] -> 68, idle at 70
 *   SM 4: nothing.
 * busy = 321 / (5 x 100), tail = 100 - 70, imbalance = 98 / (321 / 5). */
static const int N_EVENTS = 15;
static void synthetic(GgTraceEvent *ev) {
    int i = 0;
    ev[i++] = event(0, 0, GG_TRACE_SETUP, -1, 0, 2, 0);
    ev[i++] = event(1, 1, GG_TRACE_SETUP, -1, 0, 2, 0);
    ev[i++] = event(2, 2, GG_TRACE_SETUP, -1, 1, 3, 0);
    ev[i++] = event(3, 3, GG_TRACE_SETUP, -1, 0, 2, 0);
    ev[i++] = event(3, 4, GG_TRACE_SETUP, -1, 20, 22, 0);
    ev[i++] = event(0, 0, GG_TRACE_PRODUCER, 0, 2, 90, 1); /* producers are never "busy" */
    ev[i++] = event(0, 0, GG_TRACE_CONSUMER, 0, 2, 50, 1);
    ev[i++] = event(0, 0, GG_TRACE_CONSUMER, 5, 50, 100, 1);
    ev[i++] = event(0, 0, GG_TRACE_CONSUMER + 1, 0, 2, 100, 1);
    ev[i++] = event(1, 1, GG_TRACE_CONSUMER, 1, 2, 40, 1);
    ev[i++] = event(1, 1, GG_TRACE_CONSUMER, 6, 50, 90, 1);
    ev[i++] = event(2, 2, GG_TRACE_CONSUMER, 2, 3, 80, 1);
    ev[i++] = event(2, 2, GG_TRACE_CONSUMER, 7, 80, 95, 0);
    ev[i++] = event(3, 3, GG_TRACE_CONSUMER, 3, 2, 40, 1);
    ev[i++] = event(3, 4, GG_TRACE_CONSUMER, 4, 22, 70, 1);
    ck_assert_int_eq(i, N_EVENTS);
}

START_TEST(summary_of_a_known_trace) {
    GgTraceEvent ev[15];
    synthetic(ev);
    GgTraceSummary s;
    ck_assert_int_eq(gg_trace_summarize(ev, N_EVENTS, 5, &s), 0);
    ck_assert_int_eq(s.sms, 5);
    ck_assert_int_eq(s.sms_idle, 1);
    ck_assert_int_eq(s.tiles, 8);
    ck_assert_double_eq_tol(s.kernel_us, 100.0, 1e-9);
    ck_assert_double_eq_tol(s.busy_fraction, 321.0 / 500.0, 1e-12);
    ck_assert_double_eq_tol(s.first_idle_us, 70.0, 1e-9);
    ck_assert_double_eq_tol(s.tail_us, 30.0, 1e-9);
    ck_assert_double_eq_tol(s.imbalance, 98.0 / (321.0 / 5.0), 1e-12);
}
END_TEST

START_TEST(summary_counts_sm_ids_past_the_device) {
    GgTraceEvent ev[15];
    synthetic(ev);
    GgTraceSummary s;
    ck_assert_int_eq(gg_trace_summarize(ev, N_EVENTS, 2, &s), 0); /* %smid need not be dense */
    ck_assert_int_eq(s.sms, 4);
    ck_assert_int_eq(s.sms_idle, 0);
    ck_assert_double_eq_tol(s.busy_fraction, 321.0 / 400.0, 1e-12);
}
END_TEST

START_TEST(empty_trace_is_an_error) {
    GgTraceSummary s;
    ck_assert_int_eq(gg_trace_summarize(NULL, 0, 132, &s), GG_EXIT_USAGE);
    ck_assert_ptr_nonnull(strstr(gg_error(), "no events"));
}
END_TEST

START_TEST(lanes_separate_concurrent_ctas) {
    GgTraceEvent ev[15];
    synthetic(ev);
    int lane[15];
    ck_assert_int_eq(gg_trace_lanes(ev, N_EVENTS, lane), 0);
    for (int i = 0; i < N_EVENTS; ++i) ck_assert_int_eq(lane[i], ev[i].cta == 4 ? 1 : 0);
    ev[14].start = ev[4].start = T0 + 40 * US; /* CTA 4 starts as CTA 3 ends: its slot is free */
    ck_assert_int_eq(gg_trace_lanes(ev, N_EVENTS, lane), 0);
    ck_assert_int_eq(lane[14], 0);
}
END_TEST

static char *write_to_string(int json) {
    GgTraceEvent ev[15];
    synthetic(ev);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(json ? gg_trace_write_json(f, ev, NULL, N_EVENTS, "synthetic") : gg_trace_write_csv(f, ev, N_EVENTS), 0);
    const long size = ftell(f);
    char *text = calloc((size_t)size + 1, 1);
    rewind(f);
    ck_assert_int_eq((long)fread(text, 1, (size_t)size, f), size);
    fclose(f);
    return text;
}

START_TEST(csv_rows_in_ns_from_kernel_start) {
    char *csv = write_to_string(0);
    ck_assert_ptr_nonnull(strstr(csv, "sm,lane,cta,role,tile,expert,row0,rows,col0,computed,start_ns,mark_ns,end_ns\n"));
    ck_assert_ptr_nonnull(strstr(csv, "\n3,1,4,consumer0,4,1,512,128,0,1,22000,23000,70000\n"));
    ck_assert_ptr_nonnull(strstr(csv, "\n0,0,0,consumer1,0,0,0,128,0,1,2000,3000,100000\n"));
    ck_assert_ptr_nonnull(strstr(csv, "\n2,0,2,setup,-1,"));
    int rows = 0;
    for (const char *p = csv; *p; ++p) rows += *p == '\n';
    ck_assert_int_eq(rows, N_EVENTS + 1);
    free(csv);
}
END_TEST

START_TEST(json_one_process_per_sm_one_thread_per_slot_and_role) {
    char *json = write_to_string(1);
    ck_assert_ptr_eq(strstr(json, "{\"traceEvents\": [\n"), json); /* first: older Perfetto stops at unknown keys */
    ck_assert_ptr_null(strstr(json, "displayTimeUnit"));        /* older Perfetto took "ns" as ts's unit */
    ck_assert_ptr_null(strstr(json, "\"pid\": 0,"));             /* Perfetto's idle task */
    ck_assert_ptr_nonnull(strstr(json, "\"args\": {\"name\": \"SM 3\"}"));
    ck_assert_ptr_nonnull(strstr(json, "\"args\": {\"name\": \"slot 1 consumer0\"}"));
    ck_assert_ptr_nonnull(strstr(json, "\"ts\": 22.000, \"dur\": 48.000"));
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"idle tile 7: expert 1\""));
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"first full wait\""));
    ck_assert_ptr_null(strstr(json, "SM 4"));
    const size_t len = strlen(json);
    const char *end = "\n], \"otherData\": {\"title\": \"synthetic\"}}\n";
    ck_assert_uint_gt(len, strlen(end));
    ck_assert_str_eq(json + len - strlen(end), end);
    free(json);
}
END_TEST

/* ggemm trace --from: a trace.csv read back gives the JSON the GPU run wrote from the events. */
START_TEST(csv_read_back_gives_the_same_json) {
    GgTraceEvent ev[15];
    synthetic(ev);
    char path[] = "/tmp/gg_trace_csv_XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_int_eq(gg_trace_write_csv(f, ev, N_EVENTS), 0);
    fclose(f);
    GgTraceEvent *back;
    int *lane;
    long n;
    ck_assert_msg(gg_trace_read_csv(path, &back, &lane, &n) == 0, "%s", gg_error());
    unlink(path);
    ck_assert_int_eq(n, N_EVENTS);
    char *direct = write_to_string(1), *read_back;
    size_t size;
    f = open_memstream(&read_back, &size);
    ck_assert_int_eq(gg_trace_write_json(f, back, lane, n, "synthetic"), 0);
    fclose(f);
    ck_assert_str_eq(read_back, direct);
    free(direct);
    free(read_back);
    free(back);
    free(lane);
}
END_TEST

/* The buffer holds every event a launch can record, whatever the split. */
START_TEST(capacity_bounds_every_schedule) {
    GgKernelInfo k3 = {.block_m = 0, .block_n = 192, .host_tiles = 0};
    GgLaunch l = {.tokens = 16384, .experts = 64, .k = 1024, .n = 2688, .num_sms = 132};
    ck_assert_int_eq(gg_trace_capacity(&k3, &l), (192 + 64) * 15 * GG_TRACE_ROLES + 132);
    const int one_row[8] = {1, 1, 1, 1, 1, 1, 1, 1}, uneven[4] = {4793, 0, 129, 65};
    const double skews[] = {0.0, 1.2, 3.0};
    for (int c = 0; c < 5; ++c) {
        GgProblem p;
        if (c < 3) ck_assert_int_eq(gg_problem_init(&p, 16384, 64, 1024, 2688, skews[c]), 0);
        else if (c == 3) ck_assert_int_eq(gg_problem_from_counts(&p, one_row, 8, 64, 200), 0);
        else ck_assert_int_eq(gg_problem_from_counts(&p, uneven, 4, 64, 2688), 0);
        l = (GgLaunch){.tokens = p.tokens, .experts = p.experts, .k = p.k, .n = p.n, .num_sms = 132};
        for (int bn = 128; bn <= 256; bn += 64) {
            k3.block_n = bn;
            /* Paired: every expert's row tiles rounded up to even, its column blocks too. */
            long worst = 0;
            for (int e = 0; e < p.experts; ++e)
                worst += (gg_m_tiles(&(GgProblem){.experts = 1, .m = &p.m[e]}, 128) + 1) / 2 * 2;
            worst *= (p.n + bn - 1) / bn + 1;
            ck_assert_int_ge(gg_trace_capacity(&k3, &l), worst * GG_TRACE_ROLES + l.num_sms);
        }
        GgKernelInfo k2 = {.block_m = 128, .block_n = 128, .host_tiles = 1};
        l.num_tiles = (int)gg_tile_count(&p, 128, 128);
        ck_assert_int_eq(gg_trace_capacity(&k2, &l), (long)l.num_tiles * (GG_TRACE_ROLES + 1));
        gg_problem_free(&p);
    }
}
END_TEST

/* The backward passes: dgrad's output tiles run over k (its output's columns), wgrad's events are
 * its work items (every expert's tiles times its splits), at the grid the kernel launches. */
START_TEST(capacity_bounds_backward) {
    const int skewed[10] = {3000, 1400, 600, 200, 64, 3, 0, 1, 1025, 2048}, one_row[4] = {1, 0, 1, 1};
    for (int c = 0; c < 4; ++c) {
        GgProblem p;
        if (c == 0) ck_assert_int_eq(gg_problem_from_counts(&p, skewed, 10, 256, 384), 0);
        else if (c == 1) ck_assert_int_eq(gg_problem_from_counts(&p, one_row, 4, 4096, 64), 0);
        else ck_assert_int_eq(gg_problem_init(&p, 16384, 64, 1024, 2688, c == 2 ? 0.0 : 3.0), 0);
        for (int sms = 8; sms <= 132; sms += 124) {
            const GgLaunch l = {.tokens = p.tokens, .experts = p.experts, .k = p.k, .n = p.n, .num_sms = sms};
            GgKernelInfo dgrad = {.block_m = 128, .block_n = 256, .pass = GG_PASS_DGRAD};
            const long dgrad_tiles = gg_m_tiles(&p, 128) * ((p.k + 255) / 256);
            ck_assert_int_ge(gg_trace_capacity(&dgrad, &l), dgrad_tiles * GG_TRACE_ROLES + sms);
            GgKernelInfo wgrad = {.block_m = 128, .block_n = 192, .block_k = 64, .pass = GG_PASS_WGRAD};
            const GgWgradParams w = gg_wgrad_params(p.experts, p.tokens, p.k, p.n, 128, 192, sms, 0);
            long items = 0;
            for (int e = 0; e < p.experts; ++e) items += gg_wgrad_items(&w, p.m[e]);
            ck_assert_int_ge(gg_trace_capacity(&wgrad, &l), items * GG_TRACE_ROLES + sms);
        }
        gg_problem_free(&p);
    }
}
END_TEST

Suite *trace_suite(void) {
    Suite *s = suite_create("trace");
    TCase *t = tcase_create("decode");
    tcase_add_test(t, summary_of_a_known_trace);
    tcase_add_test(t, summary_counts_sm_ids_past_the_device);
    tcase_add_test(t, empty_trace_is_an_error);
    tcase_add_test(t, lanes_separate_concurrent_ctas);
    tcase_add_test(t, csv_rows_in_ns_from_kernel_start);
    tcase_add_test(t, json_one_process_per_sm_one_thread_per_slot_and_role);
    tcase_add_test(t, csv_read_back_gives_the_same_json);
    tcase_add_test(t, capacity_bounds_every_schedule);
    tcase_add_test(t, capacity_bounds_backward);
    suite_add_tcase(s, t);
    return s;
}
