/* The command line: one table of commands, one table of options, and which command uses which
 * option. Everything that is not in the tables is refused with one line. */
#define _POSIX_C_SOURCE 200809L /* stat, access: --out is checked before any GPU work */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gg_harness.h"

#ifndef GG_CASES_FILE
#define GG_CASES_FILE "harness/cases.csv"
#endif

/* Where the sweep's case list lives; GG_CASES names another (tests, experiments). */
const char *gg_case_file(void) {
    const char *f = getenv("GG_CASES");
    return f && *f ? f : GG_CASES_FILE;
}

enum {
    OPT_TOKENS, OPT_EXPERTS, OPT_K, OPT_N, OPT_SKEW, OPT_SKEWS, OPT_M_LIST, OPT_BLOCK_M, OPT_BLOCK_N,
    OPT_FORMAT, OPT_KERNEL, OPT_KERNELS, OPT_SET, OPT_OUT, OPT_REPS, OPT_WARMUP, OPT_SEED, OPT_NO_CHECK,
    OPT_CASES, OPT_MODEL, OPT_TOPK, OPT_D, OPT_F, OPT_FUSED, OPT_UNFUSED, OPT_NO_RENORM, OPT_LIST, OPT_SMS, OPT_FROM,
    OPT_GATHER, OPT_PASS, OPT_BACKWARD, OPT_ROUNDS, OPT_CHUNK, OPT_L2_MIB, OPT_COUNT
};

static const struct {
    const char *name;
    int takes_value;
} options[OPT_COUNT] = {
    [OPT_TOKENS] = {"--tokens", 1},   [OPT_EXPERTS] = {"--experts", 1}, [OPT_K] = {"--k", 1},
    [OPT_N] = {"--n", 1},             [OPT_SKEW] = {"--skew", 1},       [OPT_SKEWS] = {"--skews", 1},
    [OPT_M_LIST] = {"--m-list", 1},   [OPT_BLOCK_M] = {"--block-m", 1}, [OPT_BLOCK_N] = {"--block-n", 1},
    [OPT_FORMAT] = {"--format", 1},   [OPT_KERNEL] = {"--kernel", 1},   [OPT_KERNELS] = {"--kernels", 1},
    [OPT_SET] = {"--set", 1},         [OPT_OUT] = {"--out", 1},         [OPT_REPS] = {"--reps", 1},
    [OPT_WARMUP] = {"--warmup", 1},   [OPT_SEED] = {"--seed", 1},       [OPT_NO_CHECK] = {"--no-check", 0},
    [OPT_CASES] = {"--cases", 1},     [OPT_MODEL] = {"--model", 1},     [OPT_TOPK] = {"--topk", 1},
    [OPT_D] = {"--d", 1},             [OPT_F] = {"--f", 1},             [OPT_FUSED] = {"--fused", 0},
    [OPT_UNFUSED] = {"--unfused", 0}, [OPT_NO_RENORM] = {"--no-renorm", 0}, [OPT_LIST] = {"--list", 0},
    [OPT_SMS] = {"--sms", 1},         [OPT_FROM] = {"--from", 1},       [OPT_GATHER] = {"--gather", 1},
    [OPT_PASS] = {"--pass", 1},       [OPT_BACKWARD] = {"--backward", 0}, [OPT_ROUNDS] = {"--rounds", 1},
    [OPT_CHUNK] = {"--chunk", 1},
    [OPT_L2_MIB] = {"--l2-mib", 1},
};

#define BIT(o) (1ull << (o))
_Static_assert(OPT_COUNT <= 64, "a command's options are bits of one unsigned long long");
#define SHAPE (BIT(OPT_TOKENS) | BIT(OPT_EXPERTS) | BIT(OPT_K) | BIT(OPT_N))
#define TIMING (BIT(OPT_REPS) | BIT(OPT_WARMUP) | BIT(OPT_SEED))

