/* ggemm: the command-line harness. `ggemm --help` lists the commands. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gg_harness.h"

#ifndef GG_GIT_COMMIT
#define GG_GIT_COMMIT "unknown"
#endif

static const char *commit(void) {
    const char *c = getenv("GG_COMMIT"); /* set by run.sh where the build has no .git */
    return c && *c ? c : GG_GIT_COMMIT;
}

/* The GPU, or one line saying why not (exit code 77). */
static int open_gpu(GgDeviceInfo *d) {
    char why[256];
    int rc = gg_device_open(d, why, sizeof why);
    if (rc) fprintf(stderr, "ggemm: %s\n", why);
    return rc;
}

static int cmd_problem(const GgOptions *o) {
    GgProblem p;
    if (gg_options_problem(o, &p)) return GG_EXIT_USAGE;
    const int bm = o->block_m, bn = o->block_n;
    if (o->csv) {
        puts("tokens,experts,k,n,skew,block_m,block_n,m_max,m_min,empty_experts,tiles,eta,"
             "eta_adaptive,useful_gflop,scheduled_gflop,min_bytes");
        char skew[32];
        if (isnan(p.skew)) snprintf(skew, sizeof skew, "list");
        else snprintf(skew, sizeof skew, "%g", p.skew);
        printf("%d,%d,%d,%d,%s,%d,%d,%d,%d,%d,%ld,%.4f,%.4f,%.3f,%.3f,%.0f\n", p.tokens, p.experts, p.k, p.n, skew,
               bm, bn, gg_m_max(&p), gg_m_min(&p), gg_empty_experts(&p), gg_tile_count(&p, bm, bn),
               gg_eta(&p, bm), gg_eta(&p, 0), gg_useful_flops(&p) * 1e-9, gg_scheduled_flops(&p, bm, bn) * 1e-9,
               gg_min_bytes(&p));
    } else {
        printf("tokens %d, experts %d, k %d, n %d, skew %g\n", p.tokens, p.experts, p.k, p.n, p.skew);
        printf("rows per expert: max %d, min %d, empty experts %d\n", gg_m_max(&p), gg_m_min(&p),
               gg_empty_experts(&p));
        printf("m_e:");
        for (int e = 0; e < p.experts; ++e) printf(" %d", p.m[e]);
        printf("\ntiles of %dx%d: %ld (eta = %.4f; adaptive 128/64 rows: eta = %.4f)\n", bm, bn,
               gg_tile_count(&p, bm, bn), gg_eta(&p, bm), gg_eta(&p, 0));
        printf("useful %.3f GFLOP, scheduled %.3f GFLOP, compulsory bytes %.1f MB\n", gg_useful_flops(&p) * 1e-9,
               gg_scheduled_flops(&p, bm, bn) * 1e-9, gg_min_bytes(&p) * 1e-6);
    }
    gg_problem_free(&p);
    return GG_EXIT_OK;
}

