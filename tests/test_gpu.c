/* GPU tests. Without an argument (CTest `gpu_edge_shapes`, label gpu): every registered kernel
 * that can run on this GPU, and the peers, against the references over the edge shapes, and a
 * CUDA-graph replay with a changed split for the kernels that schedule on the device. With
 * `long` (CTest `gpu_long`, labels gpu and long): every kernel at the worklog's size, where the
 * one real bug of this repository showed (a race that no small shape exposed), with several
 * seeds. Exits 77 (skip) without a GPU. Runs with CK_FORK=no: CUDA state must not cross a fork. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"

static GgDeviceInfo dev;

static const char *impl_name(int i) {
    return i < gg_kernel_count ? gg_kernels[i].name : gg_peers[i - gg_kernel_count].name;
}

/* 1 if the check ran and passed; 0 (with a note) if this implementation cannot run here. */
static int check_case(const char *name, const GgProblem *p, unsigned long long seed, int cpu_ref, const char *what) {
    GgImpl impl;
    ck_assert_int_eq(gg_impl_find(name, &impl), 0);
    GgCheck chk;
    GgTiming tm;
    char why[512];
    const GgRunOpts ro = {.seed = seed, .check = 1, .cpu_ref = cpu_ref};
    const int rc = gg_run_case(&impl, p, &dev, &ro, &chk, &tm, why, sizeof why);
    if (rc == GG_EXIT_NO_GPU || (rc == GG_EXIT_USAGE && impl.peer && impl.peer->script)) {
        printf("  %s: not here (%s)\n", name, why); /* another GPU's kernel, or the Python peer */
        return 0;
    }
    ck_assert_msg(rc == GG_EXIT_OK, "%s on '%s' (seed %llu): %s", name, what, seed, why);
    if (cpu_ref) ck_assert_msg(chk.cpu_ref, "%s on '%s': fp64 CPU reference not used", name, what);
    return 1;
}

START_TEST(edge_shapes) {
    for (int s = 0; s < gg_edge_shape_count; ++s) {
        const GgEdgeShape *e = &gg_edge_shapes[s];
        GgProblem p;
        ck_assert_int_eq(gg_problem_from_counts(&p, e->m, e->experts, e->k, e->n), 0);
        const int ran = check_case(impl_name(_i), &p, 1234 + s, 1, e->what);
        gg_problem_free(&p);
        if (!ran) return;
    }
}
END_TEST

/* Device-scheduled kernels: capture once, change m_e, replay, and the result follows. */
START_TEST(graph_replay_new_split) {
    GgImpl impl;
    char why[512];
    ck_assert_int_eq(gg_impl_find(gg_kernels[_i].name, &impl), 0);
    if (impl.info.host_tiles || !gg_impl_runs_here(&impl, dev.cc_major, dev.cc_minor, why, sizeof why)) return;
    const int before[] = {300, 0, 1, 211, 0, 512, 7, 1};
    const int after[] = {0, 517, 64, 1, 128, 0, 300, 22};
    GgProblem p, q;
    gg_problem_from_counts(&p, before, 8, 256, 384);
    gg_problem_from_counts(&q, after, 8, 256, 384);
    ck_assert_int_eq(p.tokens, q.tokens);
    GgCheck chk;
    const int rc = gg_graph_replay_check(&impl, &p, &q, 99, &chk, why, sizeof why);
    ck_assert_msg(rc == GG_EXIT_OK, "%s: %s", impl.name, why);
    gg_problem_free(&p);
    gg_problem_free(&q);
}
END_TEST

/* The worklog's size: 16384 rows, K 1024 and 8192, s 0 and 1.2, three seeds each. */
START_TEST(long_worklog_sizes) {
    static const struct {
        int k;
        double skew;
    } sizes[] = {{1024, 0.0}, {1024, 1.2}, {8192, 0.0}, {8192, 1.2}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        GgProblem p;
        ck_assert_int_eq(gg_problem_init(&p, 16384, 64, sizes[s].k, 2688, sizes[s].skew), 0);
        char what[64];
        snprintf(what, sizeof what, "16384 rows, k %d, skew %g", sizes[s].k, sizes[s].skew);
        int ran = 1;
        for (unsigned long long seed = 1; ran && seed <= 3; ++seed)
            ran = check_case(gg_kernels[_i].name, &p, 7000 + 10 * s + seed, 0, what);
        gg_problem_free(&p);
        if (!ran) return;
    }
}
END_TEST

int main(int argc, char **argv) {
    const int long_run = argc > 1 && !strcmp(argv[1], "long");
    char why[256];
    if (gg_device_open(&dev, why, sizeof why) != GG_EXIT_OK) {
        printf("skip: %s\n", why);
        return GG_EXIT_NO_GPU;
    }
    printf("GPU: %s (sm_%d%d)\n", dev.name, dev.cc_major, dev.cc_minor);
    Suite *s = suite_create("gpu");
    TCase *t = tcase_create(long_run ? "long" : "edge_shapes");
    tcase_set_timeout(t, 1800);
    if (long_run) {
        tcase_add_loop_test(t, long_worklog_sizes, 0, gg_kernel_count);
    } else {
        tcase_add_loop_test(t, edge_shapes, 0, gg_kernel_count + gg_peer_count);
        tcase_add_loop_test(t, graph_replay_new_split, 0, gg_kernel_count);
    }
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_set_fork_status(r, CK_NOFORK);
    srunner_run_all(r, CK_VERBOSE);
    const int failed = srunner_ntests_failed(r);
    srunner_free(r);
    gg_release_buffers();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
