#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gg_harness.h"

#ifndef GG_GIT_COMMIT
#define GG_GIT_COMMIT "unknown"
#endif

void gg_utc_now(char *buf, size_t len) {
    const time_t now = time(NULL);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

const char *gg_commit(void) {
    const char *c = getenv("GG_COMMIT"); /* set by run.sh where the build has no .git */
    return c && *c ? c : GG_GIT_COMMIT;
}

/* Metadata lines start with '#', so gnuplot, pandas (comment='#') and the peer script
 * skip them as data but can still read them. */
void gg_csv_metadata(FILE *f, const GgDeviceInfo *d, const char *commit, const char *date) {
    fprintf(f, "# device=%s\n", d->name);
    fprintf(f, "# compute_capability=%d.%d\n", d->cc_major, d->cc_minor);
    fprintf(f, "# sms=%d\n", d->sms);
    fprintf(f, "# sm_clock_mhz=%d\n# mem_clock_mhz=%d\n", d->sm_clock_mhz, d->mem_clock_mhz);
    fprintf(f, "# driver=%d.%d\n", d->driver_version / 1000, (d->driver_version % 1000) / 10);
    fprintf(f, "# cuda_runtime=%d.%d\n", d->runtime_version / 1000, (d->runtime_version % 1000) / 10);
    fprintf(f, "# l2_bytes=%ld\n# smem_optin_bytes=%ld\n", d->l2_bytes, d->smem_optin);
    fprintf(f, "# commit=%s\n# date=%s\n", commit, date);
    fprintf(f, "# ceiling_copy_gbps=%.1f\n", d->bw_gbps);
    fprintf(f, "# ceiling_write_gbps=%.1f\n", d->write_gbps);
    fprintf(f, "# ceiling_read_gbps=%.1f\n", d->read_gbps);
    fprintf(f, "# ceiling_gemm_tflops=%.1f\n", d->gemm_tflops);
    fprintf(f, "# ceiling_ffma_tflops=%.2f\n", d->ffma_tflops);
    fprintf(f, "# ceiling_mma_sync_tflops=%.1f\n", d->mma_sync_tflops);
    fprintf(f, "# tolerance=|out-ref| <= atol(k) + rtol*|ref|, rtol=2^-8, atol=2^-10*sqrt(k)\n");
}

void gg_csv_header(FILE *f) {
    fputs("kernel,config,tokens,experts,k,n,skew,block_m,block_n,tiles,eta,time_us_median,"
          "time_us_p10,time_us_p90,useful_tflops,scheduled_tflops,gbps,roofline_pct,"
          "inst_ceiling_pct,check,max_abs_err,rel_err,seed,set,power_capped_pct,"
          "thermal_capped_pct,sm_clock_mhz\n",
          f);
}

void gg_csv_text(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void gg_csv_row(FILE *f, const GgRow *r) {
    gg_csv_text(f, r->kernel);
    fputc(',', f);
    gg_csv_text(f, r->config);
    char skew[32];
    if (isnan(r->skew)) snprintf(skew, sizeof skew, "list");
    else snprintf(skew, sizeof skew, "%g", r->skew);
    fprintf(f, ",%d,%d,%d,%d,%s,%d,%d,%ld,%.4f,%.2f,%.2f,%.2f,%.2f,%.2f,%.1f,%.1f,%.1f,%s,%.4g,%.4g,%llu,",
            r->tokens, r->experts, r->k, r->n, skew, r->block_m, r->block_n,
            r->tiles, r->eta, r->time_us_median, r->time_us_p10, r->time_us_p90, r->useful_tflops,
            r->scheduled_tflops, r->gbps, r->roofline_pct, r->inst_ceiling_pct,
            r->check_pass ? "pass" : "fail", r->max_abs_err, r->rel_err, r->seed);
    gg_csv_text(f, r->set ? r->set : "cli");
    gg_csv_power(f, &r->telemetry);
    fputc('\n', f);
}

void gg_csv_power(FILE *f, const GgTelemetry *t) {
    if (t->valid) fprintf(f, ",%.1f,%.1f,%d", t->power_capped_pct, t->thermal_capped_pct, t->sm_clock_mhz);
    else fputs(",,,", f);
}

static double inst_ceiling(const GgImpl *impl, const GgDeviceInfo *d) {
    const char *math = gg_impl_math(impl);
    if (!strcmp(math, "ffma")) return d->ffma_tflops;
    if (!strcmp(math, "mma.sync")) return d->mma_sync_tflops;
    return d->gemm_tflops; /* wgmma, tcgen05 and the peers: the dense cuBLAS rate */
}

void gg_row_fill(GgRow *r, const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, const GgCheck *chk,
                 const GgTiming *tm, unsigned long long seed) {
    memset(r, 0, sizeof *r);
    r->kernel = impl->name;
    r->config = impl->chose[0] ? impl->chose : impl->config; /* an entry point: what it chose */
    r->block_m = impl->info.block_m;
    r->block_n = impl->info.block_n;
    /* The ragged dimension's step: output rows per tile (forward, dgrad), reduction rows per
     * stage (wgrad, whose tile's rows are of k): what tiles, eta and the scheduled FLOPs pad to. */
    const int ragged = impl->kernel && impl->info.pass == GG_PASS_WGRAD ? impl->info.block_k : r->block_m;
    r->time_us_median = tm->median_us;
    r->time_us_p10 = tm->p10_us;
    r->time_us_p90 = tm->p90_us;
    r->check_pass = chk->pass;
    r->max_abs_err = chk->max_abs_err;
    r->rel_err = chk->rel_err;
    r->seed = seed;
    r->telemetry = tm->telemetry;
    r->tokens = p->tokens;
    r->experts = p->experts;
    r->k = p->k;
    r->n = p->n;
    r->skew = p->skew;
    /* What the pass reads, writes and computes (gg_pass_shape): a peer's row has its
     * configuration's pass too. Tiles: ragged row tiles x column blocks of the output's rows
     * (wgrad: 64-row reduction blocks x column blocks). */
    const GgPassShape ps = gg_pass_shape(p, impl->info.pass);
    r->tiles = impl->kernel ? gg_m_tiles(p, ragged) * ((ps.c_cols + r->block_n - 1) / r->block_n)
                            : 0; /* a library's tiling is its own */
    r->eta = gg_eta(p, ragged);
    const double t = r->time_us_median * 1e-6;
    if (t <= 0) return;
    const double sched = gg_pass_scheduled_flops(p, impl->info.pass, ragged, r->block_n);
    r->useful_tflops = ps.flops / t * 1e-12;
    r->scheduled_tflops = sched / t * 1e-12;
    r->gbps = ps.bytes / t * 1e-9;
    /* The floor no kernel beats: the larger of the compute time at the measured dense GEMM
     * rate and the time to move the compulsory bytes at the measured copy bandwidth. */
    double floor_s = 0.0;
    if (d->gemm_tflops > 0) floor_s = ps.flops / (d->gemm_tflops * 1e12);
    if (d->bw_gbps > 0 && ps.bytes / (d->bw_gbps * 1e9) > floor_s) floor_s = ps.bytes / (d->bw_gbps * 1e9);
    r->roofline_pct = 100.0 * floor_s / t;
    const double ceil = inst_ceiling(impl, d);
    r->inst_ceiling_pct = ceil > 0 ? 100.0 * r->scheduled_tflops / ceil : 0.0;
}
