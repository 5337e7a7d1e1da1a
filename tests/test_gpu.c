/* GPU tests (CTest label `gpu`): every registered kernel that can run on this GPU, and
 * the peers, against the references over the edge shapes; a CUDA-graph replay with a
 * changed split for the kernels that schedule on the device. Exits 77 (skip) without a
 * GPU. Runs with CK_FORK=no (set by CTest): CUDA state must not cross a fork. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"

static GgDeviceInfo dev;

typedef struct {
    const char *what;
    int k, n;
    int experts;
    int m[16];
} EdgeShape;

/* k is a multiple of 64 (every stage's BLOCK_K divides it); n a multiple of 8. */
static const EdgeShape shapes[] = {
    {"empty experts, 1-row experts, m not a multiple of BM", 256, 384, 8, {0, 1, 130, 0, 64, 1, 257, 3}},
    {"all rows in one expert", 128, 256, 4, {0, 0, 777, 0}},
    {"minimum-aligned k and n", 64, 8, 3, {5, 0, 70}},
    {"n not a multiple of any BLOCK_N", 192, 200, 5, {129, 2, 0, 63, 300}},
    {"fewer rows than experts", 64, 136, 8, {1, 1, 1, 1, 1, 0, 0, 0}},
    {"every expert empty", 64, 64, 3, {0, 0, 0}},
};

static void run_all_shapes(const char *name) {
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        GgProblem p;
        ck_assert_int_eq(gg_problem_from_counts(&p, shapes[s].m, shapes[s].experts, shapes[s].k, shapes[s].n), 0);
        GgCheck chk;
        GgTiming tm;
        char why[512];
        const int rc = gg_run_case(name, &p, &dev, 1234 + s, 1, 1, 0, 0, &chk, &tm, why, sizeof why);
        if (rc == GG_EXIT_NO_GPU) { /* e.g. an sm_100a kernel on a Hopper GPU */
            printf("  %s: not on this GPU (%s)\n", name, why);
            gg_problem_free(&p);
            return;
        }
        ck_assert_msg(rc == GG_EXIT_OK, "%s on '%s': %s", name, shapes[s].what, why);
        ck_assert_msg(chk.cpu_ref, "%s on '%s': fp64 CPU reference not used", name, shapes[s].what);
        gg_problem_free(&p);
    }
}

START_TEST(kernel_edge_shapes) { run_all_shapes(gg_kernels[_i].name); }
END_TEST

START_TEST(peer_edge_shapes) { run_all_shapes(gg_peers[_i].name); }
END_TEST

/* Device-scheduled kernels: capture once, change m_e, replay, and the result follows. */
START_TEST(graph_replay_new_split) {
    const GgKernel *k = &gg_kernels[_i];
    char why[512];
    GgKernelInfo info;
    k->info(&info);
    if (info.host_tiles || !gg_kernel_arch_ok(k, dev.cc_major, dev.cc_minor, why, sizeof why)) return;
    const int before[] = {300, 0, 1, 211, 0, 512, 7, 1};
    const int after[] = {0, 517, 64, 1, 128, 0, 300, 22};
    GgProblem p, q;
    gg_problem_from_counts(&p, before, 8, 256, 384);
    gg_problem_from_counts(&q, after, 8, 256, 384);
    ck_assert_int_eq(p.tokens, q.tokens);
    GgCheck chk;
    const int rc = gg_graph_replay_check(k->name, &p, &q, 99, &chk, why, sizeof why);
    ck_assert_msg(rc == GG_EXIT_OK, "%s: %s", k->name, why);
    gg_problem_free(&p);
    gg_problem_free(&q);
}
END_TEST

int main(void) {
    char why[256];
    if (gg_device_open(&dev, why, sizeof why) != GG_EXIT_OK) {
        printf("skip: %s\n", why);
        return GG_EXIT_NO_GPU;
    }
    printf("GPU: %s (sm_%d%d)\n", dev.name, dev.cc_major, dev.cc_minor);
    Suite *s = suite_create("gpu");
    TCase *t = tcase_create("edge_shapes");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, kernel_edge_shapes, 0, gg_kernel_count);
    tcase_add_loop_test(t, peer_edge_shapes, 0, gg_peer_count);
    tcase_add_loop_test(t, graph_replay_new_split, 0, gg_kernel_count);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_set_fork_status(r, CK_NOFORK);
    srunner_run_all(r, CK_VERBOSE);
    const int failed = srunner_ntests_failed(r);
    srunner_free(r);
    gg_release_buffers();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
