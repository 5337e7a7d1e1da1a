/* ggemm trace: one launch of a kernel's traced twin, checked, written as trace.csv, trace.json
 * and summary.csv into --out, and summarised; with --reps also its cost against the kernel.
 * ggemm trace --from: a trace.csv already written (a committed one) as trace.json, no GPU. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
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

/* The JSON's title: the GPU run's, and --from's when summary.csv is beside the trace. */
static void trace_title(char *buf, size_t len, const char *kernel, int tokens, int experts, int k, int n) {
    snprintf(buf, len, "%s, %d rows, %d experts, k %d, n %d", kernel, tokens, experts, k, n);
}

static void print_summary(FILE *f, const GgTraceSummary *s) {
    fprintf(f, "kernel: %.1f us, first CTA entry to last event\n", s->kernel_us);
    fprintf(f, "busy: %.1f%% of the time of %d SMs a consumer computes a tile (%d SMs without one)\n",
            100 * s->busy_fraction, s->sms, s->sms_idle);
    fprintf(f, "tail: %.1f us, from the first SM going idle (at %.1f us) to the end\n", s->tail_us, s->first_idle_us);
    fprintf(f, "imbalance: %.3f, max / mean busy time per SM\n", s->imbalance);
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

/* The directory part of path joined with name (name alone when path has no directory). */
static void beside(const char *path, const char *name, char *out, size_t len) {
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(out, len, "%.*s/%s", (int)(slash - path), path, name);
    else snprintf(out, len, "%s", name);
}

/* Splits line at commas in place (empty fields kept); the number of fields, at most max. */
static int split(char *line, char **field, int max) {
    int count = 0;
    for (char *p = line; count < max; ++p) {
        field[count++] = p;
        p += strcspn(p, ",\r\n");
        if (*p != ',') {
            *p = '\0';
            break;
        }
        *p = '\0';
    }
    return count;
}

/* summary.csv beside the trace, as the GPU run wrote it: the title that run gave its JSON and
 * the device's SM count. 0 if both were read; else the caller keeps its own. */
static int read_summary(const char *csv_path, char *title, size_t len, int *sms) {
    char path[1024], line[1024], header[1024];
    beside(csv_path, "summary.csv", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int rows = 0, device_sms = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') {
            sscanf(line, "# sms=%d", &device_sms);
            continue;
        }
        if (rows++ == 0) memcpy(header, line, sizeof header);
        else break;
    }
    fclose(f);
    if (rows != 2 || device_sms <= 0) return -1;
    char *name[64], *value[64];
    const int names = split(header, name, 64), values = split(line, value, 64);
    static const char *const want[5] = {"kernel", "tokens", "experts", "k", "n"};
    const char *got[5] = {0};
    for (int w = 0; w < 5; ++w)
        for (int c = 0; c < names && c < values; ++c)
            if (!strcmp(name[c], want[w])) got[w] = value[c];
    int v[4];
    for (int w = 1; w < 5; ++w)
        if (!got[w] || gg_parse_int(got[w], 0, GG_MAX_ROWS, &v[w - 1])) return -1;
    if (!got[0] || !*got[0]) return -1;
    trace_title(title, len, got[0], v[0], v[1], v[2], v[3]);
    *sms = device_sms;
    return 0;
}

/* --from: read the CSV, write the JSON (beside it, into --out DIR, as --out FILE, or to stdout
 * for --out -) and print the summary the GPU run printed, recomputed from the rows. */
static int trace_from_csv(const GgOptions *o) {
    GgTraceEvent *ev;
    int *lane;
    long n;
    if (gg_trace_read_csv(o->from, &ev, &lane, &n)) {
        fprintf(stderr, "ggemm: --from: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    char title[1024], path[1024];
    int sms = 0; /* without summary.csv: the SMs the trace shows */
    if (read_summary(o->from, title, sizeof title, &sms)) snprintf(title, sizeof title, "%s", o->from);
    struct stat st, in;
    const int to_stdout = o->out && !strcmp(o->out, "-");
    if (!o->out) beside(o->from, "trace.json", path, sizeof path);
    else if (!to_stdout && !stat(o->out, &st) && S_ISDIR(st.st_mode))
        snprintf(path, sizeof path, "%s/trace.json", o->out);
    else snprintf(path, sizeof path, "%s", to_stdout ? "stdout" : o->out);
    int rc = GG_EXIT_OK;
    if (!to_stdout && !stat(path, &st) && !stat(o->from, &in) && st.st_dev == in.st_dev && st.st_ino == in.st_ino) {
        fprintf(stderr, "ggemm: --out %s is the trace.csv itself\n", path);
        rc = GG_EXIT_USAGE;
    }
    FILE *f = NULL;
    if (!rc) f = to_stdout ? stdout : fopen(path, "w");
    if (!rc && !f) {
        fprintf(stderr, "ggemm: --out: cannot write %s: %s\n", path, strerror(errno));
        rc = GG_EXIT_USAGE;
    }
    if (!rc && gg_trace_write_json(f, ev, lane, n, title)) {
        fprintf(stderr, "ggemm: %s: %s\n", o->from, gg_error());
        rc = GG_EXIT_USAGE;
    }
    if (f) { /* a full disk shows only here */
        int bad = ferror(f);
        bad |= f == stdout ? fflush(f) : fclose(f);
        if (bad && !rc) {
            fprintf(stderr, "ggemm: --out: cannot write %s: %s\n", path, strerror(errno));
            rc = GG_EXIT_USAGE;
        }
    }
    GgTraceSummary s;
    if (!rc && gg_trace_summarize(ev, n, sms, &s)) {
        fprintf(stderr, "ggemm: %s: %s\n", o->from, gg_error());
        rc = GG_EXIT_USAGE;
    }
    if (!rc) { /* with the JSON on stdout, the report goes to stderr */
        FILE *report = to_stdout ? stderr : stdout;
        fprintf(report, "trace: %ld events of %s -> %s\n", n, o->from, path);
        print_summary(report, &s);
    }
    free(ev);
    free(lane);
    return rc;
}

int gg_cmd_trace(const GgOptions *o) {
    if (o->from) return trace_from_csv(o);
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
        trace_title(title, sizeof title, impl.name, p.tokens, p.experts, p.k, p.n);
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
        print_summary(stdout, &s);
        if (traced.reps)
            printf("time: untraced median %.2f us, traced %.2f us: %+.2f%% (%d reps each)\n", plain.median_us,
                   traced.median_us, 100.0 * (traced.median_us / plain.median_us - 1.0), traced.reps);
    }
    gg_trace_free(&tr);
    gg_problem_free(&p);
    gg_release_buffers();
    return rc;
}
