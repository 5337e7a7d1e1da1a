/* GPU tests. Without an argument (CTest `gpu_edge_shapes`, label gpu): every registered kernel
 * that can run on this GPU, and the peers, against the references over the edge shapes, and a
 * CUDA-graph replay with a changed split for the kernels that schedule on the device, and the
 * traced twins' records (every tile once per consumer, ordered spans, overflow reported). With
 * `long` (CTest `gpu_long`, labels gpu and long): every kernel at the worklog's size, where the
 * one real bug of this repository showed (a race that no small shape exposed), with several
 * seeds. Exits 77 (skip) without a GPU. Runs with CK_FORK=no: CUDA state must not cross a fork.
 * GG_TEST_KERNELS="k5_dgrad*,k5_wgrad" (shell patterns) limits the kernel tests to those names;
 * CK_RUN_CASE=edge_shapes (or moe) runs one case. */
#define _POSIX_C_SOURCE 200809L /* strtok_r, fnmatch */
#include <check.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"
#include "gg_launch.h"
#include "gg_moe.h"
#include "gg_wgrad.h"
#include "k5_backward/k5_backward.h"

static GgDeviceInfo dev;

static const char *impl_name(int i) {
    return i < gg_kernel_count ? gg_kernels[i].name : gg_peers[i - gg_kernel_count].name;
}

/* GG_TEST_KERNELS (comma-separated shell patterns, e.g. "k5_dgrad*,k3_wgmma"): the edge-shape case's
 * kernel tests (not `long`) run only the implementations it names, so that a device call with little time can check what changed.
 * Unset: all of them. */
static int selected(int i) {
    const char *list = getenv("GG_TEST_KERNELS");
    if (!list || !*list) return 1;
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) return 1; /* too long to read: run it */
    for (char *save = NULL, *pat = strtok_r(buf, ",", &save); pat; pat = strtok_r(NULL, ",", &save))
        if (!fnmatch(pat, impl_name(i), 0)) return 1;
    return 0;
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

/* gg_launch_gpu from many threads at once, each its first question on this device: every one
 * gets this GPU's SMs and name (the per-device cache is shared, under one lock). */
static void *ask_gpu(void *out) {
    return gg_launch_gpu(NULL, out) == cudaSuccess ? out : NULL;
}
START_TEST(gpu_asked_from_threads) {
    enum { THREADS = 8 };
    pthread_t t[THREADS];
    GgGpu g[THREADS];
    for (int i = 0; i < THREADS; ++i) ck_assert_int_eq(pthread_create(&t[i], NULL, ask_gpu, &g[i]), 0);
    for (int i = 0; i < THREADS; ++i) {
        void *ok;
        pthread_join(t[i], &ok);
        ck_assert_ptr_nonnull(ok);
        ck_assert_int_eq(g[i].sms, dev.sms);
        ck_assert_str_eq(g[i].name, dev.name);
    }
}
END_TEST

/* The one refusal of an edge shape a kernel documents: the wgrad kernels' per-expert table in
 * shared memory holds K5_WGRAD_MAX_EXPERTS experts. They must refuse (one line), never compute. */
static int refused_by_design(const char *name, const GgProblem *p) {
    GgImpl impl;
    return p->experts > K5_WGRAD_MAX_EXPERTS && gg_impl_find(name, &impl) == 0 && impl.kernel &&
           impl.info.pass == GG_PASS_WGRAD;
}

START_TEST(edge_shapes) {
    if (!selected(_i)) return;
    for (int s = 0; s < gg_edge_shape_count; ++s) {
        const GgEdgeShape *e = &gg_edge_shapes[s];
        GgProblem p;
        ck_assert_int_eq(gg_edge_problem(e, &p), 0);
        if (refused_by_design(impl_name(_i), &p)) {
            GgImpl impl;
            char why[256];
            const GgShape shape = {p.tokens, p.experts, p.k, p.n};
            ck_assert_int_eq(gg_impl_find(impl_name(_i), &impl), 0);
            ck_assert_msg(!impl.kernel->can_implement(&shape, why, sizeof why), "%s accepts '%s'", impl.name, e->what);
            gg_problem_free(&p);
            continue;
        }
        const int ran = check_case(impl_name(_i), &p, 1234 + s, 1, e->what);
        gg_problem_free(&p);
        if (!ran) return;
    }
}
END_TEST

/* The wgrad tiles' two orders in one launch (gg_wgrad_k_first on this GPU's L2): the experts of
 * 2100 and 1025 rows have a dC_e too wide to stay in half an H100's or H200's L2, so their tiles go
 * k block first; the one of 300 rows and the tiny ones stay n block first. k = 320 leaves a partial
 * k block, n = 14344 a partial n block. cuBLAS only: fp64 on the CPU would take seconds per kernel. */