static const struct {
    const char *name;
    GgCommand command;
    unsigned long long uses;  /* the options this command takes */
    int lists;                /* 1: shape options take comma-separated lists */
    const char *usage;
} commands[] = {
    {"problem", GG_CMD_PROBLEM, SHAPE | BIT(OPT_SKEW) | BIT(OPT_M_LIST) | BIT(OPT_BLOCK_M) | BIT(OPT_BLOCK_N) |
                                    BIT(OPT_FORMAT), 0,
     "problem  [--tokens T] [--experts E] [--k K] [--n N] [--skew s | --m-list m0,m1,...]\n"
     "           [--block-m BM] [--block-n BN] [--format text|csv]     the split and its tiles; no GPU"},
    {"list", GG_CMD_LIST, BIT(OPT_FORMAT), 0,
     "list     [--format text|csv]      every configuration; on a GPU its resources or why it cannot run"},
    {"run", GG_CMD_RUN,
     SHAPE | BIT(OPT_SKEW) | BIT(OPT_M_LIST) | BIT(OPT_KERNEL) | TIMING | BIT(OPT_NO_CHECK) | BIT(OPT_SMS), 0,
     "run      --kernel NAME [shape: as problem] [--reps N] [--warmup N] [--seed S] [--no-check] [--sms N]"},
    {"trace", GG_CMD_TRACE,
     SHAPE | BIT(OPT_SKEW) | BIT(OPT_M_LIST) | BIT(OPT_KERNEL) | BIT(OPT_OUT) | TIMING | BIT(OPT_SMS) |
         BIT(OPT_FROM), 0,
     "trace    --kernel NAME --out DIR [shape: as problem] [--warmup N] [--seed S] [--reps N] [--sms N]\n"
     "           the traced twin once after warm-up, checked: DIR/trace.csv, trace.json (Perfetto),\n"
     "           summary.csv; --reps N: also traced against untraced, N timed runs each\n"
     "           --sms N (run, trace): persistent kernels launch at most N CTAs, as on a GPU of N SMs\n"
     "           (an entry point still chooses for the whole GPU)\n"
     "  trace    --from DIR/trace.csv [--out FILE|DIR|-]   no GPU: that trace as Perfetto's trace.json\n"
     "           (default beside the CSV; DIR: DIR/trace.json; -: stdout)"},
    {"sweep", GG_CMD_SWEEP,
     SHAPE | BIT(OPT_SKEWS) | BIT(OPT_KERNELS) | BIT(OPT_SET) | BIT(OPT_OUT) | TIMING | BIT(OPT_PASS) | BIT(OPT_ROUNDS), 1,
     "sweep    [--set a,b | --tokens T,.. --experts E,.. --k K,.. --n N,.. --skews LIST]\n"
     "           [--kernels a,b] [--pass forward|backward|dgrad|wgrad] [--out FILE] [--reps N] [--warmup N] [--seed S]\n"
     "           [--rounds R]\n"
     "           LIST: 0,0.6,1.2 or start:stop:step; no shape option: the sets of harness/cases.csv;\n"
     "           --pass: only the kernels and peers of that pass (default: every pass the cases name);\n"
     "           --rounds R: each case's kernels timed R times in turn, every other round in reverse order,\n"
     "           each row the round of median time (kernels of one case then see the same power states)"},
    {"cases", GG_CMD_CASES,
     SHAPE | BIT(OPT_SKEWS) | BIT(OPT_KERNELS) | BIT(OPT_SET) | BIT(OPT_FORMAT) | BIT(OPT_SEED) | BIT(OPT_PASS), 1,
     "cases    [sweep's selection options] [--seed S] [--format text|csv]   what a sweep would run"},
    {"fuzz", GG_CMD_FUZZ, BIT(OPT_KERNELS) | BIT(OPT_CASES) | BIT(OPT_SEED) | BIT(OPT_OUT), 0,
     "fuzz     [--kernels a,b] [--cases N] [--seed S] [--out FILE]   random problems: each kernel\n"
     "           must pass the check or refuse the shape (can_implement), never fail or hang"},
    {"grade", GG_CMD_GRADE, BIT(OPT_KERNEL) | TIMING | BIT(OPT_FORMAT), 0,
     "grade    --kernel NAME [--reps N] [--warmup N] [--seed S] [--format text|csv]   a report card:\n"
     "           the edge shapes and the worklog's cases, checked, timed, against its stage"},
    {"moe", GG_CMD_MOE, BIT(OPT_TOKENS) | BIT(OPT_EXPERTS) | BIT(OPT_MODEL) | BIT(OPT_TOPK) | BIT(OPT_D) | BIT(OPT_F) |
                            BIT(OPT_FUSED) | BIT(OPT_UNFUSED) | BIT(OPT_NO_RENORM) | BIT(OPT_LIST) | BIT(OPT_OUT) |
                            TIMING | BIT(OPT_NO_CHECK) | BIT(OPT_GATHER) | BIT(OPT_BACKWARD), 1,
     "moe      [--model NAME,..|all | --experts E --topk K --d D --f F] [--tokens T,..]\n"
     "           [--fused | --unfused] [--no-renorm] [--out FILE] [--list] [--reps N] [--warmup N] [--seed S]\n"
     "           [--gather tma_warp|tma_warpgroup|cp_async|cp_async_m256] [--backward]\n"
     "           the whole MoE layer (k4_moe), checked, timed, per step; default: every model, T 256,4096,16384;\n"
     "           NAME: a model of k4_moe/k4_moe.c's table (an unknown NAME lists them);\n"
     "           --out: moe.csv; --list: the cases and their roofline floors, not run; --gather: the fused\n"
     "           GEMM1's variant, its gather (and for cp_async_m256 its tile; k4_moe/TRIALS.md; all but\n"
     "           the default, cp_async, need -DGG_ABLATIONS=ON);\n"
     "           --backward: also the layer's backward (k5_moe_backward) after each case's forward rows,\n"
     "           checked and timed (with --list: the backward's floors)"},
    {"tiles", GG_CMD_TILES,
     SHAPE | BIT(OPT_SKEW) | BIT(OPT_M_LIST) | BIT(OPT_SMS) | BIT(OPT_PASS) | BIT(OPT_KERNEL) | BIT(OPT_CHUNK) |
         BIT(OPT_L2_MIB), 0,
     "tiles    [--pass wgrad | --kernel NAME] [shape: as problem] [--sms N]   a work list as CSV, no GPU:\n"
     "           k5_wgrad's per item (CTA, expert, K and N block, split, fix-up; common/gg_wgrad.h), or a\n"
     "           persistent k3_wgmma or k5_dgrad configuration's tiles per CTA (common/gg_schedule.h; dgrad's\n"
     "           over dA, k wide); --kernel of a wgrad kernel: its own list (k5_wgrad_m256's 256-row tiles);\n"
     "           N SMs (default 132); --chunk C: a wgrad list cut at C 64-row blocks instead of\n"
     "           gg_wgrad_chunk's (a what-if: no kernel runs it);\n"
     "           --l2-mib L: a wgrad list's tile order for an L2 of L MiB (default 60, the H200's)"},
    {"ceilings", GG_CMD_CEILINGS, 0, 0,
     "ceilings                          measured copy, write, read, GEMM, FFMA and mma.sync peaks"},
    {"calibrate", GG_CMD_CALIBRATE, BIT(OPT_OUT) | TIMING | BIT(OPT_FROM), 0,
     "calibrate [--out FILE] [--reps N] [--warmup N] [--seed S]   k3_wgmma's cost model constants,\n"
     "           measured here (a minute); GG_CALIBRATION=FILE makes the entry point use them\n"
     "  calibrate --from FILE [--out FILE]   no GPU: FILE's measured times fit again by this build"},
    {"device", GG_CMD_DEVICE, 0, 0, "device                            the GPU's name, or exit 77 without one"},
    {"--version", GG_CMD_VERSION, 0, 0,
     "--version                         commit, CUDA runtime it was built with, driver found"},
    {"--help", GG_CMD_HELP, 0, 0,
     "--help [COMMAND]                  this text, or one command's (also: ggemm COMMAND --help)"},
};
#define COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage_tail(FILE *f) {
    fputs("defaults: T=16384 E=64 K=1024 N=2688 s=0 BM=BN=128 reps=30 warmup=5 seed=1\n"
          "exit codes: 0 ok, 1 check failed, 2 bad usage, 77 no suitable GPU\n",
          f);
}

