/* ggemm sweep and ggemm cases: the plan (which kernel on which case, each pair once), run and
 * written as CSV, or printed for the torch peer and for the reader. */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno, clock_gettime */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gg_commands.h"

typedef struct {
    int c;                    /* index into the case list */
    int impl;                 /* index into kernels, then peers */
} Entry;

static const char *impl_name(int i) {
    return i < gg_kernel_count ? gg_kernels[i].name : gg_peers[i - gg_kernel_count].name;
}

static int same_shape(const GgCase *a, const GgCase *b) {
    return a->tokens == b->tokens && a->experts == b->experts && a->k == b->k && a->n == b->n &&
           a->skew == b->skew;
}

/* Case-major, registry order inside a case; a (kernel, shape) pair that an earlier line of the
 * case list already has is left out, and so is a kernel of a pass --pass does not name. */
static int plan(const GgOptions *o, const GgCaseList *cases, Entry **out, int *count) {
    const int impls = gg_kernel_count + gg_peer_count;
    Entry *e = malloc(sizeof(Entry) * (size_t)(cases->count * impls + 1));
    if (!e) {
        gg_error_set("out of host memory for the sweep plan");
        return GG_EXIT_USAGE;
    }
    int n = 0;
    for (int c = 0; c < cases->count; ++c)
        for (int i = 0; i < impls; ++i) {
            if (!gg_case_has(&cases->cases[c], impl_name(i), o->kernels)) continue;
            if (o->passes && !(o->passes & (1u << gg_impl_pass(impl_name(i))))) continue;
            int dup = 0;
            for (int j = 0; j < n && !dup; ++j)
                dup = e[j].impl == i && same_shape(&cases->cases[e[j].c], &cases->cases[c]);
            if (!dup) e[n++] = (Entry){c, i};
        }
    *out = e;
    *count = n;
    return GG_EXIT_OK;
}

static unsigned long long seed_of(const GgOptions *o, const Entry *e) {
    return o->seed + 1000ull * (unsigned long long)e->c + (unsigned long long)e->impl;
}

/* Every name in --kernels must exist: a typo must not silently measure nothing. */
static int select_plan(const GgOptions *o, GgCaseList *cases, Entry **entries, int *count) {
    if (gg_check_kernel_names(o->kernels)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        return GG_EXIT_USAGE;
    }
    if (gg_cases_select(o, cases) || plan(o, cases, entries, count)) {
        fprintf(stderr, "ggemm: %s\n", gg_error());
        gg_cases_free(cases);
        return GG_EXIT_USAGE;
    }
    /* A name given whole (not NAME*) that no selected case runs would be dropped without a word,
     * and a comparison meant to include it would silently lack it. */
    for (const char *p = o->kernels; p && *p && *count > 0;) {
        const size_t len = strcspn(p, ",");
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        int planned = len == 0 || name[len - 1] == '*';
        for (int j = 0; j < *count && !planned; ++j) planned = !strcmp(impl_name((*entries)[j].impl), name);
        for (int i = 0; i < gg_lab_count && !planned; ++i) planned = !strcmp(gg_labs[i].name, name);
        if (!planned) {
            fprintf(stderr, "ggemm: --kernels %s: no selected case of %s lists it (or not for --pass)\n", name,
                    gg_case_file());
            free(*entries);
            gg_cases_free(cases);
            return GG_EXIT_USAGE;
        }
        p += len;
        if (*p) ++p;
    }
    if (*count == 0) { /* --kernels naming only labs (graded, not swept), or none the cases list */
        int lab = 0;
        for (int i = 0; i < gg_lab_count && o->kernels; ++i) lab |= gg_in_list(o->kernels, gg_labs[i].name);
        if (lab) fprintf(stderr, "ggemm: the selection gives no runs (labs are graded with 'ggemm grade', not swept)\n");
        else fprintf(stderr, "ggemm: the selection gives no runs: no case selected from %s lists --kernels %s\n",
                     gg_case_file(), o->kernels ? o->kernels : "(all)");
        free(*entries);
        gg_cases_free(cases);
        return GG_EXIT_USAGE;
    }
    return GG_EXIT_OK;
}

