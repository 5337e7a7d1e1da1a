/* ggemm fuzz: random problems (harness/fuzz.c) against every kernel. Each kernel must either
 * pass the check or refuse the shape through can_implement (exit 2) — never a wrong result, a
 * CUDA error, a crash or a hang. A case that runs past its time limit ends the process with
 * one line naming it (a hung kernel cannot be taken back from inside the process). */
#define _POSIX_C_SOURCE 200809L /* isatty */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gg_commands.h"

enum { CASE_SECONDS = 60 }; /* the largest draw takes well under a second on any kernel */

enum { MAX_KERNELS = 64 }; /* the per-kernel tallies */

int gg_cmd_fuzz(const GgOptions *o) {
    if (gg_kernel_count > MAX_KERNELS) {
        fprintf(stderr, "ggemm: fuzz tallies at most %d kernels, the registry has %d\n", MAX_KERNELS, gg_kernel_count);
        return GG_EXIT_USAGE;
    }
    if (gg_check_kernel_names(o->kernels)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    GgDeviceInfo d;
    int rc = gg_open_gpu(&d);
    if (rc) return rc;
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "ggemm: cannot write %s\n", o->out);
        return GG_EXIT_USAGE;
    }
    gg_case_limit("ggemm fuzz: the case above ran past its time limit (a hang?)");
    const int live = isatty(2);
    fprintf(f, "# ggemm fuzz --cases %d --seed %llu, %s, commit %s\n", o->cases, o->seed, d.name, gg_commit());
    fputs("case,kernel,tokens,experts,k,n,skew_drawn,m_max,empty_experts,one_row_experts,outcome,why\n", f);
    enum { PASS, REFUSED, NOT_HERE, FAILED };
    int count[MAX_KERNELS][4] = {{0}};
    int failures = 0;
    for (int c = 0; c < o->cases; ++c) {
        GgProblem p;
        double skew;
        if (gg_fuzz_problem(o->seed, c, &p, &skew)) {
            fprintf(stderr, "ggemm: out of host memory\n");
            rc = GG_EXIT_USAGE;
            break;
        }
        int one_row = 0;
        for (int e = 0; e < p.experts; ++e) one_row += p.m[e] == 1;
        for (int i = 0; i < gg_kernel_count; ++i) {
            GgImpl impl;
            if (!gg_in_list(o->kernels, gg_kernels[i].name) || gg_impl_find(gg_kernels[i].name, &impl)) continue;
            char why[512] = "";
            const GgRunOpts ro = {.seed = o->seed * 1000003ull + (unsigned long long)c, .check = 1,
                                  .cpu_ref = (double)p.tokens * p.k * p.n <= 5e6, .warmup = 0, .reps = 0};
            GgCheck chk;
            GgTiming tm;
            if (live || i == 0) /* a live line on a terminal, one line per case in a log */
                fprintf(stderr, "%s[%d/%d] %-24s tokens %5d experts %3d k %4d n %4d%s", live ? "\r" : "", c + 1,
                        o->cases, live ? impl.name : "", p.tokens, p.experts, p.k, p.n, live ? "" : "\n");
            fflush(f); /* a hang ends the process: the rows before it must be on disk */
            const int r = gg_run_case_limited(CASE_SECONDS, &impl, &p, &d, &ro, &chk, &tm, why, sizeof why);
            const int outcome = r == GG_EXIT_OK ? PASS : r == GG_EXIT_USAGE ? REFUSED : r == GG_EXIT_NO_GPU ? NOT_HERE
                                                                                                             : FAILED;
            static const char *names[] = {"pass", "refused", "not on this GPU", "FAILED"};
            count[i][outcome]++;
            fprintf(f, "%d,%s,%d,%d,%d,%d,%.2f,%d,%d,%d,%s,", c, impl.name, p.tokens, p.experts, p.k, p.n, skew,
                    gg_m_max(&p), gg_empty_experts(&p), one_row, names[outcome]);
            gg_csv_text(f, outcome == PASS ? "" : why);
            fputc('\n', f);
            if (outcome == FAILED) {
                fprintf(stderr, "\nggemm: case %d %s FAILED: %s\n", c, impl.name, why);
                ++failures;
                if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
                    fprintf(stderr, "ggemm: the CUDA context is lost; stopping\n");
                    c = o->cases;
                    break;
                }
            }
        }
        gg_problem_free(&p);
    }
    if (live) fputc('\n', stderr);
    if (f != stdout) fclose(f);
    printf("%-26s %6s %8s %8s %6s\n", "kernel", "pass", "refused", "not here", "FAILED");
    for (int i = 0; i < gg_kernel_count; ++i)
        if (gg_in_list(o->kernels, gg_kernels[i].name))
            printf("%-26s %6d %8d %8d %6d\n", gg_kernels[i].name, count[i][PASS], count[i][REFUSED],
                   count[i][NOT_HERE], count[i][FAILED]);
    printf("%d random problems (seed %llu), %d failures\n", o->cases, o->seed, failures);
    gg_release_buffers();
    return rc ? rc : failures ? GG_EXIT_CHECK : GG_EXIT_OK;
}
