/* Device buffers, the stream, the timing events and the cuBLAS handle: created on first use and
 * kept across cases, so a sweep allocates its largest buffers once. */
#include <string.h>

#include <cublas_v2.h>

#include "gg_harness.h"

typedef struct {
    void *ptr;
    size_t bytes;
} Buf;

typedef struct {
    Buf buf[GG_BUF_COUNT];
    cublasHandle_t blas;
    cudaStream_t stream;
} GgPool;
static GgPool pool;


int gg_pool_open(void) {
    if (pool.blas) return GG_EXIT_OK;
    GG_CUDA(cudaStreamCreateWithFlags(&pool.stream, cudaStreamNonBlocking));
    GG_BLAS(cublasCreate(&pool.blas));
    GG_BLAS(cublasSetStream(pool.blas, pool.stream));
    return GG_EXIT_OK;
}

cudaStream_t gg_stream(void) { return pool.stream; }
void *gg_blas(void) { return pool.blas; }

int gg_buf(int slot, size_t bytes, void **ptr) {
    Buf *b = &pool.buf[slot];
    if (bytes == 0) bytes = 16; /* a valid pointer even for an empty tensor */
    if (b->bytes < bytes) {
        if (b->ptr) GG_CUDA(cudaFree(b->ptr));
        b->ptr = NULL;
        b->bytes = 0;
        GG_CUDA(cudaMalloc(&b->ptr, bytes));
        b->bytes = bytes;
    }
    *ptr = b->ptr;
    return GG_EXIT_OK;
}

void gg_release_buffers(void) {
    for (int i = 0; i < GG_BUF_COUNT; ++i) {
        if (pool.buf[i].ptr) cudaFree(pool.buf[i].ptr);
        pool.buf[i].ptr = NULL;
        pool.buf[i].bytes = 0;
    }
    gg_peer_release();
}
