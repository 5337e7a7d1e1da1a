/* ggemm calibrate: the constants of k3_wgmma's cost model (k3_wgmma/k3_wgmma_model.h), measured
 * on this GPU. Every configuration the entry point chooses among runs the model's
 * calibration shapes (checked, timed as a sweep times them); the copy ceiling is measured in the
 * same run. The file it writes is what GG_CALIBRATION names; run.sh writes
 * results/<gpu>/calibration.csv, and the H200's is compiled in as the fallback. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gg_commands.h"
#include "k3_wgmma/k3_wgmma.h"
#include "k3_wgmma/k3_wgmma_model.h"

/* A calibration shape as an even split (skew 0: every expert the same where the rows divide). */
static int make_problem(const GgShape *s, GgProblem *p) {
    return s->tokens % s->experts ? 1 : gg_problem_init(p, s->tokens, s->experts, s->k, s->n, 0);
}

/* The configurations' constants from cal's measured times (the fit of this build). */
static int fit(K3Calibration *cal) {
    GgKernelInfo infos[K3_CAL_MAX_CONFIGS] = {{0}};
    for (int i = 0; i < cal->configs; ++i) {
        int found = 0;
        for (int j = 0; j < k3_wgmma_choice_count() && !found; ++j)
            if (!strcmp(cal->c[i].name, k3_wgmma_choice_name(j))) found = !k3_wgmma_choice_info(j, &infos[i]);
        if (!found) {
            fprintf(stderr, "ggemm: calibrate: %s is not a configuration k3_wgmma chooses\n", cal->c[i].name);
            return GG_EXIT_USAGE;
        }
        for (int j = 0; j < K3_CAL_SHAPES; ++j) /* the DRAM shape's time may be missing: older files */
            if (j != K3_CAL_DRAM && !(cal->c[i].measured_us[j] > 0)) {
                fprintf(stderr, "ggemm: calibrate: %s has no measured time of %s to fit\n", cal->c[i].name,
                        k3_calibration_shape_names[j]);
                return GG_EXIT_USAGE;
            }
    }
    k3_model_fit_all(cal, infos);
    for (int i = 0; i < cal->configs; ++i) { /* what the file reader would refuse, refused here */
        if (!k3_cal_config_valid(&cal->c[i])) {
            fprintf(stderr, "ggemm: calibrate: %s: its measured times fit no rates > 0 (noisy or out of order)\n",
                    cal->c[i].name);
            return GG_EXIT_USAGE;
        }
    }
    for (int i = 0; i < cal->configs; ++i) {
        const K3CalConfig *c = &cal->c[i];
        fprintf(stderr,
                "  %-28s overhead %6.2f us, tile %6.3f + %7.4f us/k-block, power %7.4f us/k-block after %.0f us, "
                "DRAM-bound at %.3f of the copy rate%s\n",
                c->name, c->overhead_us, c->tile_us, c->kblock_us, c->power_kblock_us, c->sustain_us, c->dram_eff,
                c->dram_eff == 1 ? " (not measured: no DRAM time, or the DRAM shape not DRAM-bound)" : "");
    }
    return GG_EXIT_OK;
}

/* To stdout, or to out through a temporary file beside it, renamed over out once complete: a
 * failed or interrupted write never leaves half a calibration where GG_CALIBRATION looks. */
static int write_calibration(const K3Calibration *cal, const char *out, const char *date, const char *commit) {
    if (!out) {
        k3_calibration_write(cal, commit, date, stdout);
        return GG_EXIT_OK;
    }
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", out, (long)getpid()) >= (int)sizeof tmp) {
        fprintf(stderr, "ggemm: calibrate: --out %s: path too long\n", out);
        return GG_EXIT_USAGE;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "ggemm: calibrate: cannot write %s: %s\n", tmp, strerror(errno));
        return GG_EXIT_USAGE;
    }
    k3_calibration_write(cal, commit, date, f);
    const int failed = ferror(f) | fclose(f);
    if (failed || rename(tmp, out)) {
        fprintf(stderr, "ggemm: calibrate: cannot write %s: %s\n", out, strerror(errno));
        remove(tmp);
        return GG_EXIT_USAGE;
    }
    fprintf(stderr, "ggemm: calibration -> %s (GG_CALIBRATION=%s selects it)\n", out, out);
    return GG_EXIT_OK;
}

