/* The ceilings every roofline column is measured against, measured in the same process as the
 * kernels: copy, write-only and read-only bandwidth and the dense cuBLAS GEMM rate here, the FFMA
 * and mma.sync instruction peaks (and the read-only stream's kernel) in ceilings.cu. */
#include <cublas_v2.h>

#include "gg_harness.h"

cudaError_t gg_fill_uniform_bf16(uint16_t *p, size_t n, unsigned long long seed, cudaStream_t stream);

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    int sms; /* the read stream's grid */
} CopyCtx;
static cudaError_t copy_fn(void *p) {
    CopyCtx *c = p;
    return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, gg_stream());
}
static cudaError_t write_fn(void *p) {
    CopyCtx *c = p;
    return cudaMemsetAsync(c->dst, 0x3c, c->bytes, gg_stream());
}
/* src holds 0x3c3c3c3c words, whose XOR is 0 or that word: the sentinel 1 is never stored. */
static cudaError_t read_fn(void *p) {
    CopyCtx *c = p;
    return gg_read_stream(c->src, c->bytes, c->sms, c->dst, 1u, gg_stream());
}

typedef struct {
    int n;
    const void *a, *b;
    void *c;
} GemmCtx;
static cudaError_t gemm_fn(void *p) {
    GemmCtx *g = p;
    const float one = 1.f, zero = 0.f;
    cublasStatus_t st = cublasGemmEx(gg_blas(), CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a,
                                     CUDA_R_16BF, g->n, g->b, CUDA_R_16BF, g->n, &zero, g->c, CUDA_R_16BF, g->n,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

int gg_measure_ceilings(GgDeviceInfo *d) {
    if (gg_pool_open()) return GG_EXIT_CHECK;
    GgTiming tm;
    /* Copy: 1 GiB each way; bandwidth counts bytes read plus bytes written. */
    const size_t bytes = (size_t)1 << 30;
    CopyCtx cc = {.sms = d->sms};
    if (gg_buf(GG_BUF_C, bytes, &cc.dst) || gg_buf(GG_BUF_A, bytes, (void **)&cc.src)) return GG_EXIT_CHECK;
    cc.bytes = bytes;
    GG_CUDA(cudaMemset((void *)cc.src, 0x3c, bytes));
    if (gg_time(copy_fn, &cc, 3, 20, 0, &tm)) return GG_EXIT_CHECK;
    d->bw_gbps = 2.0 * (double)bytes / (tm.median_us * 1e-6) * 1e-9;
    /* Write only: the same 1 GiB set, nothing read (not the roofline's term: a reference for
     * kernels whose bytes are mostly written). */
    if (gg_time(write_fn, &cc, 3, 20, 0, &tm)) return GG_EXIT_CHECK;
    d->write_gbps = (double)bytes / (tm.median_us * 1e-6) * 1e-9;
    /* Read only: the copy's source, read once, nothing written (a reference for kernels whose
     * bytes are mostly read, as weight-streaming layers at few tokens). */
    if (gg_time(read_fn, &cc, 3, 20, 0, &tm)) return GG_EXIT_CHECK;
    d->read_gbps = (double)bytes / (tm.median_us * 1e-6) * 1e-9;
    /* Dense GEMM: 8192^3 bf16 on random data (zeros run faster and would flatter it). */
    const int n = 8192;
    const size_t elems = (size_t)n * n;
    GemmCtx gc = {.n = n};
    if (gg_buf(GG_BUF_A, elems * 2, (void **)&gc.a) || gg_buf(GG_BUF_B, elems * 2, (void **)&gc.b) ||
        gg_buf(GG_BUF_C, elems * 2, &gc.c))
        return GG_EXIT_CHECK;
    GG_CUDA(gg_fill_uniform_bf16((uint16_t *)gc.a, elems, 101, gg_stream()));
    GG_CUDA(gg_fill_uniform_bf16((uint16_t *)gc.b, elems, 102, gg_stream()));
    if (gg_time(gemm_fn, &gc, 3, 20, 0, &tm)) return GG_EXIT_CHECK;
    d->gemm_tflops = 2.0 * n * (double)n * n / (tm.median_us * 1e-6) * 1e-12;
    GG_CUDA((cudaError_t)gg_ceiling_ffma_tflops(&d->ffma_tflops));
    GG_CUDA((cudaError_t)gg_ceiling_mma_sync_tflops(&d->mma_sync_tflops));
    return GG_EXIT_OK;
}
