/* The ggemm harness: command line, kernel registry, device set-up, reference check,
 * timing, peers and CSV. Plain C11 over the CUDA runtime and cuBLAS. */
#ifndef GG_HARNESS_H
#define GG_HARNESS_H

#include <stdio.h>

#include "gg_kernel.h"
#include "gg_problem.h"

/* Exit codes, everywhere. */
enum { GG_EXIT_OK = 0, GG_EXIT_CHECK = 1, GG_EXIT_USAGE = 2, GG_EXIT_NO_GPU = 77 };

/* ---------------- command line (cli.c) ---------------- */
typedef enum { GG_CMD_PROBLEM, GG_CMD_LIST, GG_CMD_RUN, GG_CMD_SWEEP, GG_CMD_CEILINGS, GG_CMD_DEVICE } GgCommand;

#define GG_MAX_EXPERTS 4096

typedef struct GgOptions {
    GgCommand command;
    int tokens, experts, k, n;
    double skew;
    int block_m, block_n;     /* for `problem` */
    int csv;                  /* --format csv */
    const char *kernel;       /* --kernel */
    const char *kernels;      /* --kernels a,b,c (sweep) */
    const char *out;          /* --out FILE (sweep) */
    int reps, warmup;
    unsigned long long seed;
    int check;                /* 0 with --no-check */
    int m_count;              /* > 0 when --m-list gave the split explicitly */
    int m_list[GG_MAX_EXPERTS];
} GgOptions;

void gg_options_default(GgOptions *o);
/* Parses argv; returns 0, or GG_EXIT_USAGE with one line in err. */
int gg_parse_args(int argc, char **argv, GgOptions *o, char *err, size_t err_len);
/* Strict number parsing: the whole string must be a number in range. 0 on success. */
int gg_parse_int(const char *s, long lo, long hi, int *out);
int gg_parse_double(const char *s, double lo, double hi, double *out);
/* The problem the options describe (K and N alignment already validated). */
int gg_options_problem(const GgOptions *o, GgProblem *p);
void gg_usage(FILE *f);

/* ---------------- registry (registry.c) ---------------- */
extern const GgKernel gg_kernels[];
extern const int gg_kernel_count;
const GgKernel *gg_find_kernel(const char *name);
/* 1 if this GPU (cc_major, cc_minor) can run the kernel's code; else 0 and why. */
int gg_kernel_arch_ok(const GgKernel *k, int cc_major, int cc_minor, char *why, size_t len);
/* The instruction whose peak bounds a stage: "ffma", "mma.sync", "wgmma", "tcgen05". */
const char *gg_kernel_math(const GgKernel *k);

/* ---------------- CSV (csv.c) ---------------- */
typedef struct GgDeviceInfo {
    char name[256];
    int cc_major, cc_minor, sms;
    int sm_clock_mhz, mem_clock_mhz;
    int driver_version, runtime_version;
    long l2_bytes, smem_optin;
    /* ceilings measured at start-up in the same process */
    double bw_gbps;           /* device-to-device copy, bytes read + written */
    double gemm_tflops;       /* dense cuBLAS bf16 GEMM, 8192^3 */
    double ffma_tflops;       /* FFMA peak microbenchmark */
    double mma_sync_tflops;   /* mma.sync m16n8k16 bf16 peak microbenchmark */
} GgDeviceInfo;

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
} GgRow;

void gg_csv_metadata(FILE *f, const GgDeviceInfo *d, const char *commit, const char *date);
void gg_csv_header(FILE *f);
void gg_csv_row(FILE *f, const GgRow *r);
/* Fill the derived columns of a row from the problem, a time and the ceilings. */
void gg_row_derive(GgRow *r, const GgProblem *p, const GgDeviceInfo *d, double inst_ceiling_tflops);

/* ---------------- device work (gpu.c) ---------------- */
/* 0 if a CUDA GPU is usable, else GG_EXIT_NO_GPU with a reason. Creates CUDA state. */
int gg_device_open(GgDeviceInfo *d, char *why, size_t len);
int gg_measure_ceilings(GgDeviceInfo *d);

typedef struct GgCheck {
    int pass;
    long bad;               /* elements outside tolerance, NaN or unwritten */
    double max_abs_err, rel_err;
    int cpu_ref;            /* 1 if also compared with the fp64 CPU reference */
} GgCheck;

typedef struct GgTiming {
    double median_us, p10_us, p90_us;
    int reps;
} GgTiming;

/* Tolerance for a bf16 output of a length-k fp32 dot product (see README, "Checks"). */
double gg_atol(int k);
double gg_rtol(void);

/* Check and (reps > 0) time one named kernel or peer on one problem, with fresh inputs
 * drawn from seed. Returns GG_EXIT_OK, GG_EXIT_CHECK (wrong results), GG_EXIT_USAGE
 * (kernel refuses the shape: why says so), GG_EXIT_NO_GPU (kernel cannot run on this GPU). */
int gg_run_case(const char *name, const GgProblem *p, const GgDeviceInfo *d, unsigned long long seed,
                int check, int cpu_ref, int warmup, int reps, GgCheck *chk, GgTiming *tm, char *why,
                size_t why_len);
/* Capture one launch of a device-scheduled kernel in a CUDA graph, then replay it after
 * changing the split to `changed` (same tokens, experts, k, n): checks the replay. */
int gg_graph_replay_check(const char *name, const GgProblem *p, const GgProblem *changed,
                          unsigned long long seed, GgCheck *chk, char *why, size_t why_len);
void gg_release_buffers(void);

/* ---------------- peers (peers.c) ---------------- */
typedef struct GgPeer {
    const char *name, *config;
} GgPeer;
extern const GgPeer gg_peers[];
extern const int gg_peer_count;
const GgPeer *gg_find_peer(const char *name);
/* Prepare per-problem state for a peer (handles, graphs, pointer arrays). */
int gg_peer_prepare(const GgPeer *peer, const GgLaunch *l, const GgProblem *p);
cudaError_t gg_peer_launch(const GgPeer *peer, const GgLaunch *l);
void gg_peer_release(void);

/* ---------------- instruction ceilings (ceilings.cu) ---------------- */
int gg_ceiling_ffma_tflops(double *tflops);
int gg_ceiling_mma_sync_tflops(double *tflops);

#endif