int gg_cmd_cases(const GgOptions *o) {
    GgCaseList cases;
    Entry *e;
    int count;
    if (select_plan(o, &cases, &e, &count)) return GG_EXIT_USAGE;
    /* min_bytes: the pass's compulsory bytes (gg_pass_shape), the peers' roofline from the one place. */
    if (o->csv) puts("case,set,tokens,experts,k,n,skew,kernel,seed,m_list,min_bytes");
    for (int i = 0; i < count; ++i) {
        const GgCase *c = &cases.cases[e[i].c];
        if (!o->csv) {
            if (i == 0 || e[i - 1].c != e[i].c)
                printf("%scase %d (%s): tokens %d, experts %d, k %d, n %d, skew %g:", i ? "\n" : "", e[i].c, c->set,
                       c->tokens, c->experts, c->k, c->n, c->skew);
            printf(" %s", impl_name(e[i].impl));
            continue;
        }
        printf("%d,%s,%d,%d,%d,%d,%g,%s,%llu,", e[i].c, c->set, c->tokens, c->experts, c->k, c->n, c->skew,
               impl_name(e[i].impl), seed_of(o, &e[i]));
        GgProblem p; /* the one split rule (gg_split_rows), for the peers too */
        if (gg_problem_init(&p, c->tokens, c->experts, c->k, c->n, c->skew)) {
            fprintf(stderr, "ggemm: out of host memory\n");
            return GG_EXIT_USAGE;
        }
        for (int x = 0; x < c->experts; ++x) printf("%s%d", x ? " " : "", p.m[x]);
        printf(",%.0f\n", gg_pass_shape(&p, gg_impl_pass(impl_name(e[i].impl))).bytes);
        gg_problem_free(&p);
    }
    if (!o->csv && count) putchar('\n');
    if (!o->csv) printf("%d runs over %d cases\n", count, cases.count);
    free(e);
    gg_cases_free(&cases);
    return GG_EXIT_OK;
}