void gg_usage(FILE *f) {
    fputs("usage: ggemm COMMAND [options]\n", f);
    for (int c = 0; c < COMMANDS; ++c) fprintf(f, "  %s\n", commands[c].usage);
    usage_tail(f);
}

/* One command's text from the same table, and the options it takes from its `uses` bits, so
 * that the two can never disagree. */
void gg_usage_command(FILE *f, GgCommand command) {
    int c = 0;
    while (c < COMMANDS - 1 && commands[c].command != command) ++c;
    if (command == GG_CMD_HELP) {
        gg_usage(f);
        return;
    }
    fprintf(f, "usage: ggemm %s\n", commands[c].usage);
    fputs("options:", f);
    for (int o = 0; o < OPT_COUNT; ++o)
        if (commands[c].uses & BIT(o)) fprintf(f, " %s", options[o].name);
    fputs(" --help\n", f);
    usage_tail(f);
}

/* strtol and strtod skip leading blanks and take a '+': the whole string must be the number. */
static int plain_start(const char *s) { return s && (isdigit((unsigned char)*s) || *s == '-' || *s == '.'); }

int gg_parse_int(const char *s, long lo, long hi, int *out) {
    if (!plain_start(s)) return 1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return 1;
    *out = (int)v;
    return 0;
}

