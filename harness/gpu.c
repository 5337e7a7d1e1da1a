/* Device set-up, ceilings, the reference check and the timing protocol. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "gg_check.h"
#include "gg_harness.h"

cudaError_t gg_fill_uniform_bf16(uint16_t *p, size_t n, unsigned long long seed, cudaStream_t stream);

/* ---------------- buffers, grown on demand and kept across cases ---------------- */
typedef struct {
    void *ptr;
    size_t bytes;
} Buf;

static struct {
    Buf a, b, c, ref, offsets, tiles, flush;
    cublasHandle_t blas;
    cudaStream_t stream;
    cudaEvent_t ev[2];
} G;

static void *buf_get(Buf *b, size_t bytes) {
    if (bytes == 0) bytes = 16;
    if (b->bytes < bytes) {
        if (b->ptr) CUDA_CHECK(cudaFree(b->ptr));
        CUDA_CHECK(cudaMalloc(&b->ptr, bytes));
        b->bytes = bytes;
    }
    return b->ptr;
}

void gg_release_buffers(void) {
    Buf *all[] = {&G.a, &G.b, &G.c, &G.ref, &G.offsets, &G.tiles, &G.flush};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        if (all[i]->ptr) cudaFree(all[i]->ptr);
        all[i]->ptr = NULL;
        all[i]->bytes = 0;
    }
    gg_peer_release();
}

static void ensure_handles(void) {
    if (G.blas) return;
    CUDA_CHECK(cudaStreamCreateWithFlags(&G.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&G.ev[0]));
    CUDA_CHECK(cudaEventCreate(&G.ev[1]));
    CUBLAS_CHECK(cublasCreate(&G.blas));
    CUBLAS_CHECK(cublasSetStream(G.blas, G.stream));
}

/* ---------------- device ---------------- */
int gg_device_open(GgDeviceInfo *d, char *why, size_t len) {
    memset(d, 0, sizeof *d);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        snprintf(why, len, "no CUDA GPU available (%s)",
                 err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
        return GG_EXIT_NO_GPU;
    }
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    d->cc_major = prop.major;
    d->cc_minor = prop.minor;
    d->sms = prop.multiProcessorCount;
    d->l2_bytes = prop.l2CacheSize;
    d->smem_optin = (long)prop.sharedMemPerBlockOptin;
    int khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    d->sm_clock_mhz = khz / 1000;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0));
    d->mem_clock_mhz = khz / 1000;
    CUDA_CHECK(cudaDriverGetVersion(&d->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&d->runtime_version));
    ensure_handles();
    return GG_EXIT_OK;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

typedef cudaError_t (*TimedFn)(void *ctx);

/* The timing protocol: warm-up, then per rep an L2 flush (a memset of twice the L2),
 * event, launch, event; median and p10/p90 of the per-rep times. flush = 0 skips the
 * flush (used for the ceilings, whose operands are far larger than the L2). */
static int time_fn(TimedFn fn, void *ctx, int warmup, int reps, int flush, GgTiming *tm) {
    if (flush && !G.flush.ptr) {
        int l2 = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        buf_get(&G.flush, 2 * (size_t)l2);
    }
    for (int i = 0; i < warmup; ++i)
        if (fn(ctx) != cudaSuccess) return 1;
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i < reps; ++i) {
        if (flush) CUDA_CHECK(cudaMemsetAsync(G.flush.ptr, i & 0xff, G.flush.bytes, G.stream));
        CUDA_CHECK(cudaEventRecord(G.ev[0], G.stream));
        if (fn(ctx) != cudaSuccess) {
            free(t);
            return 1;
        }
        CUDA_CHECK(cudaEventRecord(G.ev[1], G.stream));
        CUDA_CHECK(cudaEventSynchronize(G.ev[1]));
        float ms = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, G.ev[0], G.ev[1]));
        t[i] = ms * 1e3;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    tm->reps = reps;
    tm->median_us = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    tm->p10_us = t[(int)(0.1 * (reps - 1) + 0.5)];
    tm->p90_us = t[(int)(0.9 * (reps - 1) + 0.5)];
    free(t);
    return 0;
}

