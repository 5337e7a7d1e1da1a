/* The ggemm harness: command line, kernel registry, device set-up, reference check, timing,
 * peers, case list and CSV. Plain C11 over the CUDA runtime and cuBLAS. Library code returns
 * errors (GG_EXIT_*, with one line in gg_error() or a `why` buffer); only main() exits. */
#ifndef GG_HARNESS_H
#define GG_HARNESS_H

#include <stdio.h>

#include "gg_kernel.h"
#include "gg_problem.h"

/* Exit codes, everywhere. */
enum { GG_EXIT_OK = 0, GG_EXIT_CHECK = 1, GG_EXIT_USAGE = 2, GG_EXIT_NO_GPU = 77 };

/* ---------------- errors (error.c) ---------------- */
/* The first line of what went wrong in the current call chain; gg_error_clear() forgets it. */
void gg_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *gg_error(void);
void gg_error_clear(void);

/* A CUDA runtime / cuBLAS call inside a harness function returning int: on failure, keep the
 * call, file and line in gg_error() and return GG_EXIT_CHECK. */
#define GG_CUDA(call)                                                                         \
    do {                                                                                      \
        cudaError_t gg_e_ = (call);                                                           \
        if (gg_e_ != cudaSuccess) {                                                           \
            gg_error_set("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(gg_e_)); \
            return GG_EXIT_CHECK;                                                             \
        }                                                                                     \
    } while (0)
#define GG_BLAS(call)                                                                         \
    do {                                                                                      \
        int gg_s_ = (int)(call);                                                              \
        if (gg_s_ != 0) {                                                                     \
            gg_error_set("%s:%d: %s: cuBLAS status %d", __FILE__, __LINE__, #call, gg_s_);    \
            return GG_EXIT_CHECK;                                                             \
        }                                                                                     \
    } while (0)

/* ---------------- command line (cli.c) ---------------- */
typedef enum {
    GG_CMD_PROBLEM, GG_CMD_LIST, GG_CMD_RUN, GG_CMD_TRACE, GG_CMD_SWEEP, GG_CMD_CASES, GG_CMD_CEILINGS, GG_CMD_CALIBRATE,
    GG_CMD_DEVICE, GG_CMD_VERSION, GG_CMD_HELP, GG_CMD_FUZZ, GG_CMD_GRADE, GG_CMD_MOE, GG_CMD_TILES
} GgCommand;

#define GG_MAX_EXPERTS 4096
#define GG_MAX_ROWS (1 << 24) /* total rows, and rows of one expert */
#define GG_MAX_LIST 64        /* values in one list option (sweep) */

enum { GG_PATH_BOTH, GG_PATH_FUSED, GG_PATH_UNFUSED };

typedef struct GgIntList {
    int count;
    int v[GG_MAX_LIST];
} GgIntList;
typedef struct GgDoubleList {
    int count;
    double v[GG_MAX_LIST];
} GgDoubleList;

typedef struct GgOptions {
    GgCommand command;
    int help;                 /* COMMAND --help (or ggemm help COMMAND): print its usage, run nothing */
    /* Shape. run/problem take one value of each; sweep/cases take lists. given_* say which
     * options were on the command line (0 = the default applies). */
    GgIntList tokens, experts, k, n;
    GgDoubleList skews;
    int given_tokens, given_experts, given_k, given_n, given_skew;
    int block_m, block_n;     /* problem */
    int csv;                  /* --format csv */
    const char *kernel;       /* --kernel NAME */
    const char *kernels;      /* --kernels a,b,c */
    const char *set;          /* --set a,b (named sets of harness/cases.csv) */
    const char *out;          /* --out FILE (trace: a directory) */
    const char *from;         /* trace --from CSV: a trace.csv written as trace.json, no GPU */
    int reps, warmup;
    int rounds;               /* sweep: each case's kernels timed this many times in turn (--rounds) */
    int given_reps;           /* trace: --reps asks for the traced/untraced timing */
    unsigned long long seed;
    int check;                /* 0 with --no-check */
    int sms;                  /* run, trace: --sms N, persistent grids of at most N CTAs; 0 = every SM */
    int chunk;                /* tiles: --chunk C, a wgrad list's chunk in 64-row blocks; 0 = gg_wgrad_chunk's */
    int l2_mib;               /* tiles: --l2-mib L, the L2 a wgrad list's tile order is chosen for; 0 = 60 */
    int cases;                /* fuzz: how many random problems */
    unsigned passes;          /* --pass: bit 1 << GgPass of each pass selected; 0: not given */
    /* moe: a named model (or "all"), or the layer's sizes; which paths; renormalisation */
    const char *model;
    int topk, d, f;
    int given_layer;          /* any of --experts --topk --d --f */
    int path;                 /* GG_PATH_BOTH, _FUSED, _UNFUSED */
    int no_renorm, list;
    const char *gather;       /* moe: --gather NAME, the fused GEMM1's gather (cmd_moe.c resolves it) */
    int backward;             /* moe: --backward, the layer's backward too (k5_moe_backward) */
    int m_count;              /* > 0 when --m-list gave the split explicitly */
    int m_list[GG_MAX_EXPERTS];
} GgOptions;

/* Parses argv; returns 0, or GG_EXIT_USAGE with one line in err. */
int gg_parse_args(int argc, char **argv, GgOptions *o, char *err, size_t err_len);
/* Strict number parsing: the whole string must be a number in range. 0 on success. */
int gg_parse_int(const char *s, long lo, long hi, int *out);
int gg_parse_double(const char *s, double lo, double hi, double *out);
/* A skew list: "0,0.5,1.2" or "start:stop:step" (stop included). 0 on success. */
int gg_parse_skews(const char *s, GgDoubleList *out);
/* The one problem run/problem describe. 0, or GG_EXIT_USAGE (allocation failure). */
int gg_options_problem(const GgOptions *o, GgProblem *p);
void gg_usage(FILE *f);
/* One command's usage and the options it takes (ggemm COMMAND --help). */
void gg_usage_command(FILE *f, GgCommand command);

/* ---------------- random problems (fuzz.c) ---------------- */
/* Problem `index` of the random-shape sweep drawn from `seed` (reproducible from the pair):
 * 1-256 experts (one problem in eight 257-4096), a power-law split of 0-16384 rows at skew 0-3
 * with some experts then emptied or cut to one row, K and N multiples of 8 from the minimum up
 * (small steps or multiples of 64). 0, or GG_EXIT_USAGE (out of host memory). */
int gg_fuzz_problem(unsigned long long seed, int index, GgProblem *p, double *skew_drawn);

/* ---------------- registry (registry.c) ---------------- */
typedef struct GgPeer {
    const char *name, *config;
    const char *script;       /* non-NULL: runs outside ggemm (Python), this file */
    GgPass pass;              /* the product it computes (GgPass): the forward unless named */
} GgPeer;

extern const GgKernel gg_kernels[];
extern const int gg_kernel_count;
extern const GgPeer gg_peers[];
extern const int gg_peer_count;
/* The labs (labs/CMakeLists.txt generates this table from each lab's GG_LAB line): kernels like
 * the stages', with stage = the stage each is graded against; not in sweeps or the GPU tests. */
extern const GgKernel gg_labs[];
extern const int gg_lab_count;
/* Name i of every implementation in listing order: stages' kernels, labs, peers. */
const char *gg_impl_name(int i);

/* A name resolved once to what it is: a registered kernel configuration or a peer. */
typedef struct GgImpl {
    const char *name, *config;
    const char *stage;        /* the stage folder, or "peer" */
    const GgKernel *kernel;   /* NULL for a peer */
    const GgPeer *peer;       /* NULL for a kernel */
    GgKernelInfo info;        /* kernels: the configuration's constants; peers: block_m 1, block_n 8 */
    char chose[1024];         /* an entry point, once resolved: what it chose and why */
} GgImpl;

/* 0 and *impl filled, or GG_EXIT_USAGE with one line in gg_error() for an unknown name. */
int gg_impl_find(const char *name, GgImpl *impl);
/* An entry point (GgKernel.choose) becomes the configuration it picks for this shape: kernel
 * and info are that configuration's, name stays, chose says what was chosen and why. Anything
 * else is left as it is. Call it once the problem is known, before gg_prepare / gg_run_case. */
int gg_impl_resolve(GgImpl *impl, const GgShape *shape);
/* The same on a copy, for library code that receives the caller's impl (gg_run_case, the
 * tracer, the graph replay): an entry point is checked and launched as what it picks for p. */
const GgImpl *gg_impl_for(const GgImpl *impl, const GgProblem *p, GgImpl *copy);
/* The pass (GgPass) a kernel, lab or peer computes; the forward for an unknown name. */
GgPass gg_impl_pass(const char *name);
/* Every name of a comma-separated --kernels list exists (NULL: all do); else GG_EXIT_USAGE
 * with one line in gg_error(): a typo must not silently drop a kernel. */
int gg_check_kernel_names(const char *list);
/* 1 and the first name of `list` (names separated by `separator`; runs of spaces count as one)
 * that is no kernel, peer or lab in bad; 0 when every name is known. */
int gg_unknown_kernel(const char *list, char separator, char *bad, size_t len);
/* 1 if this GPU can run the kernel (the binary has code for it); else 0 and why. Needs a
 * current device; peers always can. */
int gg_impl_runs_here(const GgImpl *impl, int cc_major, int cc_minor, char *why, size_t len);
/* The instruction whose peak bounds a stage: "ffma", "mma.sync", "wgmma", "tcgen05", "peer". */
const char *gg_impl_math(const GgImpl *impl);
/* "sm_90a", "sm_80+", "peer": what the configuration was built for. */
void gg_impl_arch(const GgImpl *impl, char *buf, size_t len);

/* ---------------- the case list (cases.c, harness/cases.csv) ---------------- */
typedef struct GgCase {
    char set[32];
    int tokens, experts, k, n;
    double skew;
    const char *kernels;      /* "all" or names separated by spaces (points into the set table) */
} GgCase;

typedef struct GgCaseList {
    int count;
    GgCase *cases;
    char *text;               /* storage for the kernels fields */
} GgCaseList;

/* The cases the options select: the named sets of the case file (all sets without --set), or,
 * when a shape option is given, the cross product of --tokens, --experts, --k, --n, --skews
 * with --kernels (default: all). 0, or GG_EXIT_USAGE with one line in gg_error(). */
int gg_cases_select(const GgOptions *o, GgCaseList *out);
void gg_cases_free(GgCaseList *l);
/* 1 if `name` runs in case c: c's kernel field names it, or is "all" and `name` computes the
 * forward (the backward's kernels and peers are named); --kernels filters. */
int gg_case_has(const GgCase *c, const char *name, const char *filter);
/* The file, for messages. */
const char *gg_case_file(void);
/* 1 if `name` appears in the comma-separated `list` (NULL list: everything). */
int gg_in_list(const char *list, const char *name);

/* ---------------- edge shapes (edge_shapes.c) ---------------- */
typedef struct GgEdgeShape {
    const char *what;
    int k, n;
    int experts;
    int m[16];                /* rows per expert; past 16 experts the list repeats: m[e % 16] */
    int one, one_rows;        /* one_rows > 0: expert `one` has one_rows rows instead */
} GgEdgeShape;
extern const GgEdgeShape gg_edge_shapes[];
extern const int gg_edge_shape_count;
extern const GgEdgeShape gg_tail_shapes[]; /* k % 64 != 0: only for kernels that accept it */
extern const int gg_tail_shape_count;
/* The problem of an edge shape. 0, or 1 (out of host memory). */
int gg_edge_problem(const GgEdgeShape *e, GgProblem *p);

/* ---------------- device (device.c) ---------------- */
typedef struct GgDeviceInfo {
    char name[256];
    int cc_major, cc_minor, sms;
    int sm_clock_mhz, mem_clock_mhz;
    int driver_version, runtime_version;
    long l2_bytes, smem_optin;
    /* ceilings measured in the same process (ceilings.c) */
    double bw_gbps;           /* device-to-device copy, bytes read + written */
    double write_gbps;        /* device memset: bytes written only (wgrad's dB is such a stream) */
    double read_gbps;         /* 16-byte loads, bytes read only (weight streams at few tokens) */
    double gemm_tflops;       /* dense cuBLAS bf16 GEMM, 8192^3 */
    double ffma_tflops;       /* FFMA peak microbenchmark */
    double mma_sync_tflops;   /* mma.sync m16n8k16 bf16 peak microbenchmark */
} GgDeviceInfo;

/* 0 if a CUDA GPU is usable, else GG_EXIT_NO_GPU with one line in why saying whether the
 * driver is missing, older than the runtime, or there is no device. */
int gg_device_open(GgDeviceInfo *d, char *why, size_t len);
/* The CUDA driver version found (0: none) and the runtime this binary was built with. */
int gg_driver_version(void);
int gg_runtime_version_built(void);

/* ---------------- pool (pool.c): buffers, stream, events, cuBLAS, kept across cases ---------------- */
/* Device buffer `slot` of at least bytes; 0, or GG_EXIT_CHECK (allocation failed). */
enum {
    GG_BUF_A, GG_BUF_B, GG_BUF_C, GG_BUF_REF, GG_BUF_OFFSETS, GG_BUF_TILES, GG_BUF_FLUSH, GG_BUF_TRACE,
    GG_BUF_TRACE_COUNT, GG_BUF_WORKSPACE, GG_BUF_COUNT
};
int gg_buf(int slot, size_t bytes, void **ptr);
cudaStream_t gg_stream(void);
void *gg_blas(void);          /* the cublasHandle_t, bound to gg_stream() */
/* The references' one cuBLAS call (check.c): C [m x n] fp32 = op(A) op(B), A and B bf16 row-major
 * as stored: NN A [m x k], B [k x n]; NT A [m x k], B [n x k] (dgrad's B^T); TN A [k x m],
 * B [k x n] (wgrad's A^T). On gg_blas()'s stream; GG_EXIT_OK or GG_EXIT_CHECK. */
typedef enum { GG_GEMM_NN, GG_GEMM_NT, GG_GEMM_TN } GgGemmForm;
int gg_gemm_ref(GgGemmForm form, const uint16_t *a, const uint16_t *b, float *c, int m, int n, int k);
/* The same with fp32 A and B (the layer backward's bound: GEMMs of squared operands). */
int gg_gemm_ref_f32(GgGemmForm form, const float *a, const float *b, float *c, int m, int n, int k);
int gg_pool_open(void);       /* stream, events and cuBLAS handle; idempotent */
void gg_release_buffers(void);

/* ---------------- timing (timing.c) ---------------- */
/* The board's power state over a timed series (telemetry.c, NVML); valid 0 where NVML is not
 * there to ask, and then the row's fields stay empty. */
typedef struct GgTelemetry {
    double power_capped_pct;   /* share of the series the clocks were held down for power */
    double thermal_capped_pct; /* ... for heat */
    int sm_clock_mhz;          /* at the series' end */
    int valid;
} GgTelemetry;
typedef struct GgTelemetryMark {
    unsigned long long power_capped_ns, thermal_capped_ns;
    double seconds;
    int valid;
} GgTelemetryMark;
void gg_telemetry_mark(GgTelemetryMark *m);
void gg_telemetry_since(const GgTelemetryMark *start, GgTelemetry *t);

typedef struct GgTiming {
    double median_us, p10_us, p90_us;
    int reps;
    GgTelemetry telemetry;     /* over the timed reps (not the warm-up) */
} GgTiming;
typedef cudaError_t (*GgTimedFn)(void *ctx);
/* The protocol: warm-up, then per rep an L2 flush (a read of twice the L2; flush = 0 skips
 * it), event, launch, event; median and p10/p90 of the per-rep times. */
int gg_time(GgTimedFn fn, void *ctx, int warmup, int reps, int flush, GgTiming *tm);
/* Median and p10/p90 of reps per-rep times (microseconds; t is sorted in place). */
void gg_timing_summarize(double *t, int reps, GgTiming *tm);
/* The index of t[0..n) holding its median (of an even n, the lower middle value; the first such
 * index where values tie); -1 for n <= 0. The sweep's --rounds keeps the round it names. */
int gg_median_index(const double *t, int n);
/* The flush alone, enqueued on gg_stream(): what a timed rep starts from. */
int gg_flush_l2(void);

/* ---------------- ceilings (ceilings.c, ceilings.cu) ---------------- */
int gg_measure_ceilings(GgDeviceInfo *d);
int gg_ceiling_ffma_tflops(double *tflops);
int gg_ceiling_mma_sync_tflops(double *tflops);
cudaError_t gg_read_stream(const void *src, size_t bytes, int sms, void *sink, unsigned sentinel, cudaStream_t stream);

/* ---------------- the check (check.c) ---------------- */
typedef struct GgCheck {
    int pass;
    long bad;                 /* elements outside tolerance, NaN or unwritten */
    double max_abs_err, rel_err;
    int cpu_ref;              /* 1 if also compared with the fp64 CPU reference */
    long first_row, first_col; /* the first bad element (row-major order), -1 if none */
    long first_expert;        /* wgrad: the expert whose dB_e holds it (first_row is then a row
                                 of dB_e, a k index); -1 otherwise */
    double first_out, first_ref;
} GgCheck;

/* Tolerance for a bf16 output of a length-k fp32 dot product (see README, "Checks"). */
double gg_atol(int k);
double gg_rtol(void);
/* Fresh inputs from seed into launch's A and B, the cuBLAS fp32 reference, C poisoned with
 * NaN. Then the caller launches; gg_check_output compares (and, cpu_ref, with fp64 on the CPU). */
int gg_check_prepare(const GgLaunch *l, const GgProblem *p, unsigned long long seed);
/* Compares count bf16 outputs, rows of n, with ref (fp32) or ref64 (if not NULL) at gg_atol(k),
 * gg_rtol(); expert_rows > 0: every expert_rows rows are one expert's (wgrad's dB_e, k rows). */
void gg_check_compare(const uint16_t *out, const float *ref, const double *ref64, size_t count, int n, int k,
                      int expert_rows, GgCheck *chk);
int gg_check_output(const GgLaunch *l, const GgProblem *p, int cpu_ref, GgCheck *chk);
/* One line describing a failed check. */
void gg_check_describe(const GgCheck *chk, char *why, size_t len);

/* ---------------- running one case (run.c) ---------------- */
typedef struct GgRunOpts {
    unsigned long long seed;
    int check, cpu_ref, warmup, reps;
} GgRunOpts;

/* What a launch of impl on p needs: buffers sized, split and (host-list kernels) tiles
 * uploaded. GG_EXIT_OK, GG_EXIT_USAGE (refused shape: why), GG_EXIT_NO_GPU (not on this GPU),
 * GG_EXIT_CHECK (a CUDA error). */
int gg_prepare(const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, GgLaunch *l, char *why,
               size_t len);
cudaError_t gg_launch(const GgImpl *impl, const GgLaunch *l);
/* Check and (reps > 0) time impl on p with fresh inputs. Returns GG_EXIT_OK, GG_EXIT_CHECK
 * (wrong results or a CUDA error: why says which), GG_EXIT_USAGE (the kernel refuses the
 * shape), GG_EXIT_NO_GPU (the kernel cannot run on this GPU). A failed check is never timed. */
int gg_run_case(const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro,
                GgCheck *chk, GgTiming *tm, char *why, size_t why_len);
/* A time limit per case (limit.c), for commands that run many: after gg_case_limit(line),
 * gg_run_case_limited ends the process with that line and exit code 1 when a case runs past
 * `seconds` (a hung kernel cannot be taken back from inside the process). */
void gg_case_limit(const char *line);
int gg_run_case_limited(int seconds, const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d,
                        const GgRunOpts *ro, GgCheck *chk, GgTiming *tm, char *why, size_t why_len);
/* Capture one launch of a device-scheduled kernel in a CUDA graph, change the split to
 * `changed` (same tokens, experts, k, n) and replay: checked like gg_run_case. */
int gg_graph_replay_check(const GgImpl *impl, const GgProblem *p, const GgProblem *changed,
                          unsigned long long seed, GgCheck *chk, char *why, size_t why_len);

/* ---------------- traces (trace.c: decoding and summary, plain C; run.c: recording) ---------------- */
typedef struct GgTrace {
    GgTraceEvent *events;     /* host copy of what the traced launch recorded (malloc) */
    long count;               /* events in `events`: min(attempted, capacity) */
    long attempted;           /* events the kernel tried to record; > capacity: overflow */
    long capacity;
} GgTrace;

typedef struct GgTraceSummary {
    int sms;                  /* SMs counted: the device's (more if %smid went past them) */
    int sms_idle;             /* SMs on which no consumer computed a tile */
    long tiles;               /* tile events of computing consumers */
    double kernel_us;         /* first CTA entry to the last event's end */
    double busy_fraction;     /* sum over SMs of the time a consumer computes a tile / (sms x kernel) */
    double first_idle_us;     /* when the first SM with work ended its last tile, from kernel start */
    double tail_us;           /* kernel end - first_idle: some SMs idle, others still busy */
    double imbalance;         /* max / mean busy time per SM (mean over all sms) */
} GgTraceSummary;

/* Events one traced launch of a configuration can record on l's problem, from sizes alone (a
 * device schedule's tile count is known only on the device): GG_TRACE_ROLES per tile, one set-up
 * event per CTA. */
long gg_trace_capacity(const GgKernelInfo *info, const GgLaunch *l);
/* Busy time, tail and imbalance of a trace on a GPU of `sms` SMs. 0, or GG_EXIT_USAGE with one
 * line in gg_error() (no events, out of memory). */
int gg_trace_summarize(const GgTraceEvent *ev, long n, int sms, GgTraceSummary *s);
/* lane[i]: event i's CTA slot on its SM, the lowest slot free when the CTA started (CTAs that
 * share an SM at the same time get different slots; one CTA per SM: all 0). 0 or GG_EXIT_USAGE. */
int gg_trace_lanes(const GgTraceEvent *ev, long n, int *lane);
/* "setup", "producer", "consumer0", ... */
const char *gg_trace_role_name(int role, char *buf, size_t len);
/* trace.csv (one row per event, times in ns from the first CTA's entry) and trace.json (Chrome
 * trace-event format, for Perfetto: one process per SM, one thread per CTA slot and role). lane
 * NULL: gg_trace_lanes; else each event's slot as trace.csv has it. 0 or GG_EXIT_USAGE. */
int gg_trace_write_csv(FILE *f, const GgTraceEvent *ev, long n);
int gg_trace_write_json(FILE *f, const GgTraceEvent *ev, const int *lane, long n, const char *title);
/* A trace.csv read back, no GPU: its events (times as written, from 0) and lanes (malloc, the
 * caller frees both). 0, or GG_EXIT_USAGE with one line in gg_error() naming the file and, for
 * a bad row, its line. */
int gg_trace_read_csv(const char *path, GgTraceEvent **ev, int **lane, long *n);
/* Run impl's traced twin once after ro->warmup traced launches, from an L2 flush, into a buffer of
 * `capacity` events (<= 0: gg_trace_capacity), and check its output as gg_run_case does. Returns
 * GG_EXIT_OK; GG_EXIT_USAGE (no traced twin, refused shape); GG_EXIT_NO_GPU; GG_EXIT_CHECK (wrong
 * results, a CUDA error, or an overflow: the kernel recorded more events than fit, tr->attempted
 * says how many; tr holds those that did). Free tr with gg_trace_free. */
int gg_trace_case(const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro,
                  long capacity, GgCheck *chk, GgTrace *tr, char *why, size_t why_len);
void gg_trace_free(GgTrace *tr);
/* The traced twin's cost: impl and its twin timed with gg_time's protocol (ro->warmup,
 * ro->reps), the untraced first; the twin records every launch into its own part of one buffer,
 * so nothing is reset between timed launches. Same returns as gg_trace_case. */
int gg_trace_time(const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro,
                  GgTiming *untraced, GgTiming *traced, char *why, size_t why_len);

/* ---------------- peers (peers.c) ---------------- */
int gg_peer_prepare(const GgPeer *peer, const GgLaunch *l, const GgProblem *p);
cudaError_t gg_peer_launch(const GgPeer *peer, const GgLaunch *l);
void gg_peer_release(void);

/* ---------------- CSV (csv.c) ---------------- */
typedef struct GgRow {
    const char *kernel, *config;
    int tokens, experts, k, n;
    double skew;              /* NAN for an explicit split */
    int block_m, block_n;     /* block_m 0 = adaptive */
    long tiles;
    double eta;
    double time_us_median, time_us_p10, time_us_p90;
    double useful_tflops, scheduled_tflops, gbps, roofline_pct, inst_ceiling_pct;
    int check_pass;
    double max_abs_err, rel_err;
    unsigned long long seed;
    const char *set;          /* the case set (harness/cases.csv) that asked for it; "cli" otherwise */
    GgTelemetry telemetry;    /* the power state while it was timed */
} GgRow;

void gg_csv_metadata(FILE *f, const GgDeviceInfo *d, const char *commit, const char *date);
void gg_csv_header(FILE *f);
void gg_csv_row(FILE *f, const GgRow *r);
/* A text field, quoted (RFC 4180) when it holds a comma or a quote. */
void gg_csv_text(FILE *f, const char *s);
/* ",power_capped_pct,thermal_capped_pct,sm_clock_mhz" of a timed series, empty fields without NVML. */
void gg_csv_power(FILE *f, const GgTelemetry *t);
/* Fill a row from impl, the problem, the check, the time and the ceilings. */
void gg_row_fill(GgRow *r, const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, const GgCheck *chk,
                 const GgTiming *tm, unsigned long long seed);

/* Now, UTC, ISO 8601 (2026-12-01T06:42:05Z): the date field of every CSV's metadata. */
void gg_utc_now(char *buf, size_t len);
/* The commit this binary was built from (GG_COMMIT in the environment overrides it). */
const char *gg_commit(void);

#endif
