/* Error checks for stage launchers and common host helpers (C and .cu). None of them exits:
 * each prints the failing call as written, with file and line, and returns an error to the
 * caller, which decides what to do (the harness reports it and goes on with the next case).
 * The harness has its own forms that also keep the message (harness/gg_harness.h). */
#ifndef GG_CHECK_H
#define GG_CHECK_H

#include <stdio.h>
#include <cuda_runtime_api.h>

/* Runtime API call in a function returning cudaError_t: on failure, print and return it. */
#define CUDA_TRY(call)                                                                \
    do {                                                                              \
        cudaError_t gg_err_ = (call);                                                 \
        if (gg_err_ != cudaSuccess) {                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(gg_err_));                                     \
            return gg_err_;                                                           \
        }                                                                             \
    } while (0)

/* After every <<<...>>>: the launch itself reports configuration errors here. */
#define CUDA_LAUNCH_CHECK() CUDA_TRY(cudaGetLastError())

/* Driver API call (CUresult; 0 is CUDA_SUCCESS) in a function returning an int or a
 * cudaError_t: on failure, print and return cudaErrorUnknown (non-zero). */
#define CU_CHECK(call)                                                                \
    do {                                                                              \
        int gg_res_ = (int)(call);                                                    \
        if (gg_res_ != 0) {                                                           \
            fprintf(stderr, "%s:%d: %s failed: CUresult %d\n", __FILE__, __LINE__,    \
                    #call, gg_res_);                                                  \
            return cudaErrorUnknown;                                                  \
        }                                                                             \
    } while (0)

#endif