static void duration(double s, char *buf, size_t len) {
    if (s < 60) snprintf(buf, len, "%.0fs", s);
    else snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int gg_cmd_sweep(const GgOptions *o) {
    GgCaseList cases;
    Entry *e;
    int count;
    if (select_plan(o, &cases, &e, &count)) return GG_EXIT_USAGE;
    GgDeviceInfo d;
    int rc = gg_open_gpu(&d);
    FILE *f = NULL;
    if (!rc) {
        f = o->out ? fopen(o->out, "w") : stdout;
        if (!f) {
            fprintf(stderr, "ggemm: cannot write %s\n", o->out);
            rc = GG_EXIT_USAGE;
        }
    }
    if (!rc) {
        fprintf(stderr, "ggemm: measuring ceilings on %s\n", d.name);
        if (gg_measure_ceilings(&d)) {
            fprintf(stderr, "ggemm: ceilings: %s\n", gg_error());
            rc = GG_EXIT_CHECK;
        }
    }
    if (rc) {
        if (f && f != stdout) fclose(f);
        free(e);
        gg_cases_free(&cases);
        return rc;
    }
    char date[64];
    gg_utc_now(date, sizeof date);
    gg_csv_metadata(f, &d, gg_commit(), date);
    const int rounds = o->rounds > 1 ? o->rounds : 1;
    if (rounds > 1) fprintf(f, "# rounds=%d\n", rounds); /* the protocol, with the header's other keys */
    gg_csv_header(f);
    fflush(f);

    /* What this GPU cannot run is said once, up front; external peers run elsewhere. */
    const int impls = gg_kernel_count + gg_peer_count;
    char *runs = calloc((size_t)impls, 1);
    char why[512];
    for (int i = 0; runs && i < impls; ++i) {
        GgImpl impl;
        gg_impl_find(impl_name(i), &impl);
        runs[i] = 1;
        if (impl.peer && impl.peer->script) runs[i] = 0;
        else if (!gg_impl_runs_here(&impl, d.cc_major, d.cc_minor, why, sizeof why)) {
            runs[i] = 0;
            int used = 0;
            for (int j = 0; j < count; ++j) used |= e[j].impl == i;
            if (used) fprintf(stderr, "ggemm: skip %s\n", why);
        }
    }
    int total = 0;
    for (int j = 0; runs && j < count; ++j) total += runs[e[j].impl];
    total *= rounds;
    /* A group: the plan's runs of one case (the plan is case-major), at most `impls` of them. Each
     * run's result and row per round, and its resolved impl (its rows' config points into it); the
     * rows are written after the group's last round. */
    GgRow *rows = malloc(sizeof(GgRow) * (size_t)(impls * rounds));
    int *results = malloc(sizeof(int) * (size_t)(impls * rounds));
    GgImpl *impl_of = malloc(sizeof(GgImpl) * (size_t)impls);
    if (!rows || !results || !impl_of) {
        fprintf(stderr, "ggemm: out of host memory for the sweep's rounds\n");
        rc = GG_EXIT_CHECK;
    }

    const int live = isatty(fileno(stderr)); /* one rewritten line on a terminal, a line per run in a log */
    const double start = now();
    int failures = 0, done = 0;
    /* Round r runs the group in plan order for even r and in reverse for odd r: each kernel of the
     * case meets the power states the others leave behind, before and after it. A run that a round
     * skipped (refused shape, not this GPU) or failed is not run again. */
    enum { NOT_RUN = -1 };
    for (int g0 = 0; !rc && runs && g0 < count;) {
        int g1 = g0 + 1;
        while (g1 < count && e[g1].c == e[g0].c) ++g1;
        const GgCase *c = &cases.cases[e[g0].c];
        for (int x = 0; x < (g1 - g0) * rounds; ++x) results[x] = NOT_RUN;
        for (int r = 0; r < rounds && !rc; ++r)
            for (int i = 0; i < g1 - g0 && !rc; ++i) {
                const int j = r % 2 ? g1 - 1 - i : g0 + i, at = (j - g0) * rounds;
                if (!runs[e[j].impl]) continue;
                if (r > 0 && results[at + r - 1]) { /* skipped or failed: the verdict stands */
                    results[at + r] = results[at + r - 1];
                    continue;
                }
                GgImpl *impl = &impl_of[j - g0];
                gg_impl_find(impl_name(e[j].impl), impl);
                char el[16], left[16];
                const double elapsed = now() - start;
                duration(elapsed, el, sizeof el);
                if (done) duration(elapsed / done * (total - done), left, sizeof left);
                else snprintf(left, sizeof left, "?");
                fprintf(stderr, "%s[%d/%d] %-24s tokens %5d experts %3d k %5d n %5d skew %-4g  %s elapsed, ~%s left%s",
                        live ? "\r\033[K" : "", done + 1, total, impl->name, c->tokens, c->experts, c->k, c->n,
                        c->skew, el, left, live ? "" : "\n");
                GgProblem p;
                if (gg_problem_init(&p, c->tokens, c->experts, c->k, c->n, c->skew)) {
                    fprintf(stderr, "\nggemm: out of host memory for the problem\n");
                    rc = GG_EXIT_CHECK;
                    break;
                }
                const GgShape shape = {p.tokens, p.experts, p.k, p.n};
                gg_impl_resolve(impl, &shape); /* an entry point's row records what it chose */
                const unsigned long long seed = seed_of(o, &e[j]);
                const GgRunOpts ro = {.seed = seed, .check = 1, .cpu_ref = 0, .warmup = o->warmup, .reps = o->reps};
                GgCheck chk;
                GgTiming tm;
                const int res = gg_run_case(impl, &p, &d, &ro, &chk, &tm, why, sizeof why);
                results[at + r] = res;
                ++done;
                if (res == GG_EXIT_USAGE || res == GG_EXIT_NO_GPU)
                    fprintf(stderr, "%sggemm:   skipped %s: %s\n", live ? "\n" : "", impl->name, why);
                else if (res)
                    fprintf(stderr, "%sggemm:   FAILED %s: %s\n", live ? "\n" : "", impl->name, why);
                gg_row_fill(&rows[at + r], impl, &p, &d, &chk, &tm, seed); /* gg_run_case zeroes chk, tm first */
                rows[at + r].set = c->set;
                gg_problem_free(&p);
            }
        /* The group's rows, in plan order (also those that ran before a failure to allocate ended
         * the sweep): a run refused in its first round has none; one that failed (or was refused
         * after a round that passed) its first bad round's; else the round of median time. */
        for (int j = g0; j < g1; ++j) {
            if (!runs[e[j].impl]) continue;
            const int at = (j - g0) * rounds;
            int bad = at;
            while (bad < at + rounds && results[bad] == GG_EXIT_OK) ++bad;
            if (bad < at + rounds && (results[bad] == NOT_RUN ||
                                      (bad == at && (results[bad] == GG_EXIT_USAGE || results[bad] == GG_EXIT_NO_GPU))))
                continue;
            int pick = bad;
            if (bad < at + rounds) {
                ++failures;
            } else { /* the round of median time */
                double t[100];
                for (int q = 0; q < rounds; ++q) t[q] = rows[at + q].time_us_median;
                pick = at + gg_median_index(t, rounds);
            }
            gg_csv_row(f, &rows[pick]);
            fflush(f);
        }
        g0 = g1;
    }
    free(rows);
    free(results);
    free(impl_of);
    char el[16];
    duration(now() - start, el, sizeof el);
    if (live) fputc('\n', stderr);
    if (f != stdout) fclose(f);
    free(runs);
    free(e);
    gg_cases_free(&cases);
    gg_release_buffers();
    fprintf(stderr, "ggemm: sweep done: %d runs in %s, %d failed the check\n", done, el, failures);
    return rc ? rc : failures ? GG_EXIT_CHECK : GG_EXIT_OK;
}