START_TEST(wgrad_tile_orders) {
    if (!selected(_i)) return;
    GgImpl impl;
    ck_assert_int_eq(gg_impl_find(gg_kernels[_i].name, &impl), 0);
    if (impl.info.pass != GG_PASS_WGRAD) return;
    const int m[] = {2100, 0, 1, 300, 1025};
    GgProblem p;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 5, 320, 14344), 0);
    GgGpu gpu;
    ck_assert_int_eq(gg_launch_gpu(NULL, &gpu), cudaSuccess);
    const GgWgradParams w =
        gg_wgrad_params(p.experts, p.tokens, p.k, p.n, impl.info.block_m, impl.info.block_n, gpu.sms, gpu.l2_bytes);
    if (gpu.l2_bytes >= 50L << 20 && gpu.l2_bytes <= 60L << 20) /* an H100's to an H200's: as above */
        for (int e = 0; e < 5; ++e)
            ck_assert_msg(gg_wgrad_k_first(&w, m[e]) == (e == 0 || e == 4), "expert %d of %d rows: k first %d on %ld "
                          "L2 bytes", e, m[e], gg_wgrad_k_first(&w, m[e]), gpu.l2_bytes);
    else
        printf("  %s: an L2 of %ld bytes, not an H100's or H200's: the orders are not asserted\n", impl.name,
               gpu.l2_bytes);
    check_case(impl.name, &p, 4321, 0, "two tile orders");
    gg_problem_free(&p);
}
END_TEST

/* A split last wave (k5_dgrad_tail_*, gg_tail_splits): grids of 13 and 20 CTAs (full waves, then
 * 2 to 4 pieces per tail tile), n = 1032 (17 k-blocks, the last partial: 2 pieces at most) and
 * 4104 (65), k = 392 (a partial column tile at any BLOCK_N), experts empty, of 1 row and not a
 * multiple of 128. Every case must split. Each shape is launched twice on one workspace, zeroed
 * once (gg_prepare), with fresh inputs and a poisoned output each time: the second launch works
 * only if the first left its tickets at zero. cuBLAS only (fp64 on the CPU would take seconds). */
START_TEST(dgrad_tail_split) {
    if (!selected(_i)) return;
    GgImpl impl;
    char why[512];
    ck_assert_int_eq(gg_impl_find(gg_kernels[_i].name, &impl), 0);
    if (!impl.info.tail_split || !gg_impl_runs_here(&impl, dev.cc_major, dev.cc_minor, why, sizeof why)) return;
    const int m[] = {300, 0, 1, 129, 64, 1000};
    const int n[] = {1032, 4104};
    for (int g = 0; g < 2; ++g)
        for (int j = 0; j < 2; ++j) {
            GgProblem p;
            ck_assert_int_eq(gg_problem_from_counts(&p, m, 6, 392, n[j]), 0);
            GgDeviceInfo d = dev;
            d.sms = g == 0 ? 13 : 20;
            GgProblem out = p; /* dA's tiles: k wide */
            out.n = p.k;
            const int tiles = (int)gg_tile_count(&out, 128, impl.info.block_n);
            const int grid = (int)gg_persistent_clusters(d.sms, p.tokens, p.experts, p.k, 128, impl.info.block_n);
            ck_assert_msg(gg_tail_splits(tiles, grid, (n[j] + 63) / 64) > 1, "%s: %d tiles on %d CTAs do not split",
                          impl.name, tiles, grid);
            GgLaunch l = {0};
            ck_assert_msg(gg_prepare(&impl, &p, &d, &l, why, sizeof why) == GG_EXIT_OK, "%s: %s", impl.name, why);
            for (int rep = 0; rep < 2; ++rep) {
                GgCheck chk;
                ck_assert_int_eq(gg_check_prepare(&l, &p, 77 + rep), 0);
                ck_assert_int_eq(gg_launch(&impl, &l), cudaSuccess);
                ck_assert_int_eq(cudaStreamSynchronize(l.stream), cudaSuccess);
                ck_assert_int_eq(gg_check_output(&l, &p, 0, &chk), 0);
                gg_check_describe(&chk, why, sizeof why);
                ck_assert_msg(chk.pass, "%s, n = %d on %d SMs, launch %d: %s", impl.name, n[j], d.sms, rep + 1, why);
            }
            gg_problem_free(&p);
        }
}
END_TEST

/* K tails: a kernel that accepts the shape computes it right; k3_wgmma must accept it. */
START_TEST(tail_shapes) {
    if (!selected(_i)) return;
    GgImpl impl;
    ck_assert_int_eq(gg_impl_find(impl_name(_i), &impl), 0);
    const int must = !strncmp(impl.name, "k3_wgmma", 8);
    for (int s = 0; s < gg_tail_shape_count; ++s) {
        const GgEdgeShape *e = &gg_tail_shapes[s];
        GgProblem p;
        ck_assert_int_eq(gg_edge_problem(e, &p), 0);
        const GgShape shape = {p.tokens, e->experts, e->k, e->n};
        char why[256];
        if (impl.kernel && !impl.kernel->can_implement(&shape, why, sizeof why)) {
            ck_assert_msg(!must, "%s refuses '%s': %s", impl.name, e->what, why);
            gg_problem_free(&p);
            continue;
        }
        const int ran = check_case(impl.name, &p, 4321 + s, 1, e->what);
        gg_problem_free(&p);
        if (!ran) return;
    }
}
END_TEST

/* Device-scheduled kernels: capture once, change m_e, replay, and the result follows. With 8
 * experts, and with 296 (the split repeated: two experts per group of the schedule's index). */
