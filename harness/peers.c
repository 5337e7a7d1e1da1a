/* Peers: what a user would otherwise call, timed in the same process on the same inputs
 * and checked the same way. cuBLAS is column-major, so each expert is computed as
 * C_e^T (n x m_e) = B_e^T (n x k) * A_e^T (k x m_e), which reads our row-major buffers
 * as they are. torch._grouped_mm is timed by harness/peers/torch_grouped_mm.py. The table of
 * peers is in registry.c. Every failure returns GG_EXIT_CHECK with one line in gg_error(). */
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "gg_harness.h"

static struct {
    cublasHandle_t blas;
    void *workspace;
    cudaGraphExec_t loop_graph;
    /* grouped: host arrays of sizes, device arrays of pointers */
    int groups;
    cublasOperation_t *ops;
    int *m, *n, *k, *lda, *ldb, *ldc, *size;
    float *alpha, *beta;
    const void **a_ptrs, **b_ptrs;
    void **c_ptrs;
} P;

void gg_peer_release(void) {
    if (P.loop_graph) cudaGraphExecDestroy(P.loop_graph);
    cudaFree(P.a_ptrs);
    cudaFree(P.b_ptrs);
    cudaFree(P.c_ptrs);
    free(P.ops);
    free(P.m);
    free(P.alpha);
    if (P.blas) cublasDestroy(P.blas);
    cudaFree(P.workspace);
    memset(&P, 0, sizeof P);
}

/* Experts as cuBLAS sees them: (B_e, A_e, C_e) pointers of the non-empty experts. */
static int gather(const GgLaunch *l, const GgProblem *p, const void **bs, const void **as, void **cs) {
    int g = 0;
    for (int e = 0; e < p->experts; ++e) {
        if (p->m[e] == 0) continue;
        bs[g] = l->b + (size_t)e * p->k * p->n;
        as[g] = l->a + (size_t)p->offsets[e] * p->k;
        cs[g] = l->c + (size_t)p->offsets[e] * p->n;
        ++g;
    }
    return g;
}

/* The per-peer state, from the expert pointers. */
static int prepare_groups(const GgPeer *peer, const GgLaunch *l, const GgProblem *p, const void **bs,
                          const void **as, void **cs) {
    const float one = 1.f, zero = 0.f;
    if (!strcmp(peer->name, "cublas_loop")) {
        cudaGraph_t graph = NULL;
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        GG_CUDA(cudaStreamBeginCapture(l->stream, cudaStreamCaptureModeThreadLocal));
        for (int g = 0, e = 0; g < P.groups && st == CUBLAS_STATUS_SUCCESS; ++e) {
            if (p->m[e] == 0) continue;
            st = cublasGemmEx(P.blas, CUBLAS_OP_N, CUBLAS_OP_N, p->n, p->m[e], p->k, &one, bs[g], CUDA_R_16BF,
                              p->n, as[g], CUDA_R_16BF, p->k, &zero, cs[g], CUDA_R_16BF, p->n,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            ++g;
        }
        GG_CUDA(cudaStreamEndCapture(l->stream, &graph)); /* always: a stream left capturing breaks the next case */
        if (st != CUBLAS_STATUS_SUCCESS) cudaGraphDestroy(graph);
        GG_BLAS(st);
        GG_CUDA(cudaGraphInstantiate(&P.loop_graph, graph, 0));
        GG_CUDA(cudaGraphDestroy(graph));
    } else {
        const int g_n = P.groups > 0 ? P.groups : 1;
        P.ops = malloc(sizeof *P.ops * (size_t)g_n);
        P.m = malloc(sizeof(int) * 7 * (size_t)g_n);
        P.alpha = malloc(sizeof(float) * 2 * (size_t)g_n);
        if (!P.ops || !P.m || !P.alpha) {
            gg_error_set("out of host memory for %d groups", g_n);
            return GG_EXIT_CHECK;
        }
        P.n = P.m + g_n, P.k = P.n + g_n, P.lda = P.k + g_n, P.ldb = P.lda + g_n, P.ldc = P.ldb + g_n;
        P.size = P.ldc + g_n;
        P.beta = P.alpha + g_n;
        for (int g = 0, e = 0; g < P.groups; ++e) {
            if (p->m[e] == 0) continue;
            P.ops[g] = CUBLAS_OP_N;
            P.m[g] = p->n, P.n[g] = p->m[e], P.k[g] = p->k;
            P.lda[g] = p->n, P.ldb[g] = p->k, P.ldc[g] = p->n;
            P.size[g] = 1, P.alpha[g] = one, P.beta[g] = zero;
            ++g;
        }
        GG_CUDA(cudaMalloc((void **)&P.a_ptrs, sizeof(void *) * (size_t)g_n));
        GG_CUDA(cudaMalloc((void **)&P.b_ptrs, sizeof(void *) * (size_t)g_n));
        GG_CUDA(cudaMalloc((void **)&P.c_ptrs, sizeof(void *) * (size_t)g_n));
        GG_CUDA(cudaMemcpyAsync(P.a_ptrs, bs, sizeof(void *) * (size_t)P.groups, cudaMemcpyHostToDevice, gg_stream()));
        GG_CUDA(cudaMemcpyAsync(P.b_ptrs, as, sizeof(void *) * (size_t)P.groups, cudaMemcpyHostToDevice, gg_stream()));
        GG_CUDA(cudaMemcpyAsync(P.c_ptrs, cs, sizeof(void *) * (size_t)P.groups, cudaMemcpyHostToDevice, gg_stream()));
    }
    return GG_EXIT_OK;
}

int gg_peer_prepare(const GgPeer *peer, const GgLaunch *l, const GgProblem *p) {
    gg_peer_release();
    GG_BLAS(cublasCreate(&P.blas));
    GG_BLAS(cublasSetStream(P.blas, l->stream));
    /* An explicit workspace: cuBLAS must not allocate while a graph is being captured. */
    const size_t ws = (size_t)64 << 20;
    GG_CUDA(cudaMalloc(&P.workspace, ws));
    GG_BLAS(cublasSetWorkspace(P.blas, P.workspace, ws));
    const size_t ne = (size_t)(p->experts > 0 ? p->experts : 1);
    const void **bs = malloc(ne * sizeof *bs), **as = malloc(ne * sizeof *as);
    void **cs = malloc(ne * sizeof *cs);
    if (!bs || !as || !cs) {
        free(bs), free(as), free(cs);
        gg_error_set("out of host memory for %zu expert pointers", ne);
        return GG_EXIT_CHECK;
    }
    P.groups = gather(l, p, bs, as, cs);
    const int rc = prepare_groups(peer, l, p, bs, as, cs);
    free(bs);
    free(as);
    free(cs);
    return rc;
}

cudaError_t gg_peer_launch(const GgPeer *peer, const GgLaunch *l) {
    if (P.groups == 0) return cudaSuccess;
    if (!strcmp(peer->name, "cublas_loop")) return cudaGraphLaunch(P.loop_graph, l->stream);
    cublasStatus_t st = cublasGemmGroupedBatchedEx(
        P.blas, P.ops, P.ops, P.m, P.n, P.k, P.alpha, P.a_ptrs, CUDA_R_16BF, P.lda, P.b_ptrs, CUDA_R_16BF,
        P.ldb, P.beta, P.c_ptrs, CUDA_R_16BF, P.ldc, P.groups, P.size, CUBLAS_COMPUTE_32F);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasGemmGroupedBatchedEx failed: cublas status %d\n", (int)st);
        return cudaErrorUnknown;
    }
    return cudaSuccess;
}