static int cmd_list(void) {
    GgDeviceInfo d;
    char why[256];
    const int gpu = gg_device_open(&d, why, sizeof why) == GG_EXIT_OK;
    if (gpu) printf("GPU: %s, sm_%d%d, %d SMs, %ld bytes shared memory per block (opt-in)\n", d.name,
                    d.cc_major, d.cc_minor, d.sms, d.smem_optin);
    else printf("%s: resources are shown on a GPU only\n", why);
    printf("%-26s %-7s %-8s %-3s %s\n", "kernel", "arch", "tile", "stg", "resources on this GPU | config");
    for (int i = 0; i < gg_kernel_count; ++i) {
        const GgKernel *k = &gg_kernels[i];
        char tile[32], arch[16], res[512];
        GgKernelInfo ki;
        k->info(&ki);
        if (ki.block_m) snprintf(tile, sizeof tile, "%dx%d", ki.block_m, ki.block_n);
        else snprintf(tile, sizeof tile, "ad.x%d", ki.block_n);
        snprintf(arch, sizeof arch, "sm_%d%s", k->arch, k->arch_specific ? "a" : "");
        res[0] = '\0';
        if (gpu && !gg_kernel_arch_ok(k, d.cc_major, d.cc_minor, why, sizeof why)) {
            snprintf(res, sizeof res, "cannot launch: %s", why);
        } else if (gpu) {
            GgKernelInfo info;
            struct cudaFuncAttributes attr;
            int blocks = 0;
            if (k->info(&info) != cudaSuccess || cudaFuncGetAttributes(&attr, info.kernel) != cudaSuccess) {
                snprintf(res, sizeof res, "cannot launch: no code for this GPU (%s)",
                         cudaGetErrorString(cudaGetLastError()));
            } else if ((long)info.dynamic_smem > d.smem_optin) {
                snprintf(res, sizeof res, "cannot launch: needs %zu B shared memory, GPU allows %ld",
                         info.dynamic_smem, d.smem_optin);
            } else {
                cudaFuncSetAttribute(info.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)info.dynamic_smem);
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, info.kernel, info.threads,
                                                              info.dynamic_smem);
                /* Which resource sets the residency: the smallest of the four limits. */
                struct cudaDeviceProp prop;
                cudaGetDeviceProperties(&prop, 0);
                const int warps = (info.threads + 31) / 32;
                const int regs_per_warp = ((attr.numRegs * 32 + 255) / 256) * 256;
                const int by_regs = regs_per_warp ? prop.regsPerMultiprocessor / (regs_per_warp * warps) : 99;
                const size_t smem = attr.sharedSizeBytes + info.dynamic_smem + prop.reservedSharedMemPerBlock;
                const int by_smem = (int)(prop.sharedMemPerMultiprocessor / smem);
                const int by_warps = prop.maxThreadsPerMultiProcessor / 32 / warps;
                const int by_blocks = prop.maxBlocksPerMultiProcessor;
                const char *limit = "blocks";
                int lim = by_blocks;
                if (by_warps <= lim) lim = by_warps, limit = "warps";
                if (by_smem <= lim) lim = by_smem, limit = "shared memory";
                if (by_regs <= lim) lim = by_regs, limit = "registers";
                int n = snprintf(res, sizeof res, "%d regs, %zu+%zu B smem, %d spill B, %d threads, %d block(s)/SM (%s)",
                                 attr.numRegs, attr.sharedSizeBytes, info.dynamic_smem, (int)attr.localSizeBytes,
                                 info.threads, blocks, limit);
                if (info.cluster > 1) {
                    /* Clusters must fit inside one GPC: fewer may be resident than SMs / size. */
                    cudaLaunchAttribute cl = {.id = cudaLaunchAttributeClusterDimension,
                                              .val.clusterDim = {(unsigned)info.cluster, 1, 1}};
                    cudaLaunchConfig_t cfg = {.gridDim = {(unsigned)(d.sms / info.cluster * info.cluster), 1, 1},
                                              .blockDim = {(unsigned)info.threads, 1, 1},
                                              .dynamicSmemBytes = info.dynamic_smem,
                                              .attrs = &cl,
                                              .numAttrs = 1};
                    int clusters = 0;
                    if (cudaOccupancyMaxActiveClusters(&clusters, info.kernel, &cfg) == cudaSuccess)
                        snprintf(res + n, sizeof res - (size_t)n, ", clusters of %d: %d resident", info.cluster,
                                 clusters);
                    cudaGetLastError();
                }
            }
        }
        printf("%-26s %-7s %-8s %-3d %s%s%s\n", k->name, arch, tile, ki.stages, res, res[0] ? " | " : "", k->config);
    }
    for (int i = 0; i < gg_peer_count; ++i)
        printf("%-26s %-7s %-8s %-3s %s\n", gg_peers[i].name, "peer", "-", "-", gg_peers[i].config);
    gg_release_buffers();
    return GG_EXIT_OK;
}

static double inst_ceiling(const char *name, const GgDeviceInfo *d) {
    const GgKernel *k = gg_find_kernel(name);
    if (!k) return d->gemm_tflops; /* peers: the dense cuBLAS rate */
    const char *math = gg_kernel_math(k);
    if (!strcmp(math, "ffma")) return d->ffma_tflops;
    if (!strcmp(math, "mma.sync")) return d->mma_sync_tflops;
    return d->gemm_tflops;
}

