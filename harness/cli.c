#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"

void gg_usage(FILE *f) {
    fputs("usage: ggemm COMMAND [options]\n"
          "  problem   [--tokens T] [--experts E] [--k K] [--n N] [--skew s] [--m-list m0,m1,...]\n"
          "            [--block-m BM] [--block-n BN] [--format text|csv]   split and tiles, no GPU\n"
          "  list                                       registered kernels; on a GPU, resources\n"
          "  run --kernel NAME [problem flags] [--reps N] [--warmup N] [--seed S] [--no-check]\n"
          "  sweep [--kernels a,b,...] [--out FILE] [--reps N] [--seed S]   the worklog sweep\n"
          "  ceilings                                   measured copy, GEMM, FFMA, mma.sync peaks\n"
          "  device                                     the GPU's name, or exit 77 without one\n"
          "defaults: T=16384 E=64 K=1024 N=2688 s=0 BM=BN=128 reps=30 warmup=5 seed=1\n"
          "exit codes: 0 ok, 1 check failed, 2 bad usage, 77 no suitable GPU\n",
          f);
}

void gg_options_default(GgOptions *o) {
    memset(o, 0, sizeof *o);
    o->command = GG_CMD_PROBLEM;
    o->tokens = 16384;
    o->experts = 64;
    o->k = 1024;
    o->n = 2688;
    o->skew = 0.0;
    o->block_m = 128;
    o->block_n = 128;
    o->reps = 30;
    o->warmup = 5;
    o->seed = 1;
    o->check = 1;
}

int gg_parse_int(const char *s, long lo, long hi, int *out) {
    if (!s || !*s) return 1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return 1;
    *out = (int)v;
    return 0;
}

int gg_parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !*s) return 1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return 1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, unsigned long long *out) {
    if (!s || !*s || *s == '-') return 1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return 1;
    *out = v;
    return 0;
}

static int parse_m_list(const char *s, GgOptions *o) {
    char tok[16];
    o->m_count = 0;
    for (const char *p = s;; ++p) {
        size_t len = strcspn(p, ",");
        if (len >= sizeof tok || o->m_count == GG_MAX_EXPERTS) return 1;
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (gg_parse_int(tok, 0, 1 << 24, &o->m_list[o->m_count])) return 1;
        o->m_count++;
        p += len;
        if (!*p) return 0;
    }
}

#define FAIL(...)                             \
    do {                                      \
        snprintf(err, err_len, __VA_ARGS__);  \
        return GG_EXIT_USAGE;                 \
    } while (0)

int gg_parse_args(int argc, char **argv, GgOptions *o, char *err, size_t err_len) {
    gg_options_default(o);
    if (argc < 2) FAIL("missing command (problem, list, run, sweep, ceilings, device); try --help");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "problem")) o->command = GG_CMD_PROBLEM;
    else if (!strcmp(cmd, "list")) o->command = GG_CMD_LIST;
    else if (!strcmp(cmd, "run")) o->command = GG_CMD_RUN;
    else if (!strcmp(cmd, "sweep")) o->command = GG_CMD_SWEEP;
    else if (!strcmp(cmd, "ceilings")) o->command = GG_CMD_CEILINGS;
    else if (!strcmp(cmd, "device")) o->command = GG_CMD_DEVICE;
    else FAIL("unknown command '%s' (problem, list, run, sweep, ceilings, device)", cmd);

    int tokens_given = 0, experts_given = 0;
    for (int i = 2; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = 1;
        if (!strcmp(a, "--no-check")) {
            o->check = 0;
            takes_value = 0;
        } else if (!v) {
            FAIL("option %s needs a value", a);
        } else if (!strcmp(a, "--tokens")) {
            if (gg_parse_int(v, 0, 1 << 24, &o->tokens)) FAIL("--tokens: '%s' is not an integer in [0, 16777216]", v);
            tokens_given = 1;
        } else if (!strcmp(a, "--experts")) {
            if (gg_parse_int(v, 1, GG_MAX_EXPERTS, &o->experts)) FAIL("--experts: '%s' is not an integer in [1, %d]", v, GG_MAX_EXPERTS);
            experts_given = 1;
        } else if (!strcmp(a, "--k")) {
            if (gg_parse_int(v, 1, 1 << 20, &o->k)) FAIL("--k: '%s' is not an integer in [1, 1048576]", v);
        } else if (!strcmp(a, "--n")) {
            if (gg_parse_int(v, 1, 1 << 20, &o->n)) FAIL("--n: '%s' is not an integer in [1, 1048576]", v);
        } else if (!strcmp(a, "--skew")) {
            if (gg_parse_double(v, 0.0, 8.0, &o->skew)) FAIL("--skew: '%s' is not a number in [0, 8]", v);
        } else if (!strcmp(a, "--m-list")) {
            if (parse_m_list(v, o)) FAIL("--m-list: '%s' is not a comma-separated list of row counts", v);
        } else if (!strcmp(a, "--block-m")) {
            if (gg_parse_int(v, 1, 4096, &o->block_m)) FAIL("--block-m: '%s' is not an integer in [1, 4096]", v);
        } else if (!strcmp(a, "--block-n")) {
            if (gg_parse_int(v, 1, 4096, &o->block_n)) FAIL("--block-n: '%s' is not an integer in [1, 4096]", v);
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(v, "csv")) o->csv = 1;
            else if (!strcmp(v, "text")) o->csv = 0;
            else FAIL("--format: '%s' is not text or csv", v);
        } else if (!strcmp(a, "--kernel")) {
            o->kernel = v;
        } else if (!strcmp(a, "--kernels")) {
            o->kernels = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--reps")) {
            if (gg_parse_int(v, 1, 100000, &o->reps)) FAIL("--reps: '%s' is not an integer in [1, 100000]", v);
        } else if (!strcmp(a, "--warmup")) {
            if (gg_parse_int(v, 0, 100000, &o->warmup)) FAIL("--warmup: '%s' is not an integer in [0, 100000]", v);
        } else if (!strcmp(a, "--seed")) {
            if (parse_u64(v, &o->seed)) FAIL("--seed: '%s' is not a non-negative integer", v);
        } else {
            FAIL("unknown option '%s' for %s", a, cmd);
        }
        i += takes_value;
    }
    if (o->m_count > 0) {
        if (tokens_given || experts_given) FAIL("--m-list gives the split; do not combine it with --tokens or --experts");
        long t = 0;
        for (int e = 0; e < o->m_count; ++e) t += o->m_list[e];
        if (t > (1 << 24)) FAIL("--m-list: %ld rows in all, more than 16777216", t);
        o->experts = o->m_count;
        o->tokens = (int)t;
    }
    /* TMA and 16-byte vector loads need every row of A, B and C to start on 16 bytes. */
    if (o->k % 8) FAIL("--k %d: K must be a multiple of 8 (16-byte bf16 rows)", o->k);
    if (o->n % 8) FAIL("--n %d: N must be a multiple of 8 (16-byte bf16 rows)", o->n);
    if (o->command == GG_CMD_RUN && !o->kernel) FAIL("run needs --kernel NAME (see 'ggemm list')");
    return 0;
}

int gg_options_problem(const GgOptions *o, GgProblem *p) {
    if (o->m_count > 0) return gg_problem_from_counts(p, o->m_list, o->m_count, o->k, o->n);
    return gg_problem_init(p, o->tokens, o->experts, o->k, o->n, o->skew);
}