/* --from FILE: no GPU; refit FILE's measured times with this build's fit (its header kept). */
static int refit(const GgOptions *o) {
    K3Calibration cal;
    char why[320];
    if (k3_calibration_load(o->from, &cal, why, sizeof why)) {
        fprintf(stderr, "ggemm: calibrate: --from: %s\n", why);
        return GG_EXIT_USAGE;
    }
    char commit[160];
    snprintf(commit, sizeof commit, "%s (fit again by ggemm calibrate --from at %s)",
             cal.commit[0] ? cal.commit : "unknown", gg_commit());
    const int rc = fit(&cal);
    return rc ? rc : write_calibration(&cal, o->out, cal.date, commit);
}

int gg_cmd_calibrate(const GgOptions *o) {
    if (o->from) return refit(o);
    GgDeviceInfo d;
    int rc = gg_open_gpu(&d);
    if (rc) return rc;
    GgImpl probe;
    char why[512] = "k3_wgmma is not registered in this build";
    if (gg_impl_find("k3_wgmma", &probe) || !gg_impl_runs_here(&probe, d.cc_major, d.cc_minor, why, sizeof why)) {
        fprintf(stderr, "ggemm: calibrate: %s\n", why); /* k3_wgmma is sm_90a only */
        return GG_EXIT_NO_GPU;
    }
    if (gg_measure_ceilings(&d)) {
        fprintf(stderr, "ggemm: calibrate: ceilings: %s\n", gg_error());
        return GG_EXIT_CHECK;
    }
    K3Calibration cal = {0};
    snprintf(cal.device, sizeof cal.device, "%s", d.name);
    snprintf(cal.source, sizeof cal.source, "%s", o->out ? o->out : "stdout");
    cal.sms = d.sms;
    cal.copy_gbps = d.bw_gbps;
    if (k3_wgmma_choice_count() > K3_CAL_MAX_CONFIGS) { /* a build error: K3_CAL_MAX_CONFIGS is too small */
        fprintf(stderr, "ggemm: calibrate: k3_wgmma chooses among %d configurations, a calibration holds %d\n",
                k3_wgmma_choice_count(), K3_CAL_MAX_CONFIGS);
        return GG_EXIT_USAGE;
    }
    const GgRunOpts ro = {.seed = o->seed, .check = 1, .warmup = o->warmup, .reps = o->reps};
    int said_no_telemetry = 0;
    fprintf(stderr, "ggemm: calibrate on %s (%d SMs, copy %.0f GB/s)\n", d.name, d.sms, d.bw_gbps);
    for (int i = 0; i < k3_wgmma_choice_count() && !rc; ++i) {
        K3CalConfig *c = &cal.c[cal.configs];
        GgKernelInfo info = {0};
        GgImpl impl;
        snprintf(c->name, sizeof c->name, "%s", k3_wgmma_choice_name(i));
        if (k3_wgmma_choice_info(i, &info) || gg_impl_find(c->name, &impl)) {
            fprintf(stderr, "ggemm: calibrate: %s is not registered\n", c->name);
            rc = GG_EXIT_USAGE;
            break;
        }
        for (int j = 0; j < K3_CAL_SHAPES && !rc; ++j) {
            GgProblem p;
            if (make_problem(&k3_calibration_shapes[j], &p)) {
                fprintf(stderr, "ggemm: calibrate: shape %s does not split evenly\n", k3_calibration_shape_names[j]);
                rc = GG_EXIT_USAGE;
                break;
            }
            GgCheck chk;
            GgTiming tm;
            rc = gg_run_case(&impl, &p, &d, &ro, &chk, &tm, why, sizeof why);
            gg_problem_free(&p);
            if (rc) fprintf(stderr, "ggemm: calibrate: %s on %s: %s\n", c->name, k3_calibration_shape_names[j], why);
            else c->measured_us[j] = tm.median_us;
            if (!rc && j == K3_CAL_SUSTAIN) {
                if (!tm.telemetry.valid) {
                    if (!said_no_telemetry++)
                        fprintf(stderr, "ggemm: calibrate: no power telemetry (NVML) here: sustain_us from the "
                                        "timings alone\n");
                    c->sustain_capped_pct = -1;
                } else {
                    c->sustain_capped_pct = tm.telemetry.power_capped_pct;
                }
            }
        }
        if (rc) break;
        cal.configs++;
    }
    gg_release_buffers();
    if (!rc) rc = fit(&cal);
    if (rc) return rc;
    char date[32];
    gg_utc_now(date, sizeof date);
    return write_calibration(&cal, o->out, date, gg_commit());
}