static void fill_row(GgRow *row, const char *name, const GgProblem *p, const GgDeviceInfo *d, const GgCheck *chk,
                     const GgTiming *tm, unsigned long long seed) {
    memset(row, 0, sizeof *row);
    const GgKernel *k = gg_find_kernel(name);
    const GgPeer *peer = gg_find_peer(name);
    row->kernel = name;
    row->config = k ? k->config : peer->config;
    GgKernelInfo ki = {.block_m = 1, .block_n = 8}; /* peers: no row padding assumed */
    if (k) k->info(&ki);
    row->block_m = ki.block_m;
    row->block_n = ki.block_n;
    row->time_us_median = tm->median_us;
    row->time_us_p10 = tm->p10_us;
    row->time_us_p90 = tm->p90_us;
    row->check_pass = chk->pass;
    row->max_abs_err = chk->max_abs_err;
    row->rel_err = chk->rel_err;
    row->seed = seed;
    gg_row_derive(row, p, d, inst_ceiling(name, d));
    if (!k) row->tiles = 0; /* a library's tiling is its own */
}

static void date_now(char *buf, size_t len) {
    time_t t = time(NULL);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
}

static int cmd_run(const GgOptions *o) {
    if (!gg_find_kernel(o->kernel) && !gg_find_peer(o->kernel)) {
        fprintf(stderr, "ggemm: unknown kernel '%s' (see 'ggemm list')\n", o->kernel);
        return GG_EXIT_USAGE;
    }
    GgDeviceInfo d;
    char why[512];
    int rc = open_gpu(&d);
    if (rc) return rc;
    const GgKernel *k = gg_find_kernel(o->kernel);
    if (k && !gg_kernel_arch_ok(k, d.cc_major, d.cc_minor, why, sizeof why)) {
        fprintf(stderr, "ggemm: %s\n", why); /* one line, exit 77: not this GPU */
        return GG_EXIT_NO_GPU;
    }
    GgProblem p;
    gg_options_problem(o, &p);
    GgCheck chk;
    GgTiming tm;
    const int small = (double)p.tokens * p.k * p.n <= 5e7;
    fprintf(stderr, "ggemm: %s, tokens %d, experts %d, k %d, n %d, seed %llu\n", o->kernel, p.tokens, p.experts,
            p.k, p.n, o->seed);
    rc = gg_run_case(o->kernel, &p, &d, o->seed, o->check, small, o->warmup, o->reps, &chk, &tm, why, sizeof why);
    if (rc) {
        fprintf(stderr, "ggemm: %s\n", why);
    } else {
        GgRow row;
        fill_row(&row, o->kernel, &p, &d, &chk, &tm, o->seed);
        if (o->check)
            printf("check: pass (max abs err %.3g, rel err %.3g%s)\n", chk.max_abs_err, chk.rel_err,
                   chk.cpu_ref ? ", cuBLAS and fp64 CPU references" : ", cuBLAS reference");
        printf("time: median %.2f us (p10 %.2f, p90 %.2f, %d reps)\n", tm.median_us, tm.p10_us, tm.p90_us, tm.reps);
        printf("useful %.1f TFLOP/s, scheduled %.1f TFLOP/s, eta %.4f, %.0f GB/s compulsory\n", row.useful_tflops,
               row.scheduled_tflops, row.eta, row.gbps);
    }
    gg_problem_free(&p);
    gg_release_buffers();
    return rc;
}

static int cmd_ceilings(void) {
    GgDeviceInfo d;
    int rc = open_gpu(&d);
    if (rc) return rc;
    if (gg_measure_ceilings(&d)) return GG_EXIT_CHECK;
    printf("%s: copy %.0f GB/s, dense bf16 GEMM %.1f TFLOP/s, FFMA %.2f TFLOP/s, mma.sync bf16 %.1f TFLOP/s\n",
           d.name, d.bw_gbps, d.gemm_tflops, d.ffma_tflops, d.mma_sync_tflops);
    gg_release_buffers();
    return GG_EXIT_OK;
}

static int cmd_device(void) {
    GgDeviceInfo d;
    int rc = open_gpu(&d);
    if (rc) return rc;
    printf("%s\n", d.name);
    return GG_EXIT_OK;
}

/* The worklog's cases: tokens {16384, 2048} x skew {0, 1.2}, plus K = 8192 at 16384, s = 0. */
static const struct {
    int tokens, k;
    double skew;
} sweep_cases[] = {{16384, 1024, 0.0}, {16384, 1024, 1.2}, {2048, 1024, 0.0}, {2048, 1024, 1.2}, {16384, 8192, 0.0}};

