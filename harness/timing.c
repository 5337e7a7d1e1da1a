/* The timing protocol every kernel and peer is measured with (README, "How we measure"). */
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

cudaError_t gg_l2_scrub_read(void *p, size_t bytes, cudaStream_t stream); /* flush.cu */

/* Twice the L2: nothing of what ran before survives a pass over it (flush.cu: a read, not a
 * memset). Its contents do not matter, so it is never filled. */
static int scrub_buffer(void **scrub, size_t *bytes) {
    int dev = 0, l2 = 0;
    GG_CUDA(cudaGetDevice(&dev));
    GG_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    *bytes = 2 * (size_t)l2;
    return gg_buf(GG_BUF_FLUSH, *bytes, scrub);
}

int gg_flush_l2(void) {
    void *scrub;
    size_t bytes;
    if (gg_pool_open() || scrub_buffer(&scrub, &bytes)) return GG_EXIT_CHECK;
    GG_CUDA(gg_l2_scrub_read(scrub, bytes, gg_stream()));
    return GG_EXIT_OK;
}

void gg_timing_summarize(double *t, int reps, GgTiming *tm) {
    memset(&tm->telemetry, 0, sizeof tm->telemetry); /* gg_time fills it after */
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    tm->reps = reps;
    tm->median_us = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    tm->p10_us = t[(int)(0.1 * (reps - 1) + 0.5)];
    tm->p90_us = t[(int)(0.9 * (reps - 1) + 0.5)];
}

int gg_median_index(const double *t, int n) {
    if (n <= 0) return -1;
    for (int q = 0; q < n; ++q) { /* the first index whose value is the ((n - 1) / 2)-th smallest */
        int below = 0, at_most = 0;
        for (int x = 0; x < n; ++x) {
            below += t[x] < t[q];
            at_most += t[x] <= t[q];
        }
        if (below <= (n - 1) / 2 && at_most > (n - 1) / 2) return q;
    }
    return 0; /* not reached: some value is the median */
}

int gg_time(GgTimedFn fn, void *ctx, int warmup, int reps, int flush, GgTiming *tm) {
    if (gg_pool_open()) return GG_EXIT_CHECK;
    void *scrub = NULL;
    size_t scrub_bytes = 0;
    if (flush && scrub_buffer(&scrub, &scrub_bytes)) return GG_EXIT_CHECK;
    cudaEvent_t ev[2];
    GG_CUDA(cudaEventCreate(&ev[0]));
    if (cudaEventCreate(&ev[1]) != cudaSuccess) {
        cudaEventDestroy(ev[0]);
        gg_error_set("cudaEventCreate: %s", cudaGetErrorString(cudaGetLastError()));
        return GG_EXIT_CHECK;
    }
    double *t = malloc(sizeof(double) * (size_t)reps);
    int rc = t ? GG_EXIT_OK : GG_EXIT_CHECK;
    if (!t) gg_error_set("out of host memory for %d timings", reps);
    cudaError_t err = cudaSuccess;
    for (int i = 0; rc == GG_EXIT_OK && i < warmup && err == cudaSuccess; ++i) err = fn(ctx);
    if (err == cudaSuccess) err = cudaStreamSynchronize(gg_stream()); /* the series starts here */
    GgTelemetryMark start;
    gg_telemetry_mark(&start);
    for (int i = 0; rc == GG_EXIT_OK && i < reps && err == cudaSuccess; ++i) {
        if (flush) err = gg_l2_scrub_read(scrub, scrub_bytes, gg_stream());
        if (err == cudaSuccess) err = cudaEventRecord(ev[0], gg_stream());
        if (err == cudaSuccess) err = fn(ctx);
        if (err == cudaSuccess) err = cudaEventRecord(ev[1], gg_stream());
        if (err == cudaSuccess) err = cudaEventSynchronize(ev[1]);
        float ms = 0.f;
        if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, ev[0], ev[1]);
        t[i] = ms * 1e3;
    }
    if (rc == GG_EXIT_OK && err != cudaSuccess) {
        gg_error_set("launch failed while timing: %s", cudaGetErrorString(err));
        rc = GG_EXIT_CHECK;
    }
    if (rc == GG_EXIT_OK) {
        gg_timing_summarize(t, reps, tm);
        gg_telemetry_since(&start, &tm->telemetry);
    }
    free(t);
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    return rc;
}
