/* Error checks that print the failing call as written. Used by host C and .cu launchers.
 * Host code that must keep going (the CLI, tests) uses the *_RET forms, which return the
 * error instead of exiting. */
#ifndef GG_CHECK_H
#define GG_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t gg_err_ = (call);                                                 \
        if (gg_err_ != cudaSuccess) {                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(gg_err_));                                     \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* Return the error to the caller (launchers return cudaError_t). */
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

#define CUBLAS_CHECK(call)                                                            \
    do {                                                                              \
        int gg_st_ = (int)(call);                                                     \
        if (gg_st_ != 0) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: cublas status %d\n", __FILE__, __LINE__, \
                    #call, gg_st_);                                                   \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* Driver API (CUresult); 0 is CUDA_SUCCESS. */
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
