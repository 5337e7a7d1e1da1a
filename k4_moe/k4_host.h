/* What k4_moe.c and k5_moe_backward.c, the host sides of the layer's two directions, share:
 * enqueueing steps that return their error at once, the per-step event marks, the roofline
 * floor of one GEMM, and the carving of a workspace into buffers. Not part of the layer's C ABI (k4_moe.h). */
#ifndef K4_HOST_H
#define K4_HOST_H
#include <stddef.h>

#include <cuda_runtime_api.h>

/* Return the step's error from the enclosing function (cudaError_t), without printing. */
#define STEP(call)                                      \
    do {                                                \
        cudaError_t step_err_ = (call);                 \
        if (step_err_ != cudaSuccess) return step_err_; \
    } while (0)
/* Record event i of `marks` (NULL: no breakdown) on the layer `l`'s stream. */
#define MARK(i)                                                \
    do {                                                       \
        if (marks) STEP(cudaEventRecord(marks[i], l->stream)); \
    } while (0)

/* Seconds one GEMM needs at best: its FLOPs at tflops or its compulsory bytes at gbps, the
 * larger (a ceiling of 0 is not counted). */
static inline double k4_gemm_floor_s(double flops, double bytes, double tflops, double gbps) {
    const double compute = tflops > 0 ? flops / (tflops * 1e12) : 0, memory = gbps > 0 ? bytes / (gbps * 1e9) : 0;
    return compute > memory ? compute : memory;
}

/* count buffers of bytes[i] each, one after another, every one 256-byte aligned: the bytes they
 * take together; with slot non-NULL, where each starts in base (NULL for an empty one). */
static inline size_t k4_carve(void *base, const size_t *bytes, int count, void **slot) {
    size_t total = 0;
    for (int i = 0; i < count; ++i) {
        if (slot) slot[i] = bytes[i] ? (char *)base + total : NULL;
        total += (bytes[i] + 255) / 256 * 256;
    }
    return total;
}

#endif