int gg_parse_double(const char *s, double lo, double hi, double *out) {
    if (!plain_start(s)) return 1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* ERANGE with a finite result is underflow (1e-320, 1e-400): a number in range all the same;
     * overflow gives HUGE_VAL, which isfinite refuses. */
    if ((errno && errno != ERANGE) || *end || !isfinite(v) || v < lo || v > hi) return 1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, unsigned long long *out) {
    if (!s || !isdigit((unsigned char)*s)) return 1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return 1;
    *out = v;
    return 0;
}

#define MAX_SKEW 8.0

/* The len characters at s, as a string in buf; 1 if they do not fit. */
static int token(const char *s, size_t len, char *buf, size_t size) {
    if (len >= size) return 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return 0;
}

int gg_parse_skews(const char *s, GgDoubleList *out) {
    out->count = 0;
    if (!s || !*s) return 1;
    char buf[64];
    if (strchr(s, ':')) { /* start:stop:step, stop included (to a millionth of a step) */
        double v[3];
        const char *p = s;
        for (int i = 0; i < 3; ++i) {
            size_t len = strcspn(p, ":");
            if (token(p, len, buf, sizeof buf) || gg_parse_double(buf, 0.0, MAX_SKEW, &v[i])) return 1;
            p += len;
            if (i < 2 && *p++ != ':') return 1;
        }
        if (*p || v[2] <= 0 || v[1] < v[0]) return 1;
        for (int i = 0;; ++i) {
            const double x = v[0] + i * v[2];
            if (x > v[1] + 1e-6 * v[2]) break;
            if (out->count == GG_MAX_LIST) return 1;
            out->v[out->count++] = round(x * 1e6) / 1e6; /* 0.6000000000000001 -> 0.6 */
        }
        return 0;
    }
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        if (out->count == GG_MAX_LIST || token(p, len, buf, sizeof buf) ||
            gg_parse_double(buf, 0.0, MAX_SKEW, &out->v[out->count]))
            return 1;
        out->count++;
        p += len;
        if (!*p++) return 0;
    }
}