static int in_list(const char *list, const char *name) {
    if (!list) return 1;
    const size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int cmd_sweep(const GgOptions *o) {
    /* Every name in --kernels must exist. */
    for (const char *p = o->kernels; p && *p;) {
        const char *comma = strchr(p, ',');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(comma ? (size_t)(comma - p) : strlen(p)), p);
        if (!gg_find_kernel(name) && !gg_find_peer(name)) {
            fprintf(stderr, "ggemm: unknown kernel '%s' in --kernels (see 'ggemm list')\n", name);
            return GG_EXIT_USAGE;
        }
        p = comma ? comma + 1 : NULL;
    }
    GgDeviceInfo d;
    char why[512];
    int rc = open_gpu(&d);
    if (rc) return rc;
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "ggemm: cannot write %s\n", o->out);
        return GG_EXIT_USAGE;
    }
    fprintf(stderr, "ggemm: measuring ceilings on %s\n", d.name);
    if (gg_measure_ceilings(&d)) return GG_EXIT_CHECK;
    char date[64];
    date_now(date, sizeof date);
    gg_csv_metadata(f, &d, commit(), date);
    gg_csv_header(f);
    fflush(f);

    /* The runnable list: kernels this GPU can run, then the peers; the rest said once. */
    const char *names[256];
    int count = 0;
    for (int i = 0; i < gg_kernel_count; ++i) {
        const GgKernel *k = &gg_kernels[i];
        if (!in_list(o->kernels, k->name)) continue;
        if (!gg_kernel_arch_ok(k, d.cc_major, d.cc_minor, why, sizeof why)) {
            fprintf(stderr, "ggemm: skip %s\n", why);
            continue;
        }
        names[count++] = k->name;
    }
    for (int i = 0; i < gg_peer_count; ++i)
        if (in_list(o->kernels, gg_peers[i].name)) names[count++] = gg_peers[i].name;

    const int cases = (int)(sizeof sweep_cases / sizeof sweep_cases[0]);
    const int total = cases * count;
    int failures = 0, done = 0;
    const time_t start = time(NULL);
    for (int c = 0; c < cases; ++c) {
        GgProblem p;
        gg_problem_init(&p, sweep_cases[c].tokens, 64, sweep_cases[c].k, 2688, sweep_cases[c].skew);
        for (int i = 0; i < count; ++i) {
            const unsigned long long seed = o->seed + 1000ull * (unsigned long long)c + (unsigned long long)i;
            GgCheck chk;
            GgTiming tm;
            ++done;
            fprintf(stderr, "[%d/%d] %-24s tokens %5d k %4d skew %.1f  (%lds)\n", done, total, names[i],
                    p.tokens, p.k, p.skew, (long)(time(NULL) - start));
            rc = gg_run_case(names[i], &p, &d, seed, 1, 0, o->warmup, o->reps, &chk, &tm, why, sizeof why);
            if (rc == GG_EXIT_USAGE || rc == GG_EXIT_NO_GPU) {
                fprintf(stderr, "ggemm:   skipped: %s\n", why);
                continue;
            }
            if (rc) {
                fprintf(stderr, "ggemm:   FAILED: %s\n", why);
                ++failures;
            }
            GgRow row;
            fill_row(&row, names[i], &p, &d, &chk, &tm, seed);
            gg_csv_row(f, &row);
            fflush(f);
        }
        gg_problem_free(&p);
    }
    if (f != stdout) fclose(f);
    gg_release_buffers();
    fprintf(stderr, "ggemm: sweep done, %d case(s) failed the check\n", failures);
    return failures ? GG_EXIT_CHECK : GG_EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        gg_usage(stdout);
        return GG_EXIT_OK;
    }
    GgOptions o;
    char err[256];
    if (gg_parse_args(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, "ggemm: %s\n", err);
        return GG_EXIT_USAGE;
    }
    switch (o.command) {
    case GG_CMD_PROBLEM: return cmd_problem(&o);
    case GG_CMD_LIST: return cmd_list();
    case GG_CMD_RUN: return cmd_run(&o);
    case GG_CMD_SWEEP: return cmd_sweep(&o);
    case GG_CMD_CEILINGS: return cmd_ceilings();
    case GG_CMD_DEVICE: return cmd_device();
    }
    return GG_EXIT_USAGE;
}
