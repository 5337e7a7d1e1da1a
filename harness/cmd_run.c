/* ggemm run, ceilings, device, --version: one kernel on one problem, and the GPU itself. */
#include <stdio.h>

#include "gg_commands.h"

int gg_open_gpu(GgDeviceInfo *d) {
    char why[512];
    const int rc = gg_device_open(d, why, sizeof why);
    if (rc) fprintf(stderr, "ggemm: %s\n", why);
    return rc;
}

int gg_limit_sms(GgDeviceInfo *d, int sms) {
    if (!sms) return GG_EXIT_OK;
    if (sms > d->sms) {
        fprintf(stderr, "ggemm: --sms %d: this GPU has %d SMs\n", sms, d->sms);
        return GG_EXIT_USAGE;
    }
    fprintf(stderr, "ggemm: persistent kernels launch at most %d CTAs (--sms; the GPU has %d SMs)\n", sms, d->sms);
    d->sms = sms;
    return GG_EXIT_OK;
}

int gg_cmd_run(const GgOptions *o) {
    GgImpl impl;
    if (gg_impl_find(o->kernel, &impl)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    GgDeviceInfo d;
    int rc = gg_open_gpu(&d);
    if (!rc) rc = gg_limit_sms(&d, o->sms);
    if (rc) return rc;
    char why[512];
    if (!gg_impl_runs_here(&impl, d.cc_major, d.cc_minor, why, sizeof why)) {
        fprintf(stderr, "ggemm: %s\n", why); /* one line, exit 77: not this GPU */
        return GG_EXIT_NO_GPU;
    }
    GgProblem p;
    if (gg_options_problem(o, &p)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    GgCheck chk;
    GgTiming tm;
    const GgRunOpts ro = {.seed = o->seed, .check = o->check, .cpu_ref = (double)p.tokens * p.k * p.n <= 5e7,
                          .warmup = o->warmup, .reps = o->reps};
    fprintf(stderr, "ggemm: %s, tokens %d, experts %d, k %d, n %d, seed %llu\n", impl.name, p.tokens, p.experts, p.k,
            p.n, o->seed);
    const GgShape shape = {p.tokens, p.experts, p.k, p.n};
    gg_impl_resolve(&impl, &shape);
    if (impl.chose[0]) fprintf(stderr, "ggemm: %s chose %s\n", impl.name, impl.chose);
    rc = gg_run_case(&impl, &p, &d, &ro, &chk, &tm, why, sizeof why);
    if (rc) {
        fprintf(stderr, "ggemm: %s\n", why);
    } else {
        GgRow row;
        gg_row_fill(&row, &impl, &p, &d, &chk, &tm, o->seed);
        if (o->check)
            printf("check: pass (max abs err %.3g, rel err %.3g%s)\n", chk.max_abs_err, chk.rel_err,
                   chk.cpu_ref ? ", cuBLAS and fp64 CPU references" : ", cuBLAS reference");
        printf("time: median %.2f us (p10 %.2f, p90 %.2f, %d reps)\n", tm.median_us, tm.p10_us, tm.p90_us, tm.reps);
        printf("useful %.1f TFLOP/s, scheduled %.1f TFLOP/s, eta %.4f, %.0f GB/s compulsory\n", row.useful_tflops,
               row.scheduled_tflops, row.eta, row.gbps);
        const GgTelemetry *t = &tm.telemetry;
        if (t->valid)
            printf("power state: clocks held down %.1f%% of the series for power, %.1f%% for heat; "
                   "SM clock %d MHz at its end\n",
                   t->power_capped_pct, t->thermal_capped_pct, t->sm_clock_mhz);
    }
    gg_problem_free(&p);
    gg_release_buffers();
    return rc;
}

int gg_cmd_ceilings(const GgOptions *o) {
    (void)o;
    GgDeviceInfo d;
    int rc = gg_open_gpu(&d);
    if (rc) return rc;
    if (gg_measure_ceilings(&d)) {
        fprintf(stderr, "ggemm: ceilings: %s\n", gg_error());
        return GG_EXIT_CHECK;
    }
    printf("%s: copy %.0f GB/s, write %.0f GB/s, read %.0f GB/s, dense bf16 GEMM %.1f TFLOP/s, FFMA %.2f TFLOP/s, "
           "mma.sync bf16 %.1f TFLOP/s\n",
           d.name, d.bw_gbps, d.write_gbps, d.read_gbps, d.gemm_tflops, d.ffma_tflops, d.mma_sync_tflops);
    gg_release_buffers();
    return GG_EXIT_OK;
}

int gg_cmd_device(const GgOptions *o) {
    (void)o;
    GgDeviceInfo d;
    const int rc = gg_open_gpu(&d);
    if (rc) return rc;
    printf("%s\n", d.name);
    return GG_EXIT_OK;
}

int gg_cmd_version(const GgOptions *o) {
    (void)o;
    const int rt = gg_runtime_version_built(), drv = gg_driver_version();
    printf("ggemm %s, built with CUDA runtime %d.%d, ", gg_commit(), rt / 1000, (rt % 1000) / 10);
    if (drv) printf("driver for CUDA %d.%d found\n", drv / 1000, (drv % 1000) / 10);
    else printf("no NVIDIA driver found\n");
    return GG_EXIT_OK;
}