static int parse_int_list(const char *s, long lo, long hi, int lists, GgIntList *out) {
    out->count = 0;
    if (!s || !*s) return 1;
    char buf[32];
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        if (out->count == (lists ? GG_MAX_LIST : 1) || token(p, len, buf, sizeof buf) ||
            gg_parse_int(buf, lo, hi, &out->v[out->count]))
            return 1;
        out->count++;
        p += len;
        if (!*p++) return 0;
    }
}

#define FAIL(...)                             \
    do {                                      \
        snprintf(err, err_len, __VA_ARGS__);  \
        return GG_EXIT_USAGE;                 \
    } while (0)

/* --m-list: row counts per expert; errors name the limit that was hit. */
static int parse_m_list(const char *s, GgOptions *o, char *err, size_t err_len) {
    char buf[32];
    long total = 0;
    o->m_count = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        if (o->m_count == GG_MAX_EXPERTS) FAIL("--m-list: more than %d experts", GG_MAX_EXPERTS);
        const int e = o->m_count;
        if (token(p, len, buf, sizeof buf) || gg_parse_int(buf, 0, 0x7fffffff, &o->m_list[e]))
            FAIL("--m-list: entry %d ('%.*s') is not a row count", e, (int)(len < 24 ? len : 24), p);
        if (o->m_list[e] > GG_MAX_ROWS)
            FAIL("--m-list: expert %d has %d rows; at most %d rows per expert", e, o->m_list[e], GG_MAX_ROWS);
        total += o->m_list[e];
        if (total > GG_MAX_ROWS) FAIL("--m-list: more than %d rows in all", GG_MAX_ROWS);
        o->m_count++;
        p += len;
        if (!*p++) return 0;
    }
}

/* --out: a file (trace: a directory) this process can write or create, checked before any GPU
 * work, so that a typo costs no run. Nothing is created here. */
static int check_out(const char *path, int is_dir, char *err, size_t err_len) {
    struct stat st;
    const size_t len = strlen(path);
    if (len == 0) FAIL("--out: empty path");
    if (!is_dir && path[len - 1] == '/') FAIL("--out %s: names a directory; give a file name", path);
    if (stat(path, &st) == 0) {
        if (is_dir && !S_ISDIR(st.st_mode)) FAIL("--out %s: exists and is not a directory", path);
        if (!is_dir && S_ISDIR(st.st_mode)) FAIL("--out %s: is a directory; give a file name", path);
        if (access(path, is_dir ? W_OK | X_OK : W_OK)) FAIL("--out %s: not writable: %s", path, strerror(errno));
        return 0;
    }
    if (errno != ENOENT) FAIL("--out %s: %s", path, strerror(errno));
    char dir[4096]; /* the folder it is to be made in */
    if (len >= sizeof dir) FAIL("--out: path longer than %zu characters", sizeof dir - 1);
    memcpy(dir, path, len + 1);
    char *end = dir + len;
    while (end > dir + 1 && end[-1] == '/') *--end = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else slash[slash == dir] = '\0'; /* "/x" -> "/" */
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) FAIL("--out %s: the folder %s does not exist", path, dir);
    if (access(dir, W_OK | X_OK)) FAIL("--out %s: cannot create it in %s: %s", path, dir, strerror(errno));
    return 0;
}

static void defaults(GgOptions *o) {
    memset(o, 0, sizeof *o);
    o->command = GG_CMD_HELP;
    o->tokens = (GgIntList){1, {16384}};
    o->experts = (GgIntList){1, {64}};
    o->k = (GgIntList){1, {1024}};
    o->n = (GgIntList){1, {2688}};
    o->skews = (GgDoubleList){1, {0.0}};
    o->block_m = 128;
    o->block_n = 128;
    o->reps = 30;
    o->warmup = 5;
    o->rounds = 1;
    o->seed = 1;
    o->check = 1;
    o->cases = 100;
}

