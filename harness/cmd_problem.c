/* ggemm problem: the split, its tiles and the counts behind every column; no GPU. */
#include <math.h>
#include <stdio.h>

#include "gg_commands.h"

int gg_cmd_problem(const GgOptions *o) {
    GgProblem p;
    if (gg_options_problem(o, &p)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    const int bm = o->block_m, bn = o->block_n;
    if (o->csv) {
        puts("tokens,experts,k,n,skew,block_m,block_n,m_max,m_min,empty_experts,tiles,eta,"
             "eta_adaptive,useful_gflop,scheduled_gflop,min_bytes,m_list");
        char skew[32];
        if (isnan(p.skew)) snprintf(skew, sizeof skew, "list");
        else snprintf(skew, sizeof skew, "%g", p.skew);
        printf("%d,%d,%d,%d,%s,%d,%d,%d,%d,%d,%ld,%.4f,%.4f,%.3f,%.3f,%.0f,", p.tokens, p.experts, p.k, p.n, skew,
               bm, bn, gg_m_max(&p), gg_m_min(&p), gg_empty_experts(&p), gg_tile_count(&p, bm, bn),
               gg_eta(&p, bm), gg_eta(&p, 0), gg_useful_flops(&p) * 1e-9, gg_scheduled_flops(&p, bm, bn) * 1e-9,
               gg_min_bytes(&p));
        for (int e = 0; e < p.experts; ++e) printf("%s%d", e ? " " : "", p.m[e]);
        putchar('\n');
    } else {
        printf("tokens %d, experts %d, k %d, n %d\n", p.tokens, p.experts, p.k, p.n);
        if (isnan(p.skew)) printf("skew: given by --m-list\n");
        else printf("skew %g: m_e proportional to (e+1)^-%g\n", p.skew, p.skew);
        printf("rows per expert: max %d, min %d, empty experts %d\n", gg_m_max(&p), gg_m_min(&p),
               gg_empty_experts(&p));
        printf("m_e:");
        for (int e = 0; e < p.experts; ++e) printf(" %d", p.m[e]);
        printf("\ntiles of %dx%d: %ld (eta = %.4f; adaptive 128/64 rows: eta = %.4f)\n", bm, bn,
               gg_tile_count(&p, bm, bn), gg_eta(&p, bm), gg_eta(&p, 0));
        printf("useful %.3f GFLOP, scheduled %.3f GFLOP, compulsory bytes %.1f MB\n", gg_useful_flops(&p) * 1e-9,
               gg_scheduled_flops(&p, bm, bn) * 1e-9, gg_min_bytes(&p) * 1e-6);
        const GgShape shape = {p.tokens, p.experts, p.k, p.n};
        for (int i = 0; i < gg_kernel_count; ++i) /* entry points: what each would run here */
            if (gg_kernels[i].choose) {
                char why[1024]; /* the pick, every runner-up's prediction, the calibration used */
                if (gg_kernels[i].choose(&shape, why, sizeof why))
                    printf("%s would run %s\n", gg_kernels[i].name, why);
                else
                    printf("%s: %s\n", gg_kernels[i].name, why);
            }
    }
    gg_problem_free(&p);
    return GG_EXIT_OK;
}
