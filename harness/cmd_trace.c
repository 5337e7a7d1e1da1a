/* ggemm trace: one launch of a kernel's traced twin, checked, written as trace.csv, trace.json
 * and summary.csv into --out, and summarised; with --reps also its cost against the kernel. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "gg_commands.h"

/* DIR/NAME opened for writing, or NULL with one line on stderr. */
static FILE *open_out(const char *dir, const char *name, char *path, size_t len) {
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "ggemm: --out: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static void traced_names(char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < gg_kernel_count && used < len; ++i)
        if (gg_kernels[i].trace_launch)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", gg_kernels[i].name);
}

static void write_summary(FILE *f, const GgDeviceInfo *d, const GgImpl *impl, const GgProblem *p,
                          const GgOptions *o, const GgTrace *tr, const GgTraceSummary *s, const GgTiming *plain,
                          const GgTiming *traced) {
    char date[64];
    gg_utc_now(date, sizeof date);
    fprintf(f, "# device=%s\n# sms=%d\n# commit=%s\n# date=%s\n", d->name, d->sms, gg_commit(), date);
    if (impl->chose[0]) /* an entry point: the configuration it ran ("NAME: why") */
        fprintf(f, "# ran=%.*s\n", (int)strcspn(impl->chose, ":"), impl->chose);
    fputs("kernel,tokens,experts,k,n,skew,seed,events,capacity,sms,sms_idle,tiles,kernel_us,busy_fraction,"
          "first_idle_us,tail_us,imbalance,reps,untraced_us,traced_us,overhead_pct\n",
          f);
    fprintf(f, "%s,%d,%d,%d,%d,", impl->name, p->tokens, p->experts, p->k, p->n);
    if (!isnan(p->skew)) fprintf(f, "%g", p->skew);
    fprintf(f, ",%llu,%ld,%ld,%d,%d,%ld,%.3f,%.4f,%.3f,%.3f,%.4f,", o->seed, tr->count, tr->capacity, s->sms,
            s->sms_idle, s->tiles, s->kernel_us, s->busy_fraction, s->first_idle_us, s->tail_us, s->imbalance);
    if (traced->reps)
        fprintf(f, "%d,%.2f,%.2f,%.2f\n", traced->reps, plain->median_us, traced->median_us,
                100.0 * (traced->median_us / plain->median_us - 1.0));
    else
        fputs(",,,\n", f);
}

int gg_cmd_trace(const GgOptions *o) {
    GgImpl impl;
    if (gg_impl_find(o->kernel, &impl)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    if (!impl.kernel || !impl.kernel->trace_launch) {
        char names[1024];
        traced_names(names, sizeof names);
        fprintf(stderr, "ggemm: %s has no traced twin; these have: %s\n", impl.name, names);
        return GG_EXIT_USAGE;
    }
    GgDeviceInfo d;
    int rc = gg_open_gpu(&d);
    if (!rc) rc = gg_limit_sms(&d, o->sms);
    if (rc) return rc;
    if (mkdir(o->out, 0777) && errno != EEXIST) {
        fprintf(stderr, "ggemm: --out %s: %s\n", o->out, strerror(errno));
        return GG_EXIT_USAGE;
    }
    char why[512];
    if (!gg_impl_runs_here(&impl, d.cc_major, d.cc_minor, why, sizeof why)) {
        fprintf(stderr, "ggemm: %s\n", why);
        return GG_EXIT_NO_GPU;
    }
    GgProblem p;
    if (gg_options_problem(o, &p)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    const GgShape shape = {p.tokens, p.experts, p.k, p.n};
    gg_impl_resolve(&impl, &shape); /* an entry point: trace the configuration it chooses */
    if (impl.chose[0]) fprintf(stderr, "ggemm: %s chose %s\n", impl.name, impl.chose);
    const GgRunOpts ro = {.seed = o->seed, .check = 1, .cpu_ref = (double)p.tokens * p.k * p.n <= 5e7,
                          .warmup = o->warmup, .reps = o->reps};
    fprintf(stderr, "ggemm: trace %s, tokens %d, experts %d, k %d, n %d, seed %llu\n", impl.name, p.tokens,
            p.experts, p.k, p.n, o->seed);
    GgCheck chk;
    GgTrace tr;
    GgTraceSummary s;
    GgTiming plain = {0}, traced = {0};
    rc = gg_trace_case(&impl, &p, &d, &ro, 0, &chk, &tr, why, sizeof why);
    if (!rc && gg_trace_summarize(tr.events, tr.count, d.sms, &s)) {
        snprintf(why, sizeof why, "%s", gg_error());
        rc = GG_EXIT_CHECK;
    }
    if (!rc && o->given_reps) rc = gg_trace_time(&impl, &p, &d, &ro, &plain, &traced, why, sizeof why);
    if (rc) {
        fprintf(stderr, "ggemm: %s\n", why);
        gg_trace_free(&tr);
        gg_problem_free(&p);
        gg_release_buffers();
        return rc;
    }
    char path[3][1024];
    FILE *csv = open_out(o->out, "trace.csv", path[0], sizeof path[0]);
    FILE *json = csv ? open_out(o->out, "trace.json", path[1], sizeof path[1]) : NULL;
    FILE *sum = json ? open_out(o->out, "summary.csv", path[2], sizeof path[2]) : NULL;
    if (sum) {
        char title[256];
        snprintf(title, sizeof title, "%s, %d rows, %d experts, k %d, n %d", impl.name, p.tokens, p.experts, p.k, p.n);
        if (gg_trace_write_csv(csv, tr.events, tr.count) ||
            gg_trace_write_json(json, tr.events, NULL, tr.count, title)) {
            fprintf(stderr, "ggemm: %s\n", gg_error());
            rc = GG_EXIT_CHECK;
        }
        write_summary(sum, &d, &impl, &p, o, &tr, &s, &plain, &traced);
    } else {
        rc = GG_EXIT_USAGE;
    }
    if (csv) fclose(csv);
    if (json) fclose(json);
    if (sum) fclose(sum);
    if (!rc) {
        printf("check: pass (max abs err %.3g, rel err %.3g%s)\n", chk.max_abs_err, chk.rel_err,
               chk.cpu_ref ? ", cuBLAS and fp64 CPU references" : ", cuBLAS reference");
        printf("trace: %ld events (room for %ld) -> %s, %s, %s\n", tr.count, tr.capacity, path[0], path[1], path[2]);
        printf("kernel: %.1f us, first CTA entry to last event\n", s.kernel_us);
        printf("busy: %.1f%% of the time of %d SMs a consumer computes a tile (%d SMs without one)\n",
               100 * s.busy_fraction, s.sms, s.sms_idle);
        printf("tail: %.1f us, from the first SM going idle (at %.1f us) to the end\n", s.tail_us, s.first_idle_us);
        printf("imbalance: %.3f, max / mean busy time per SM\n", s.imbalance);
        if (traced.reps)
            printf("time: untraced median %.2f us, traced %.2f us: %+.2f%% (%d reps each)\n", plain.median_us,
                   traced.median_us, 100.0 * (traced.median_us / plain.median_us - 1.0), traced.reps);
    }
    gg_trace_free(&tr);
    gg_problem_free(&p);
    gg_release_buffers();
    return rc;
}