int gg_parse_args(int argc, char **argv, GgOptions *o, char *err, size_t err_len) {
    defaults(o);
    if (argc < 2) FAIL("missing command (see 'ggemm --help')");
    int cmd = -1;
    for (int c = 0; c < COMMANDS; ++c)
        if (!strcmp(argv[1], commands[c].name)) cmd = c;
    for (int c = 0; c < COMMANDS; ++c) { /* the spellings without dashes */
        if (commands[c].command == GG_CMD_HELP && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) cmd = c;
        if (commands[c].command == GG_CMD_VERSION && !strcmp(argv[1], "version")) cmd = c;
    }
    if (cmd < 0) FAIL("unknown command '%s' (see 'ggemm --help')", argv[1]);
    o->command = commands[cmd].command;
    if (o->command == GG_CMD_HELP && argc > 2) { /* ggemm help COMMAND */
        int of = -1;
        for (int c = 0; c < COMMANDS; ++c)
            if (!strcmp(argv[2], commands[c].name)) of = c;
        if (of < 0) FAIL("unknown command '%s' (see 'ggemm --help')", argv[2]);
        if (argc > 3) FAIL("help takes one command name; '%s' is one too many", argv[3]);
        o->command = commands[of].command;
        o->help = 1;
        return 0;
    }
    /* COMMAND --help anywhere: that command's usage, whatever else is on the line. */
    for (int i = 2; i < argc; ++i)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            o->help = 1;
            return 0;
        }
    const char *name = commands[cmd].name;
    const int lists = commands[cmd].lists;

    unsigned seen = 0;
    for (int i = 2; i < argc; ++i) {
        const char *a = argv[i];
        int opt = -1;
        for (int j = 0; j < OPT_COUNT; ++j)
            if (!strcmp(a, options[j].name)) opt = j;
        if (opt < 0) FAIL("unknown option '%s' (see 'ggemm --help')", a);
        if (!(commands[cmd].uses & BIT(opt))) FAIL("option %s is not used by '%s'", a, name);
        if (seen & BIT(opt)) FAIL("option %s is given twice", a);
        seen |= BIT(opt);
        const char *v = NULL;
        if (options[opt].takes_value) {
            if (i + 1 >= argc) FAIL("option %s needs a value", a);
            v = argv[++i];
        }
        switch (opt) {
        case OPT_TOKENS:
            if (parse_int_list(v, 0, GG_MAX_ROWS, lists, &o->tokens))
                FAIL("--tokens: '%s' is not %s in [0, %d]", v, lists ? "a list of integers" : "an integer",
                     GG_MAX_ROWS);
            o->given_tokens = 1;
            break;
        case OPT_EXPERTS:
            if (parse_int_list(v, 1, GG_MAX_EXPERTS, lists, &o->experts))
                FAIL("--experts: '%s' is not %s in [1, %d]", v, lists ? "a list of integers" : "an integer",
                     GG_MAX_EXPERTS);
            o->given_experts = 1;
            break;
        case OPT_K:
            if (parse_int_list(v, 1, 1 << 20, lists, &o->k))
                FAIL("--k: '%s' is not %s in [1, 1048576]", v, lists ? "a list of integers" : "an integer");
            o->given_k = 1;
            break;
        case OPT_N:
            if (parse_int_list(v, 1, 1 << 20, lists, &o->n))
                FAIL("--n: '%s' is not %s in [1, 1048576]", v, lists ? "a list of integers" : "an integer");
            o->given_n = 1;
            break;
        case OPT_SKEW:
            if (gg_parse_double(v, 0.0, MAX_SKEW, &o->skews.v[0])) FAIL("--skew: '%s' is not a number in [0, 8]", v);
            o->given_skew = 1;
            break;
        case OPT_SKEWS:
            if (gg_parse_skews(v, &o->skews))
                FAIL("--skews: '%s' is not a list of numbers in [0, 8] or start:stop:step (at most %d values)", v,
                     GG_MAX_LIST);
            o->given_skew = 1;
            break;
        case OPT_M_LIST:
            if (parse_m_list(v, o, err, err_len)) return GG_EXIT_USAGE;
            break;
        case OPT_BLOCK_M:
            if (gg_parse_int(v, 1, 4096, &o->block_m)) FAIL("--block-m: '%s' is not an integer in [1, 4096]", v);
            break;
        case OPT_BLOCK_N:
            if (gg_parse_int(v, 1, 4096, &o->block_n)) FAIL("--block-n: '%s' is not an integer in [1, 4096]", v);
            break;
        case OPT_FORMAT:
            if (!strcmp(v, "csv")) o->csv = 1;
            else if (!strcmp(v, "text")) o->csv = 0;
            else FAIL("--format: '%s' is not text or csv", v);
            break;
        case OPT_KERNEL: o->kernel = v; break;
        case OPT_KERNELS: o->kernels = v; break;
        case OPT_SET: o->set = v; break;
        case OPT_OUT: o->out = v; break;
        case OPT_REPS:
            if (gg_parse_int(v, 1, 100000, &o->reps)) FAIL("--reps: '%s' is not an integer in [1, 100000]", v);
            o->given_reps = 1;
            break;
        case OPT_ROUNDS:
            if (gg_parse_int(v, 1, 100, &o->rounds)) FAIL("--rounds: '%s' is not an integer in [1, 100]", v);
            break;
        case OPT_WARMUP:
            if (gg_parse_int(v, 0, 100000, &o->warmup)) FAIL("--warmup: '%s' is not an integer in [0, 100000]", v);
            break;
        case OPT_SEED:
            if (parse_u64(v, &o->seed)) FAIL("--seed: '%s' is not a non-negative integer", v);
            break;
        case OPT_NO_CHECK: o->check = 0; break;
        case OPT_FROM: o->from = v; break;
        case OPT_PASS:
            o->passes = !strcmp(v, "backward") ? (1u << GG_PASS_DGRAD) | (1u << GG_PASS_WGRAD) : 0;
            for (int pass = GG_PASS_FORWARD; pass <= GG_PASS_WGRAD; ++pass)
                if (!strcmp(v, gg_pass_name((GgPass)pass))) o->passes = 1u << pass;
            if (!o->passes) FAIL("--pass: '%s' is not forward, backward, dgrad or wgrad", v);
            break;
        case OPT_SMS:
            if (gg_parse_int(v, 1, 100000, &o->sms)) FAIL("--sms: '%s' is not an integer in [1, 100000]", v);
            break;
        case OPT_CHUNK:
            if (gg_parse_int(v, 1, 1 << 20, &o->chunk)) FAIL("--chunk: '%s' is not an integer in [1, 1048576]", v);
            break;
        case OPT_L2_MIB:
            if (gg_parse_int(v, 1, 1 << 20, &o->l2_mib)) FAIL("--l2-mib: '%s' is not an integer in [1, 1048576]", v);
            break;
        case OPT_MODEL: o->model = v; break;
        case OPT_TOPK:
            if (gg_parse_int(v, 0, GG_MAX_EXPERTS, &o->topk)) FAIL("--topk: '%s' is not an integer in [0, %d]", v, GG_MAX_EXPERTS);
            break;
        case OPT_D:
            if (gg_parse_int(v, 1, 1 << 16, &o->d)) FAIL("--d: '%s' is not an integer in [1, 65536]", v);
            break;
        case OPT_F:
            if (gg_parse_int(v, 1, 1 << 18, &o->f)) FAIL("--f: '%s' is not an integer in [1, 262144]", v);
            break;
        case OPT_FUSED: o->path = GG_PATH_FUSED; break;
        case OPT_UNFUSED: o->path = GG_PATH_UNFUSED; break;
        case OPT_NO_RENORM: o->no_renorm = 1; break;
        case OPT_LIST: o->list = 1; break;
        case OPT_GATHER: o->gather = v; break;
        case OPT_BACKWARD: o->backward = 1; break;
        case OPT_CASES:
            if (gg_parse_int(v, 1, 1000000, &o->cases)) FAIL("--cases: '%s' is not an integer in [1, 1000000]", v);
            break;
        }
    }
    if (o->m_count > 0) {
        if (o->given_tokens || o->given_experts || o->given_skew)
            FAIL("--m-list gives the split; it cannot be combined with --tokens, --experts or --skew");
        o->experts.v[0] = o->m_count;
        long t = 0;
        for (int e = 0; e < o->m_count; ++e) t += o->m_list[e];
        o->tokens.v[0] = (int)t;
    }
    if ((seen & BIT(OPT_FUSED)) && (seen & BIT(OPT_UNFUSED)))
        FAIL("--fused and --unfused exclude each other (give neither for both paths)");
    if ((seen & BIT(OPT_GATHER)) && (seen & BIT(OPT_UNFUSED))) FAIL("--gather picks the fused path's gather: not with --unfused");
    o->given_layer = (seen & (BIT(OPT_EXPERTS) | BIT(OPT_TOPK) | BIT(OPT_D) | BIT(OPT_F))) != 0;
    if (o->command == GG_CMD_MOE && o->model && o->given_layer)
        FAIL("--model fixes experts, topk, d and F; give --experts --topk --d --f without it");
    if (o->command == GG_CMD_MOE && !o->model && o->given_layer &&
        (seen & (BIT(OPT_EXPERTS) | BIT(OPT_TOPK) | BIT(OPT_D) | BIT(OPT_F))) !=
            (BIT(OPT_EXPERTS) | BIT(OPT_TOPK) | BIT(OPT_D) | BIT(OPT_F)))
        FAIL("moe without --model needs all four of --experts, --topk, --d and --f");
    if (o->set && (o->given_tokens || o->given_experts || o->given_k || o->given_n || o->given_skew))
        FAIL("--set names cases of %s; it cannot be combined with shape options", gg_case_file());
    /* TMA and 16-byte vector loads need every row of A, B and C to start on 16 bytes. */
    for (int i = 0; i < o->k.count; ++i)
        if (o->k.v[i] % 8) FAIL("--k %d: K must be a multiple of 8 (16-byte bf16 rows)", o->k.v[i]);
    for (int i = 0; i < o->n.count; ++i)
        if (o->n.v[i] % 8) FAIL("--n %d: N must be a multiple of 8 (16-byte bf16 rows)", o->n.v[i]);
    if (o->command == GG_CMD_RUN && !o->kernel) FAIL("run needs --kernel NAME (see 'ggemm list')");
    if (o->command == GG_CMD_GRADE && !o->kernel) FAIL("grade needs --kernel NAME (see 'ggemm list')");
    if (o->from && (seen & ~(BIT(OPT_FROM) | BIT(OPT_OUT))))
        FAIL(o->command == GG_CMD_CALIBRATE
                 ? "calibrate --from fits a calibration file again, no GPU; it takes only --out"
                 : "trace --from converts a trace.csv, no GPU; it takes only --out");
    if (o->command == GG_CMD_TRACE && !o->from && !o->kernel) FAIL("trace needs --kernel NAME (see 'ggemm list')");
    if (o->command == GG_CMD_TRACE && !o->from && !o->out) FAIL("trace needs --out DIR, the directory it writes");
    /* trace --from checks its own --out (a file, a directory or -) */
    if (o->out && !o->from) return check_out(o->out, o->command == GG_CMD_TRACE, err, err_len);
    return 0;
}

int gg_options_problem(const GgOptions *o, GgProblem *p) {
    const int rc = o->m_count > 0
                       ? gg_problem_from_counts(p, o->m_list, o->m_count, o->k.v[0], o->n.v[0])
                       : gg_problem_init(p, o->tokens.v[0], o->experts.v[0], o->k.v[0], o->n.v[0], o->skews.v[0]);
    if (rc) gg_error_set("out of host memory for the problem");
    return rc ? GG_EXIT_USAGE : GG_EXIT_OK;
}