START_TEST(graph_replay_new_split) {
    if (!selected(_i)) return;
    GgImpl impl;
    char why[512];
    ck_assert_int_eq(gg_impl_find(gg_kernels[_i].name, &impl), 0);
    if (impl.info.host_tiles || !gg_impl_runs_here(&impl, dev.cc_major, dev.cc_minor, why, sizeof why)) return;
    /* 1300 and 1517 rows: k5_wgrad splits their reductions (ggemm tiles), so the replay also
     * reuses the fix-up tickets the first launch reset. */
    const int before[] = {1300, 0, 1, 211, 0, 512, 7, 1};
    const int after[] = {0, 1517, 64, 1, 128, 0, 300, 22};
    static int b[296], a[296];
    for (int e = 0; e < 296; ++e) {
        b[e] = before[e % 8];
        a[e] = after[e % 8];
    }
    for (int experts = 8; experts <= 296; experts += 288) {
        GgProblem p, q;
        gg_problem_from_counts(&p, b, experts, 256, 384);
        gg_problem_from_counts(&q, a, experts, 256, 384);
        ck_assert_int_eq(p.tokens, q.tokens);
        GgCheck chk;
        const int rc = gg_graph_replay_check(&impl, &p, &q, 99, &chk, why, sizeof why);
        ck_assert_msg(rc == GG_EXIT_OK, "%s, %d experts: %s", impl.name, experts, why);
        gg_problem_free(&p);
        gg_problem_free(&q);
    }
}
END_TEST

/* The wgrad kernels' traced twins: their events are work items (gg_wgrad.h), not output tiles.
 * On a split whose reductions split (1300 and 2100 rows: 2 and 3 items per tile), with empty and
 * 1-row experts and ragged last blocks of k and n: every item of the list, at the grid the kernel
 * launched, appears exactly once per consumer warpgroup (ping-pong, whole_tiles: once in all, by
 * its owner) with its expert, reduction rows and column, computed; and once for the producer,
 * computed where it has rows; no other item. */
static void trace_wgrad_items(const GgImpl *impl) {
    const int m[] = {1300, 0, 1, 211, 0, 2100, 7, 1, 129, 64};
    GgProblem p;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 10, 320, 456), 0);
    GgCheck chk;
    GgTrace tr;
    char why[512];
    const GgRunOpts ro = {.seed = 5, .check = 1, .warmup = 1};
    ck_assert_msg(gg_trace_case(impl, &p, &dev, &ro, 0, &chk, &tr, why, sizeof why) == GG_EXIT_OK, "%s: %s",
                  impl->name, why);
    const GgWgradParams w = gg_wgrad_params(p.experts, p.tokens, p.k, p.n, impl->info.block_m, impl->info.block_n,
                                            dev.sms, dev.l2_bytes);
    int item_start[11] = {0}, slot_start[11] = {0}, splits = 0;
    for (int e = 0; e < p.experts; ++e) {
        item_start[e + 1] = item_start[e] + gg_wgrad_items(&w, p.m[e]);
        slot_start[e + 1] = slot_start[e] + gg_wgrad_slots(&w, p.m[e]);
        splits += gg_wgrad_splits(&w, p.m[e]) > 1;
    }
    ck_assert_int_eq(splits, 2);
    const int items = item_start[p.experts];
    int *seen = calloc((size_t)items * GG_TRACE_ROLES, sizeof(int));
    for (long i = 0; i < tr.count; ++i) {
        const GgTraceEvent *e = &tr.events[i];
        ck_assert_msg(e->start <= e->mark && e->mark <= e->end, "%s: event %ld out of order", impl->name, i);
        if (e->role == GG_TRACE_SETUP) continue;
        ck_assert_msg(e->tile >= 0 && e->tile < items && e->role <= 2, "%s: event %ld: item %d role %d", impl->name,
                      i, e->tile, e->role);
        const GgWgradItem it = gg_wgrad_at(&w, item_start, slot_start, p.offsets, e->tile);
        ck_assert_msg(e->expert == it.expert && e->row0 == it.row0 && e->rows == it.rows && e->col0 == it.col0,
                      "%s: item %d recorded as expert %d rows %d+%d col %d", impl->name, e->tile, e->expert,
                      e->row0, e->rows, e->col0);
        ck_assert_int_eq(e->computed, e->role == GG_TRACE_PRODUCER ? it.rows > 0 : 1);
        seen[e->tile * GG_TRACE_ROLES + e->role]++;
    }
    for (int t = 0; t < items; ++t) {
        const int *by = seen + t * GG_TRACE_ROLES, consumers = by[GG_TRACE_CONSUMER] + by[GG_TRACE_CONSUMER + 1];
        ck_assert_msg(by[GG_TRACE_PRODUCER] == 1, "%s: item %d seen %d times by the producer", impl->name, t,
                      by[GG_TRACE_PRODUCER]);
        if (impl->info.whole_tiles)
            ck_assert_msg(consumers == 1, "%s: item %d seen %d times by its owner", impl->name, t, consumers);
        else
            ck_assert_msg(by[GG_TRACE_CONSUMER] == 1 && by[GG_TRACE_CONSUMER + 1] == 1,
                          "%s: item %d seen %d and %d times by the consumers", impl->name, t, by[GG_TRACE_CONSUMER],
                          by[GG_TRACE_CONSUMER + 1]);
    }
    free(seen);
    gg_trace_free(&tr);
    gg_problem_free(&p);
}