/* ---------------- ceilings ---------------- */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} CopyCtx;
static cudaError_t copy_fn(void *p) {
    CopyCtx *c = p;
    return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, G.stream);
}

typedef struct {
    int n;
    const void *a, *b;
    void *c;
} GemmCtx;
static cudaError_t gemm_fn(void *p) {
    GemmCtx *g = p;
    const float one = 1.f, zero = 0.f;
    cublasStatus_t st = cublasGemmEx(G.blas, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a,
                                     CUDA_R_16BF, g->n, g->b, CUDA_R_16BF, g->n, &zero, g->c, CUDA_R_16BF,
                                     g->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

int gg_measure_ceilings(GgDeviceInfo *d) {
    ensure_handles();
    GgTiming tm;
    /* Copy: 1 GiB each way; bandwidth counts bytes read plus bytes written. */
    const size_t bytes = (size_t)1 << 30;
    CopyCtx cc = {buf_get(&G.c, bytes), buf_get(&G.a, bytes), bytes};
    CUDA_CHECK(cudaMemset(G.a.ptr, 0x3c, bytes));
    if (time_fn(copy_fn, &cc, 3, 20, 0, &tm)) return 1;
    d->bw_gbps = 2.0 * (double)bytes / (tm.median_us * 1e-6) * 1e-9;
    /* Dense GEMM: 8192^3 bf16 on random data (zeros run faster and would flatter it). */
    const int n = 8192;
    const size_t elems = (size_t)n * n;
    GemmCtx gc = {n, buf_get(&G.a, elems * 2), buf_get(&G.b, elems * 2), buf_get(&G.c, elems * 2)};
    CUDA_CHECK(gg_fill_uniform_bf16(G.a.ptr, elems, 101, G.stream));
    CUDA_CHECK(gg_fill_uniform_bf16(G.b.ptr, elems, 102, G.stream));
    if (time_fn(gemm_fn, &gc, 3, 20, 0, &tm)) return 1;
    d->gemm_tflops = 2.0 * n * (double)n * n / (tm.median_us * 1e-6) * 1e-12;
    if (gg_ceiling_ffma_tflops(&d->ffma_tflops)) return 1;
    if (gg_ceiling_mma_sync_tflops(&d->mma_sync_tflops)) return 1;
    return 0;
}

/* ---------------- the check ---------------- */
/* bf16 keeps 8 significant bits, so rounding the fp32 result to bf16 moves it by at most
 * 2^-8 of its magnitude: rtol = 2^-8. A different fp32 summation order adds an absolute
 * error; inputs are uniform in [-1, 1), so an output's typical size is sqrt(k)/3 and
 * atol = 2^-10 sqrt(k) (about a tenth of a typical output's bf16 ulp) bounds that
 * generously, while a missing 16-wide k-step still moves an output by ~sqrt(16)/3 = 1.3. */
double gg_rtol(void) { return 1.0 / 256.0; }
double gg_atol(int k) { return sqrt((double)k) / 1024.0; }

static void compare(const uint16_t *out, const float *ref, const double *ref64, size_t count, int k,
                    GgCheck *chk) {
    const double atol = gg_atol(k), rtol = gg_rtol();
    double err2 = 0, ref2 = 0;
    chk->bad = 0;
    chk->max_abs_err = 0;
    for (size_t i = 0; i < count; ++i) {
        const double o = gg_bf16_to_f32(out[i]);
        const double r = ref64 ? ref64[i] : ref[i];
        const double e = fabs(o - r);
        if (!(e <= atol + rtol * fabs(r))) chk->bad++; /* NaN (unwritten) fails here too */
        if (e > chk->max_abs_err || isnan(e)) chk->max_abs_err = e;
        err2 += (o - r) * (o - r);
        ref2 += r * r;
    }
    chk->rel_err = ref2 > 0 ? sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
    chk->pass = chk->bad == 0 && chk->rel_err <= rtol;
}

/* cuBLAS per expert, fp32 output: C_e^T = B_e^T A_e^T in cuBLAS's column-major view. */
static int reference(const GgProblem *p, float *ref) {
    const float one = 1.f, zero = 0.f;
    for (int e = 0; e < p->experts; ++e) {
        if (p->m[e] == 0) continue;
        const uint16_t *a = (const uint16_t *)G.a.ptr + (size_t)p->offsets[e] * p->k;
        const uint16_t *b = (const uint16_t *)G.b.ptr + (size_t)e * p->k * p->n;
        CUBLAS_CHECK(cublasGemmEx(G.blas, CUBLAS_OP_N, CUBLAS_OP_N, p->n, p->m[e], p->k, &one, b,
                                  CUDA_R_16BF, p->n, a, CUDA_R_16BF, p->k, &zero,
                                  ref + (size_t)p->offsets[e] * p->n, CUDA_R_32F, p->n,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    return 0;
}

/* fp64 on the CPU, for small shapes: the independent referee of the cuBLAS reference. */
static double *reference_cpu(const GgProblem *p) {
    const size_t a_n = (size_t)p->tokens * p->k, b_n = (size_t)p->experts * p->k * p->n;
    uint16_t *a = malloc(a_n * 2 + 2), *b = malloc(b_n * 2 + 2);
    double *c = malloc(sizeof(double) * ((size_t)p->tokens * p->n + 1));
    CUDA_CHECK(cudaMemcpy(a, G.a.ptr, a_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b, G.b.ptr, b_n * 2, cudaMemcpyDeviceToHost));
    gg_reference_fp64(p, a, b, c);
    free(a);
    free(b);
    return c;
}

/* ---------------- one case ---------------- */
typedef struct {
    const GgKernel *kernel;
    const GgPeer *peer;
    GgLaunch launch;
} RunCtx;

static cudaError_t run_fn(void *p) {
    RunCtx *r = p;
    return r->kernel ? r->kernel->launch(&r->launch) : gg_peer_launch(r->peer, &r->launch);
}

/* Resolve a name, refuse what cannot run, upload the split and the tile list. */
static int prepare(const char *name, const GgProblem *p, const GgDeviceInfo *d, RunCtx *rc, char *why,
                   size_t len) {
    memset(rc, 0, sizeof *rc);
    rc->kernel = gg_find_kernel(name);
    rc->peer = rc->kernel ? NULL : gg_find_peer(name);
    if (!rc->kernel && !rc->peer) {
        snprintf(why, len, "unknown kernel '%s' (see 'ggemm list')", name);
        return GG_EXIT_USAGE;
    }
    GgLaunch *l = &rc->launch;
    l->tokens = p->tokens;
    l->experts = p->experts;
    l->k = p->k;
    l->n = p->n;
    l->num_sms = d->sms;
    l->stream = G.stream;
    l->a = buf_get(&G.a, (size_t)p->tokens * p->k * 2);
    l->b = buf_get(&G.b, (size_t)p->experts * p->k * p->n * 2);
    l->c = buf_get(&G.c, (size_t)p->tokens * p->n * 2);
    l->row_offsets = buf_get(&G.offsets, sizeof(int) * (size_t)(p->experts + 1));
    CUDA_CHECK(cudaMemcpy((void *)l->row_offsets, p->offsets, sizeof(int) * (size_t)(p->experts + 1),
                          cudaMemcpyHostToDevice));
    if (rc->peer) return gg_peer_prepare(rc->peer, l, p) ? GG_EXIT_CHECK : GG_EXIT_OK;

    const GgKernel *k = rc->kernel;
    if (!gg_kernel_arch_ok(k, d->cc_major, d->cc_minor, why, len)) return GG_EXIT_NO_GPU;
    GgShape shape = {p->tokens, p->experts, p->k, p->n};
    if (!k->can_implement(&shape, why, len)) return GG_EXIT_USAGE;
    GgKernelInfo info;
    CUDA_CHECK(k->info(&info));
    if ((long)info.dynamic_smem > d->smem_optin) {
        snprintf(why, len, "%s needs %zu bytes of shared memory per block; this GPU allows %ld", k->name,
                 info.dynamic_smem, d->smem_optin);
        return GG_EXIT_NO_GPU;
    }
    if (info.host_tiles) {
        long count = gg_tile_count(p, info.block_m, info.block_n);
        GgTile *tiles = malloc(sizeof(GgTile) * (size_t)(count > 0 ? count : 1));
        gg_build_tiles(p, info.block_m, info.block_n, tiles);
        l->tiles = buf_get(&G.tiles, sizeof(GgTile) * (size_t)(count > 0 ? count : 1));
        CUDA_CHECK(cudaMemcpy((void *)l->tiles, tiles, sizeof(GgTile) * (size_t)count, cudaMemcpyHostToDevice));
        l->num_tiles = (int)count;
        free(tiles);
    }
    return GG_EXIT_OK;
}

/* Fresh inputs, reference, poisoned output, one launch, compare. */
static int check_once(RunCtx *rc, const GgProblem *p, unsigned long long seed, int cpu_ref, GgCheck *chk,
                      char *why, size_t len) {
    const size_t c_n = (size_t)p->tokens * p->n;
    float *ref_d = buf_get(&G.ref, c_n * sizeof(float) + 4);
    CUDA_CHECK(gg_fill_uniform_bf16((uint16_t *)rc->launch.a, (size_t)p->tokens * p->k, 2 * seed, G.stream));
    CUDA_CHECK(gg_fill_uniform_bf16((uint16_t *)rc->launch.b, (size_t)p->experts * p->k * p->n, 2 * seed + 1,
                                    G.stream));
    CUDA_CHECK(cudaMemsetAsync(ref_d, 0xff, c_n * sizeof(float), G.stream));
    reference(p, ref_d);
    /* 0xffff is a bf16 NaN: any element the kernel does not write fails the check. */
    CUDA_CHECK(cudaMemsetAsync(rc->launch.c, 0xff, c_n * 2, G.stream));
    cudaError_t err = run_fn(rc);
    if (err == cudaSuccess) err = cudaStreamSynchronize(G.stream);
    if (err != cudaSuccess) {
        snprintf(why, len, "launch failed: %s", cudaGetErrorString(err));
        return GG_EXIT_CHECK;
    }
    uint16_t *out = malloc(c_n * 2 + 2);
    float *ref = malloc(c_n * sizeof(float) + 4);
    CUDA_CHECK(cudaMemcpy(out, rc->launch.c, c_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ref, ref_d, c_n * sizeof(float), cudaMemcpyDeviceToHost));
    compare(out, ref, NULL, c_n, p->k, chk);
    chk->cpu_ref = 0;
    if (cpu_ref && chk->pass) {
        double *ref64 = reference_cpu(p);
        GgCheck cpu;
        compare(out, NULL, ref64, c_n, p->k, &cpu);
        if (!cpu.pass) *chk = cpu;
        chk->cpu_ref = 1;
        free(ref64);
    }
    free(out);
    free(ref);
    if (!chk->pass)
        snprintf(why, len, "check failed: %ld elements outside tolerance%s, max abs err %.4g, rel err %.4g",
                 chk->bad, chk->cpu_ref ? " (fp64 CPU reference)" : "", chk->max_abs_err, chk->rel_err);
    return chk->pass ? GG_EXIT_OK : GG_EXIT_CHECK;
}

int gg_run_case(const char *name, const GgProblem *p, const GgDeviceInfo *d, unsigned long long seed,
                int check, int cpu_ref, int warmup, int reps, GgCheck *chk, GgTiming *tm, char *why,
                size_t why_len) {
    ensure_handles();
    memset(chk, 0, sizeof *chk);
    memset(tm, 0, sizeof *tm);
    why[0] = '\0';
    RunCtx rc;
    int rc_prep = prepare(name, p, d, &rc, why, why_len);
    if (rc_prep != GG_EXIT_OK) return rc_prep;
    if (check) {
        int r = check_once(&rc, p, seed, cpu_ref, chk, why, why_len);
        if (r != GG_EXIT_OK) return r; /* a failed check is never timed */
    }
    if (reps > 0 && time_fn(run_fn, &rc, warmup, reps, 1, tm)) {
        snprintf(why, why_len, "launch failed while timing: %s", cudaGetErrorString(cudaGetLastError()));
        return GG_EXIT_CHECK;
    }
    return GG_EXIT_OK;
}

int gg_graph_replay_check(const char *name, const GgProblem *p, const GgProblem *changed,
                          unsigned long long seed, GgCheck *chk, char *why, size_t why_len) {
    GgDeviceInfo d;
    if (gg_device_open(&d, why, why_len)) return GG_EXIT_NO_GPU;
    RunCtx rc;
    int r = prepare(name, p, &d, &rc, why, why_len);
    if (r != GG_EXIT_OK) return r;
    GgKernelInfo info = {0};
    if (rc.kernel) CUDA_CHECK(rc.kernel->info(&info));
    if (rc.kernel && info.host_tiles) {
        snprintf(why, why_len, "%s reads a host-built tile list: a replay cannot change its split", name);
        return GG_EXIT_USAGE;
    }
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(G.stream, cudaStreamCaptureModeThreadLocal));
    cudaError_t err = run_fn(&rc);
    CUDA_CHECK(cudaStreamEndCapture(G.stream, &graph));
    if (err != cudaSuccess) {
        snprintf(why, why_len, "launch failed during capture: %s", cudaGetErrorString(err));
        return GG_EXIT_CHECK;
    }
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    /* New split, same buffers: only the device-side row offsets change. */
    CUDA_CHECK(cudaMemcpy((void *)rc.launch.row_offsets, changed->offsets,
                          sizeof(int) * (size_t)(changed->experts + 1), cudaMemcpyHostToDevice));
    const size_t c_n = (size_t)changed->tokens * changed->n;
    float *ref_d = buf_get(&G.ref, c_n * sizeof(float) + 4);
    CUDA_CHECK(gg_fill_uniform_bf16((uint16_t *)rc.launch.a, (size_t)changed->tokens * changed->k, 2 * seed,
                                    G.stream));
    CUDA_CHECK(gg_fill_uniform_bf16((uint16_t *)rc.launch.b,
                                    (size_t)changed->experts * changed->k * changed->n, 2 * seed + 1,
                                    G.stream));
    reference(changed, ref_d);
    CUDA_CHECK(cudaMemsetAsync(rc.launch.c, 0xff, c_n * 2, G.stream));
    CUDA_CHECK(cudaGraphLaunch(exec, G.stream));
    CUDA_CHECK(cudaStreamSynchronize(G.stream));
    uint16_t *out = malloc(c_n * 2 + 2);
    float *ref = malloc(c_n * sizeof(float) + 4);
    CUDA_CHECK(cudaMemcpy(out, rc.launch.c, c_n * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ref, ref_d, c_n * sizeof(float), cudaMemcpyDeviceToHost));
    compare(out, ref, NULL, c_n, changed->k, chk);
    free(out);
    free(ref);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    if (!chk->pass)
        snprintf(why, why_len, "graph replay with a new split: %ld elements wrong, max abs err %.4g", chk->bad,
                 chk->max_abs_err);
    return chk->pass ? GG_EXIT_OK : GG_EXIT_CHECK;
}
