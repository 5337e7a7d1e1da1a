/* ggemm grade: a report card for one kernel (a lab from labs/, or any registered configuration).
 * Correctness on the edge shapes (edge_shapes.c) and on the worklog's cases (set "stages" of
 * harness/cases.csv), checked as `ggemm run` checks; on each case it passes, its median time as
 * useful TFLOP/s and % of the roofline, and its speed against the best configuration of the stage
 * it belongs to and of the stage before, measured in this run on the same inputs. Lines are
 * printed as they come: a case that hangs is ended by a time limit, and the card stops there. */
#include <stdio.h>
#include <string.h>

#include "gg_commands.h"

enum { CASE_SECONDS = 60 }; /* the largest case takes a few seconds on the slowest stage */

static int run_case(const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro, GgCheck *chk,
                    GgTiming *tm, char *why, size_t len) {
    return gg_run_case_limited(CASE_SECONDS, impl, p, d, ro, chk, tm, why, len);
}

/* The stage registered just before `stage`, or NULL for the first. */
static const char *previous_stage(const char *stage) {
    const char *prev = NULL;
    for (int i = 0; i < gg_kernel_count && strcmp(gg_kernels[i].stage, stage); ++i) prev = gg_kernels[i].stage;
    return prev;
}

/* The fastest passing configuration of `stage` on p: its median time (0 if none runs here). */
static double stage_best(const char *stage, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro,
                         const char **best) {
    double best_us = 0;
    *best = "-";
    for (int i = 0; stage && i < gg_kernel_count; ++i) {
        GgImpl impl;
        GgCheck chk;
        GgTiming tm;
        char why[512];
        if (strcmp(gg_kernels[i].stage, stage) || gg_impl_find(gg_kernels[i].name, &impl)) continue;
        if (run_case(&impl, p, d, ro, &chk, &tm, why, sizeof why) == GG_EXIT_OK &&
            (best_us == 0 || tm.median_us < best_us)) {
            best_us = tm.median_us;
            *best = impl.name;
        }
    }
    return best_us;
}

typedef struct {
    const GgOptions *o;
    const GgImpl *impl;
    const char *prev;
    int shapes, correct;
} Card;

static const char *outcome(int rc) {
    return rc == GG_EXIT_OK ? "pass" : rc == GG_EXIT_USAGE ? "refused" : "FAIL";
}

static void edge_line(Card *c, const GgEdgeShape *e, int rc, const char *why) {
    if (c->o->csv) {
        printf("%s,%s,edge,", c->impl->name, c->impl->stage);
        gg_csv_text(stdout, e->what);
        printf(",%s,", outcome(rc));
        gg_csv_text(stdout, why);
        puts(",,,,,,,,");
    } else {
        printf("  %-7s %s%s%s\n", outcome(rc), e->what, rc ? ": " : "", rc ? why : "");
    }
}

/* One worklog case: the kernel checked and timed, then (if it passed) both stages' best. */
static int grade_case(Card *c, const GgCase *k, const GgDeviceInfo *d, unsigned long long seed) {
    GgProblem p;
    if (gg_problem_init(&p, k->tokens, k->experts, k->k, k->n, k->skew)) {
        fprintf(stderr, "ggemm: out of host memory for the problem\n");
        return GG_EXIT_USAGE;
    }
    char name[48], why[512];
    snprintf(name, sizeof name, "%dk s=%g%s", k->tokens / 1024, k->skew, k->k == 1024 ? "" : " K=");
    if (k->k != 1024) snprintf(name + strlen(name), sizeof name - strlen(name), "%d", k->k);
    const GgRunOpts ro = {.seed = seed, .check = 1, .warmup = c->o->warmup, .reps = c->o->reps};
    GgCheck chk;
    GgTiming tm;
    const int rc = run_case(c->impl, &p, d, &ro, &chk, &tm, why, sizeof why);
    GgRow row;
    gg_row_fill(&row, c->impl, &p, d, &chk, &tm, seed);
    const char *best = "-", *prev_best = "-";
    double best_us = 0, prev_us = 0;
    if (rc == GG_EXIT_OK) {
        best_us = stage_best(c->impl->stage, &p, d, &ro, &best);
        prev_us = stage_best(c->prev, &p, d, &ro, &prev_best);
    }
    const double flop = gg_useful_flops(&p) * 1e-6; /* per microsecond -> TFLOP/s */
    const double best_tf = best_us > 0 ? flop / best_us : 0, prev_tf = prev_us > 0 ? flop / prev_us : 0;
    if (c->o->csv) {
        printf("%s,%s,case,%s,%s,", c->impl->name, c->impl->stage, name, outcome(rc));
        gg_csv_text(stdout, rc ? why : "");
        if (rc) puts(",,,,,,,,");
        else
            printf(",%.1f,%.1f,%s,%.1f,%.3f,%s,%.1f,%.3f\n", row.useful_tflops, row.roofline_pct, best, best_tf,
                   best_tf > 0 ? row.useful_tflops / best_tf : 0, prev_best, prev_tf,
                   prev_tf > 0 ? row.useful_tflops / prev_tf : 0);
    } else if (rc) {
        printf("  %-15s %-7s %s\n", name, outcome(rc), why);
    } else {
        char vs[2][64];
        const double tf[2] = {best_tf, prev_tf};
        const char *who[2] = {best, prev_best};
        for (int i = 0; i < 2; ++i)
            if (tf[i] > 0) snprintf(vs[i], sizeof vs[i], "%.2fx %s", row.useful_tflops / tf[i], who[i]);
            else snprintf(vs[i], sizeof vs[i], "-");
        printf("  %-15s %-7s %8.1f %8.1f%%   %-28s %s\n", name, "pass", row.useful_tflops, row.roofline_pct, vs[0],
               vs[1]);
    }
    fflush(stdout);
    gg_problem_free(&p);
    return rc;
}