/* Traced twins: one traced launch of a split with empty, 1-row and ragged experts and a ragged
 * last column block (dgrad: of k, its output's columns; wgrad: trace_wgrad_items). Every tile of the problem appears exactly once per consumer role (a consumer
 * that only follows the ring still records it, computed 0), or, where the consumers own whole
 * tiles (ping-pong), exactly once in all, or, a split-tail kernel's last wave, once per piece (its
 * own shape: 2 pieces on 29 SMs); no other tile does except the idle halves of pairs (no
 * rows, or columns past n); every span is ordered, after its CTA's entry, inside the kernel's
 * span; every CTA records its set-up once. Ping-pong: a consumer's span starts at its turn, after
 * the CTA's previous tile has found its first full stage. */
START_TEST(trace_every_tile_once) {
    if (!selected(_i)) return;
    const GgKernel *k = &gg_kernels[_i];
    GgImpl impl;
    char why[512];
    ck_assert_int_eq(gg_impl_find(k->name, &impl), 0);
    if (!k->trace_launch || !gg_impl_runs_here(&impl, dev.cc_major, dev.cc_minor, why, sizeof why)) return;
    if (impl.info.pass == GG_PASS_WGRAD) {
        trace_wgrad_items(&impl);
        return;
    }
    const int m[] = {300, 0, 1, 211, 0, 512, 7, 1, 129, 64};
    GgProblem p;
    /* k: tiles of a few us. A split-tail kernel: a reduction of 17 k-blocks on 29 SMs, so that its
     * last wave (2 or 3 tiles at either width) goes in 2 pieces, each seen once per consumer. */
    GgDeviceInfo d = dev;
    if (impl.info.tail_split) d.sms = 29;
    ck_assert_int_eq(gg_problem_from_counts(&p, m, 10, 1024, impl.info.tail_split ? 1032 : 456), 0);
    const GgShape shape = {p.tokens, p.experts, p.k, p.n};
    gg_impl_resolve(&impl, &shape); /* an entry point: the tiles of the configuration it runs */
    const int bm = impl.info.block_m > 0 ? impl.info.block_m : 128;
    GgProblem out = p; /* the output's tiles: dgrad's are k wide */
    if (impl.info.pass == GG_PASS_DGRAD) out.n = p.k;
    const long count = gg_tile_count(&out, bm, impl.info.block_n);
    GgTile *tiles = malloc(sizeof(GgTile) * (size_t)count);
    gg_build_tiles(&out, bm, impl.info.block_n, tiles);
    GgCheck chk;
    GgTrace tr;
    const GgRunOpts ro = {.seed = 5, .check = 1, .warmup = 1};
    const int rc = gg_trace_case(&impl, &p, &d, &ro, 0, &chk, &tr, why, sizeof why);
    ck_assert_msg(rc == GG_EXIT_OK, "%s: %s", impl.name, why);
    int splits = 1, split_tiles = 0; /* a split-tail kernel's last wave: tiles seen once per piece */
    if (impl.info.tail_split) {
        const int grid = (int)gg_persistent_clusters(d.sms, out.tokens, out.experts, out.n, 128, impl.info.block_n);
        splits = gg_tail_splits((int)count, grid, (p.n + 63) / 64);
        ck_assert_msg(splits == 2, "%s: %ld tiles on %d CTAs in %d pieces", impl.name, count, grid, splits);
        split_tiles = (int)count % grid;
    }
    /* consumer warpgroups: two in k3 and k5 (k3's roles); k2's mma.sync warps are one role */
    const int consumers = strcmp(impl.stage, "k3_wgmma") && strcmp(impl.stage, "k5_backward") ? 1 : 2;
    int ctas = 0;
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (long i = 0; i < tr.count; ++i) {
        const GgTraceEvent *e = &tr.events[i];
        if (e->cta >= ctas) ctas = e->cta + 1;
        if (e->role == GG_TRACE_SETUP && e->start < t0) t0 = e->start;
        if (e->end > t1) t1 = e->end;
    }
    uint64_t *entry = calloc((size_t)ctas, sizeof(uint64_t));
    int *setups = calloc((size_t)ctas, sizeof(int)), *seen = calloc((size_t)(count * (consumers + 1)), sizeof(int));
    for (long i = 0; i < tr.count; ++i)
        if (tr.events[i].role == GG_TRACE_SETUP) {
            entry[tr.events[i].cta] = tr.events[i].start;
            setups[tr.events[i].cta]++;
        }
    for (long i = 0; i < tr.count; ++i) {
        const GgTraceEvent *e = &tr.events[i];
        ck_assert_msg(e->start <= e->mark && e->mark <= e->end, "%s: event %ld out of order", impl.name, i);
        ck_assert_msg(e->start >= t0 && e->end <= t1, "%s: event %ld outside the kernel", impl.name, i);
        if (e->role == GG_TRACE_SETUP) continue;
        ck_assert_msg(e->start < e->end, "%s: tile event %ld has no length", impl.name, i);
        ck_assert_msg(setups[e->cta] == 1 && e->start >= entry[e->cta], "%s: event %ld before its CTA's entry",
                      impl.name, i);
        ck_assert_int_le(e->role, consumers);
        if (e->role == GG_TRACE_PRODUCER || e->rows == 0 || e->col0 >= out.n) continue; /* idle pair halves */
        long t = 0;
        while (t < count && !(tiles[t].expert == e->expert && tiles[t].row0 == e->row0 && tiles[t].col0 == e->col0))
            ++t;
        ck_assert_msg(t < count, "%s: expert %d row0 %d col0 %d is no tile", impl.name, e->expert, e->row0, e->col0);
        ck_assert_int_eq(e->rows, tiles[t].rows);
        seen[t * (consumers + 1) + e->role]++;
    }
    for (long t = 0; t < count; ++t) {
        int by_all = 0; /* ping-pong (whole_tiles): one consumer per tile; else each its share */
        const int times = splits > 1 && seen[t * (consumers + 1) + GG_TRACE_CONSUMER] == splits ? splits : 1;
        split_tiles -= times > 1;
        for (int r = GG_TRACE_CONSUMER; r <= consumers; ++r) {
            by_all += seen[t * (consumers + 1) + r];
            if (!impl.info.whole_tiles)
                ck_assert_msg(seen[t * (consumers + 1) + r] == times, "%s: tile %ld seen %d times by consumer %d",
                              impl.name, t, seen[t * (consumers + 1) + r], r - GG_TRACE_CONSUMER);
        }
        if (impl.info.whole_tiles)
            ck_assert_msg(by_all == 1, "%s: whole tile %ld seen %d times", impl.name, t, by_all);
    }
    ck_assert_msg(split_tiles == 0, "%s: %d last-wave tiles not seen in pieces", impl.name, split_tiles);
    for (long i = 0; impl.info.whole_tiles && i < tr.count; ++i) {
        const GgTraceEvent *e = &tr.events[i], *prev = NULL;
        if (e->role < GG_TRACE_CONSUMER) continue;
        for (long j = 0; j < tr.count; ++j) { /* the CTA's consumer tile just before e's */
            const GgTraceEvent *f = &tr.events[j];
            if (f->role >= GG_TRACE_CONSUMER && f->cta == e->cta && f->tile < e->tile &&
                (!prev || f->tile > prev->tile))
                prev = f;
        }
        ck_assert_msg(!prev || e->start >= prev->mark, "%s: CTA %d tile %d starts before tile %d's first stage",
                      impl.name, e->cta, e->tile, prev ? prev->tile : -1);
    }
    free(entry);
    free(setups);
    free(seen);
    free(tiles);
    gg_trace_free(&tr);
    gg_problem_free(&p);
}
END_TEST