int gg_cmd_grade(const GgOptions *o) {
    GgImpl impl;
    if (gg_impl_find(o->kernel, &impl)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    if (!impl.kernel) {
        fprintf(stderr, "ggemm: grade takes a kernel of this repository or of labs/; %s is a peer\n", impl.name);
        return GG_EXIT_USAGE;
    }
    GgOptions sel = *o; /* the worklog's cases: the "stages" set of the case file */
    sel.set = "stages";
    GgCaseList cases;
    if (gg_cases_select(&sel, &cases)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    GgDeviceInfo d;
    char why[512];
    int rc = gg_open_gpu(&d);
    if (!rc && !gg_impl_runs_here(&impl, d.cc_major, d.cc_minor, why, sizeof why)) {
        fprintf(stderr, "ggemm: %s\n", why);
        rc = GG_EXIT_NO_GPU;
    }
    if (!rc && gg_measure_ceilings(&d)) {
        fprintf(stderr, "ggemm: ceilings: %s\n", gg_error());
        rc = GG_EXIT_CHECK;
    }
    if (rc) {
        gg_cases_free(&cases);
        return rc;
    }
    gg_case_limit("ggemm grade: the case above ran past its time limit (a hang?): not correct");
    Card c = {o, &impl, previous_stage(impl.stage), 0, 0};
    if (o->csv) {
        puts("kernel,stage,part,shape,check,detail,useful_tflops,roofline_pct,stage_best,stage_best_tflops,vs_stage,"
             "previous_best,previous_best_tflops,vs_previous");
    } else {
        printf("ggemm grade %s: stage %s, previous stage %s\n", impl.name, impl.stage, c.prev ? c.prev : "none");
        printf("%s (sm_%d%d, %d SMs), commit %s; roofline from this run's ceilings: bf16 GEMM %.1f TFLOP/s, "
               "copy %.0f GB/s\n\nedge shapes (checked against cuBLAS and an fp64 CPU reference)\n",
               d.name, d.cc_major, d.cc_minor, d.sms, gg_commit(), d.gemm_tflops, d.bw_gbps);
    }
    fflush(stdout);
    for (int s = 0; s < gg_edge_shape_count; ++s) {
        const GgEdgeShape *e = &gg_edge_shapes[s];
        GgProblem p;
        GgCheck chk;
        GgTiming tm;
        if (gg_edge_problem(e, &p)) {
            fprintf(stderr, "ggemm: out of host memory for the problem\n");
            rc = GG_EXIT_USAGE;
            break;
        }
        const GgRunOpts ro = {.seed = o->seed + 1234 + (unsigned long long)s, .check = 1, .cpu_ref = 1};
        const int r = run_case(&impl, &p, &d, &ro, &chk, &tm, why, sizeof why);
        gg_problem_free(&p);
        if (r == GG_EXIT_NO_GPU) { /* e.g. more shared memory than this GPU has */
            fprintf(stderr, "ggemm: %s\n", why);
            rc = r;
            break;
        }
        c.shapes++;
        c.correct += r == GG_EXIT_OK;
        edge_line(&c, e, r, why);
        fflush(stdout);
    }
    if (!o->csv && !rc)
        printf("\nthe worklog's cases (set 'stages' of %s; median of %d reps; speed against each stage's fastest "
               "configuration, same run)\n  %-15s %-7s %8s %9s   %-28s %s\n",
               gg_case_file(), o->reps, "case", "check", "TFLOP/s", "roofline", "vs this stage",
               "vs the stage before");
    for (int i = 0; i < cases.count && !rc; ++i) {
        const int r = grade_case(&c, &cases.cases[i], &d, o->seed + 1000ull * (unsigned long long)i);
        c.shapes++;
        c.correct += r == GG_EXIT_OK;
    }
    gg_cases_free(&cases);
    gg_release_buffers();
    if (rc) return rc;
    if (!o->csv)
        printf("\n%s: correct on %d of %d shapes: %s\n", impl.name, c.correct, c.shapes,
               c.correct == c.shapes ? "PASS" : "FAIL");
    return c.correct == c.shapes ? GG_EXIT_OK : GG_EXIT_CHECK;
}