/* A buffer too small for the launch: the overflow is an error that says how many events came. */
START_TEST(trace_overflow_reported) {
    const char *names[] = {"k2_tma_ws_s3", "k3_wgmma"};
    GgImpl impl;
    char why[512];
    ck_assert_int_eq(gg_impl_find(names[_i], &impl), 0);
    if (!gg_impl_runs_here(&impl, dev.cc_major, dev.cc_minor, why, sizeof why)) return;
    GgProblem p;
    ck_assert_int_eq(gg_problem_init(&p, 4096, 8, 256, 768, 0.5), 0);
    GgCheck chk;
    GgTrace tr;
    const GgRunOpts ro = {.seed = 6, .check = 1};
    const int rc = gg_trace_case(&impl, &p, &dev, &ro, 10, &chk, &tr, why, sizeof why);
    ck_assert_msg(rc == GG_EXIT_CHECK && strstr(why, "overflow"), "%s: rc %d, %s", impl.name, rc, why);
    ck_assert_int_eq(tr.count, 10);
    ck_assert_int_gt(tr.attempted, 10);
    ck_assert(chk.pass); /* tracing into a full buffer leaves the result alone */
    gg_trace_free(&tr);
    gg_problem_free(&p);
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

/* The MoE layer (k4_moe) runs on sm_90 only; elsewhere its tests say so and pass. */
static int moe_here(void) {
    if (dev.cc_major == 9 && dev.cc_minor == 0) return 1;
    printf("  k4_moe: not here (sm_90a kernels, this GPU is sm_%d%d)\n", dev.cc_major, dev.cc_minor);
    return 0;
}

/* Forward, check (fp64 CPU reference included), one layer shape, one path (fused: with `gather`). */
static void moe_check_layer(const GgMoeShape *s, int fused, K4Gather gather, unsigned long long seed, int cpu_ref,
                            const char *what) {
    GgMoeRun r;
    GgMoeCheck chk;
    const char *path = fused ? k4_gather_names[gather] : "unfused";
    ck_assert_msg(gg_moe_open(&r, s, dev.sms) == 0 && gg_moe_fill(&r, seed) == 0, "%s: %s", what, gg_error());
    r.layer.gather = gather;
    ck_assert_int_eq(gg_moe_poison(&r), 0);
    ck_assert_int_eq(k4_moe_forward(&r.layer, fused, NULL), cudaSuccess);
    const int rc = gg_moe_check(&r, cpu_ref, &chk);
    gg_moe_close(&r);
    ck_assert_msg(rc == 0, "k4_moe %s on '%s': %s", path, what, gg_error());
    ck_assert_msg(chk.pass, "k4_moe %s on '%s' (seed %llu): %s", path, what, seed, chk.why);
    if (cpu_ref && s->tokens > 0) ck_assert_msg(chk.cpu_ref, "k4_moe on '%s': fp64 CPU reference not used", what);
}

/* Every edge layer, both paths; the fused one with every gather this build has (the ablations
 * with GG_ABLATIONS, k4_moe/TRIALS.md). */
START_TEST(moe_edge_layers) {
    if (!moe_here()) return;
    for (int i = 0; i < gg_moe_edge_layer_count; ++i) {
        const GgMoeEdgeLayer *e = &gg_moe_edge_layers[i];
        moe_check_layer(&e->s, 0, K4_GATHER_DEFAULT, 300 + i, 1, e->what);
        for (int g = 0; g < K4_GATHERS; ++g)
            if (k4_gather_built((K4Gather)g)) moe_check_layer(&e->s, 1, (K4Gather)g, 300 + i, 1, e->what);
    }
}
END_TEST

/* The whole layer captured in one CUDA graph, replayed, then replayed again after a new X:
 * new routing, new rows per expert, the same graph. */
START_TEST(moe_graph_replay_new_routing) {
    if (!moe_here()) return;
    const GgMoeShape s = {700, 256, 256, 64, 8, 1};
    for (int fused = 0; fused < 2; ++fused) {
        GgMoeRun r;
        GgMoeCheck a, b;
        ck_assert_msg(gg_moe_open(&r, &s, dev.sms) == 0 && gg_moe_fill(&r, 41) == 0, "%s", gg_error());
        const int rc = gg_moe_graph_replay_check(&r, fused, 42, &a, &b);
        gg_moe_close(&r);
        ck_assert_msg(rc == 0, "k4_moe graph (%s): %s", fused ? "fused" : "unfused", gg_error());
        ck_assert_msg(a.pass, "k4_moe graph (%s), first replay: %s", fused ? "fused" : "unfused", a.why);
        ck_assert_msg(b.pass, "k4_moe graph (%s), replay with a new X: %s", fused ? "fused" : "unfused", b.why);
    }
}
END_TEST

/* Route and permute alone, any expert count up to the router's limit (odd, not a multiple of 8,
 * one, thousands), against the fp64 logits (on the CPU where small) and the CPU permutation;
 * d alternates a multiple of 64 and one with a k tail (d % 64 != 0), top-k = E once. */
START_TEST(moe_routing_any_experts) {
    if (!moe_here()) return;
    static const int experts[] = {1, 5, 8, 64, 256, 512, 1000, 4096};
    for (size_t i = 0; i < sizeof experts / sizeof experts[0]; ++i) {
        const int e = experts[i], topk = e == 5 ? 5 : e < 8 ? e : 8;
        const GgMoeShape shapes[] = {{333, i % 2 ? 200 : 256, 64, e, topk, (int)(i % 2)}, {1, 64, 64, e, 1, 1}};
        for (size_t j = 0; j < 2; ++j) {
            GgMoeCheck chk;
            const int rc = gg_moe_routing_check(&shapes[j], dev.sms, 500 + i, 1, &chk);
            ck_assert_msg(rc == 0, "routing, %d experts: %s", e, gg_error());
            ck_assert_msg(chk.pass, "routing, %d experts, T %d, d %d: %s", e, shapes[j].tokens, shapes[j].d, chk.why);
        }
    }
}
END_TEST

/* The layer shape whose bf16 router failed its check (issue 27): DeepSeek-V3-like routing (256
 * experts, top-8, d = 7168, T = 1024) over five seeds, and 512 experts at the same d. */
START_TEST(moe_routing_wide_seeds) {
    if (!moe_here()) return;
    const GgMoeShape shapes[] = {{1024, 7168, 2048, 256, 8, 1}, {1024, 7168, 2048, 512, 8, 1}};
    for (size_t i = 0; i < 2; ++i)
        for (unsigned long long seed = 1; seed <= 5; ++seed) {
            GgMoeCheck chk;
            const int rc = gg_moe_routing_check(&shapes[i], dev.sms, seed, 0, &chk);
            ck_assert_msg(rc == 0, "routing, %d experts: %s", shapes[i].experts, gg_error());
            ck_assert_msg(chk.pass, "routing, %d experts, seed %llu: %s", shapes[i].experts, seed, chk.why);
        }
}
END_TEST

/* Long: the DeepSeek-V3-like layer, whole, both paths, three seeds. */
START_TEST(moe_long_deepseek) {
    if (!moe_here()) return;
    const GgMoeShape s = {1024, 7168, 2048, 256, 8, 1};
    for (unsigned long long seed = 1; seed <= 3; ++seed)
        for (int fused = 0; fused < 2; ++fused)
            moe_check_layer(&s, fused, K4_GATHER_DEFAULT, 9100 + seed, 0, "deepseek-v3-like");
}
END_TEST

/* Long: every model of the table (k4_moe.c: gpt-oss's F / 64 odd, 128 to 384 experts, d up to
 * 7168) at T = 4096, both paths, two seeds (cuBLAS reference only). */
START_TEST(moe_long_models) {
    if (!moe_here()) return;
    for (int m = 0; m < gg_moe_model_count; ++m) {
        const GgMoeModel *md = &gg_moe_models[m];
        const GgMoeShape s = {4096, md->d, md->f, md->experts, md->topk, md->renorm};
        for (unsigned long long seed = 1; seed <= 2; ++seed)
            for (int fused = 0; fused < 2; ++fused) moe_check_layer(&s, fused, K4_GATHER_DEFAULT, 9000 + seed, 0, md->name);
    }
}
END_TEST

/* The layer's backward (k5_moe_backward): an unfused forward, a fresh dOut, the backward with
 * its gradients poisoned, then harness/moe_backward.c's check (the forward's first; dX, dWr, dW1,
 * dW2 against cuBLAS fp32 and, where cpu_ref and small, fp64 on the CPU). */
static void moe_check_backward(const GgMoeShape *s, unsigned long long seed, int cpu_ref, const char *what) {
    GgMoeRun r;
    GgMoeBwdRun b;
    GgMoeBwdCheck chk;
    char why[256];
    if (!k5_moe_backward_can_implement(s, why, sizeof why)) {
        printf("  k5_moe_backward on '%s': refused (%s)\n", what, why);
        return;
    }
    ck_assert_msg(gg_moe_open_unfused(&r, s, dev.sms) == 0 && gg_moe_fill(&r, seed) == 0, "%s: %s", what, gg_error());
    ck_assert_msg(gg_moe_bwd_open(&b, &r) == 0 && gg_moe_bwd_fill(&b, seed + 1) == 0, "%s: %s", what, gg_error());
    ck_assert_int_eq(gg_moe_poison(&r), 0);
    ck_assert_int_eq(k4_moe_forward(&r.layer, 0, NULL), cudaSuccess);
    ck_assert_int_eq(k5_moe_backward(&b.b, NULL), cudaSuccess);
    const int rc = gg_moe_bwd_check(&r, &b, cpu_ref, &chk);
    gg_moe_bwd_close(&b);
    gg_moe_close(&r);
    ck_assert_msg(rc == 0, "k5_moe_backward on '%s': %s", what, gg_error());
    char m[128];
    if (chk.forward_ok)
        printf("  k5_moe_backward on '%s' (seed %llu): worst error / bound, fp32/fp64 reference: %s\n", what, seed,
               gg_moe_bwd_margins(&chk, m, sizeof m));
    ck_assert_msg(chk.pass, "k5_moe_backward on '%s' (seed %llu): %s", what, seed, chk.why);
    const double macs = (double)s->tokens * s->topk * s->d * s->f * 9;
    if (cpu_ref && s->tokens > 0 && macs <= GG_MOE_BWD_CPU_REF_MACS)
        ck_assert_msg(chk.cpu_ref, "k5_moe_backward on '%s': fp64 CPU reference not used", what);
}

/* The backward again on the same workspace, where the layer's wgrad's split tiles take tickets
 * and its dynamic deal a counter, both left zero by each launch: a layer
 * whose dW2, dW1 and dWr reductions all split (tests/suite_moe_backward.c's splitting layers),
 * the backward run twice, then captured in a CUDA graph and replayed twice (a new dOut before the
 * second), gradients poisoned before each run and checked after it. Each wgrad launch must find
 * its tickets at zero in its own slice of the scratch: with one slice for the three, a launch's
 * tickets lay on another's partials and the second run's split tiles were never stored. */
START_TEST(moe_backward_again_and_in_a_graph) {
    if (!moe_here()) return;
    const GgMoeShape s = {20000, 128, 128, 8, 2, 1};
    GgKernelInfo w = {0};
    ck_assert_int_eq(k5_moe_wgrad_info(&w), cudaSuccess); /* the layer's wgrad configuration's tile */
    const GgWgradParams dw2 = gg_wgrad_params(s.experts, s.tokens * s.topk, s.f, s.d, w.block_m, w.block_n, dev.sms, 0),
                        dwr = gg_wgrad_params(1, s.tokens, s.d, k4_router_n(s.experts), w.block_m, w.block_n, dev.sms, 0);
    ck_assert_msg(gg_wgrad_max_slots(&dw2) > 0 && gg_wgrad_max_slots(&dwr) > 0, "the layer must split on %d SMs",
                  dev.sms);
    GgMoeRun r;
    GgMoeBwdRun b;
    ck_assert_msg(gg_moe_open_unfused(&r, &s, dev.sms) == 0 && gg_moe_fill(&r, 960) == 0, "%s", gg_error());
    ck_assert_msg(gg_moe_bwd_open(&b, &r) == 0 && gg_moe_bwd_fill(&b, 961) == 0, "%s", gg_error());
    ck_assert_int_eq(gg_moe_poison(&r), 0);
    ck_assert_int_eq(k4_moe_forward(&r.layer, 0, NULL), cudaSuccess);
    cudaStream_t st = r.layer.stream;
    cudaGraphExec_t exec = NULL;
    static const char *const runs[] = {"first run", "second run", "graph replay", "graph replay, new dOut"};
    for (int run = 0; run < 4; ++run) {
        if (run == 3) ck_assert_int_eq(gg_moe_bwd_fill(&b, 962), 0); /* new dOut, gradients NaN */
        else ck_assert_int_eq(gg_moe_bwd_poison(&b), 0);
        if (run == 2) { /* capture once, after two runs on the stream */
            cudaGraph_t graph = NULL;
            ck_assert_int_eq(cudaStreamSynchronize(st), cudaSuccess);
            ck_assert_int_eq(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), cudaSuccess);
            const cudaError_t be = k5_moe_backward(&b.b, NULL), ce = cudaStreamEndCapture(st, &graph);
            ck_assert_msg(be == cudaSuccess && ce == cudaSuccess, "capturing the backward: %s",
                          cudaGetErrorString(be != cudaSuccess ? be : ce));
            ck_assert_int_eq(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
            cudaGraphDestroy(graph);
        }
        ck_assert_int_eq(run < 2 ? k5_moe_backward(&b.b, NULL) : cudaGraphLaunch(exec, st), cudaSuccess);
        GgMoeBwdCheck chk;
        const int rc = gg_moe_bwd_check(&r, &b, 0, &chk);
        ck_assert_msg(rc == 0, "k5_moe_backward, %s: %s", runs[run], gg_error());
        ck_assert_msg(chk.pass, "k5_moe_backward, %s: %s", runs[run], chk.why);
    }
    cudaGraphExecDestroy(exec);
    gg_moe_bwd_close(&b);
    gg_moe_close(&r);
}
END_TEST

/* Every edge layer (empty and 1-row experts, E = 1, top-k = E, no tokens, F / 64 odd, ...), raw
 * and renormalised weights; those past k5_wgrad's 1024 experts are refused with one line. */
START_TEST(moe_backward_edge_layers) {
    if (!moe_here()) return;
    for (int i = 0; i < gg_moe_edge_layer_count; ++i) {
        GgMoeShape s = gg_moe_edge_layers[i].s;
        moe_check_backward(&s, 700 + i, 1, gg_moe_edge_layers[i].what);
        s.renorm = !s.renorm;
        moe_check_backward(&s, 800 + i, 1, gg_moe_edge_layers[i].what);
    }
    const GgMoeShape one_expert = {37, 128, 64, 1, 1, 1}; /* E = 1: every row in one expert */
    moe_check_backward(&one_expert, 900, 1, "one expert");
}
END_TEST

/* Long: every model of the table at T = 4096, cuBLAS reference only. The largest, kimi-k2 (d 7168,
 * F 2048, 384 experts, top-8), at its peak of device memory (from the buffers' sizes): the
 * unfused layer 35.3 GB (W1 22.5, W2 11.3; no packed W1), the backward's buffers 35.0 GB (dW1
 * 22.5, dW2 11.3, workspace 1.0), then the larger of the forward's check (2.2 GB) and the
 * backward's reference (4.5 GB: the layer over its 32768 routed rows, one expert's fp32 dW1_e and
 * dW2_e), one after the other: 74.7 GB, plus the CUDA context and cuBLAS's workspace, inside an
 * H200's 141 GB (before the weight gradients went expert by expert: 165 GB). On the host, one
 * expert's block of each, 0.2 GB. */
START_TEST(moe_backward_long_models) {
    if (!moe_here()) return;
    for (int m = 0; m < gg_moe_model_count; ++m) {
        const GgMoeModel *md = &gg_moe_models[m];
        const GgMoeShape s = {4096, md->d, md->f, md->experts, md->topk, md->renorm};
        moe_check_backward(&s, 9500 + m, 0, md->name);
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
        tcase_add_loop_test(t, tail_shapes, 0, gg_kernel_count + gg_peer_count);
        tcase_add_loop_test(t, graph_replay_new_split, 0, gg_kernel_count);
        tcase_add_loop_test(t, wgrad_tile_orders, 0, gg_kernel_count);
        tcase_add_loop_test(t, dgrad_tail_split, 0, gg_kernel_count);
        tcase_add_loop_test(t, trace_every_tile_once, 0, gg_kernel_count);
        tcase_add_loop_test(t, trace_overflow_reported, 0, 2);
        tcase_add_test(t, gpu_asked_from_threads);
    }
    suite_add_tcase(s, t);
    /* The MoE layer in its own case (CK_RUN_CASE=moe or moe_long runs it alone). */
    TCase *moe = tcase_create(long_run ? "moe_long" : "moe");
    tcase_set_timeout(moe, 1800);
    if (long_run) {
        tcase_add_test(moe, moe_long_models);
        tcase_add_test(moe, moe_long_deepseek);
        tcase_add_test(moe, moe_backward_long_models);
    } else {
        tcase_add_test(moe, moe_edge_layers);
        tcase_add_test(moe, moe_graph_replay_new_routing);
        tcase_add_test(moe, moe_routing_any_experts);
        tcase_add_test(moe, moe_routing_wide_seeds);
        tcase_add_test(moe, moe_backward_edge_layers);
        tcase_add_test(moe, moe_backward_again_and_in_a_graph);
    }
    suite_add_tcase(s, moe);
    SRunner *r = srunner_create(s);
    srunner_set_fork_status(r, CK_NOFORK);
    srunner_run_all(r, CK_VERBOSE);
    const int failed = srunner_ntests_failed(r);
    srunner_free(r);
    gg_release_buffers();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
