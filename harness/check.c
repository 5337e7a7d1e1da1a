/* The reference check every kernel and peer passes before it is timed: fresh random inputs,
 * a cuBLAS fp32 reference per expert, the output poisoned with NaN, every element compared;
 * for small shapes also an fp64 reference on the CPU, the independent referee of cuBLAS. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "gg_harness.h"

cudaError_t gg_fill_uniform_bf16(uint16_t *p, size_t n, unsigned long long seed, cudaStream_t stream);

/* bf16 keeps 8 significant bits, so rounding the fp32 result to bf16 moves it by at most
 * 2^-8 of its magnitude: rtol = 2^-8. A different fp32 summation order adds an absolute
 * error; inputs are uniform in [-1, 1), so an output's typical size is sqrt(k)/3 and
 * atol = 2^-10 sqrt(k) (about a tenth of a typical output's bf16 ulp) bounds that
 * generously, while a missing 16-wide k-step still moves an output by ~sqrt(16)/3 = 1.3. */
double gg_rtol(void) { return 1.0 / 256.0; }
double gg_atol(int k) { return sqrt((double)k) / 1024.0; }

void gg_check_compare(const uint16_t *out, const float *ref, const double *ref64, size_t count, int n, int k,
                      int expert_rows, GgCheck *chk) {
    const double atol = gg_atol(k), rtol = gg_rtol();
    double err2 = 0, ref2 = 0;
    chk->bad = 0;
    chk->max_abs_err = 0;
    chk->first_expert = chk->first_row = chk->first_col = -1;
    for (size_t i = 0; i < count; ++i) {
        const double o = gg_bf16_to_f32(out[i]);
        const double r = ref64 ? ref64[i] : ref[i];
        const double e = fabs(o - r);
        if (!(e <= atol + rtol * fabs(r))) { /* NaN (unwritten) fails here too */
            if (chk->bad++ == 0) {
                const long row = (long)(i / (size_t)n);
                chk->first_expert = expert_rows > 0 ? row / expert_rows : -1;
                chk->first_row = expert_rows > 0 ? row % expert_rows : row;
                chk->first_col = (long)(i % (size_t)n);
                chk->first_out = o;
                chk->first_ref = r;
            }
        }
        if (e > chk->max_abs_err || isnan(e)) chk->max_abs_err = e;
        err2 += (o - r) * (o - r);
        ref2 += r * r;
    }
    chk->rel_err = ref2 > 0 ? sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
    chk->pass = chk->bad == 0 && chk->rel_err <= rtol;
}

/* cuBLAS is column-major: a row-major [r x c] matrix is its transpose with leading dimension c,
 * so C^T = op(B)^T op(A)^T is one call whatever the form. */
static int gemm_ref(GgGemmForm form, cudaDataType_t type, const void *a, const void *b, float *c, int m, int n,
                    int k) {
    const float one = 1.f, zero = 0.f;
    const cublasOperation_t op_b = form == GG_GEMM_NT ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = form == GG_GEMM_TN ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = form == GG_GEMM_NT ? k : n, lda = form == GG_GEMM_TN ? m : k;
    GG_BLAS(cublasGemmEx(gg_blas(), op_b, op_a, n, m, k, &one, b, type, ldb, a, type, lda, &zero, c, CUDA_R_32F, n,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return GG_EXIT_OK;
}

int gg_gemm_ref(GgGemmForm form, const uint16_t *a, const uint16_t *b, float *c, int m, int n, int k) {
    return gemm_ref(form, CUDA_R_16BF, a, b, c, m, n, k);
}

int gg_gemm_ref_f32(GgGemmForm form, const float *a, const float *b, float *c, int m, int n, int k) {
    return gemm_ref(form, CUDA_R_32F, a, b, c, m, n, k);
}

/* cuBLAS per expert, fp32 output, for the launch's pass (GgPass):
 * forward  C_e [m_e x n] = A_e B_e;
 * dgrad    dA_e [m_e x k] = dC_e [m_e x n] B_e^T (B_e [k x n] as stored: form NT);
 * wgrad    dB_e [k x n] = A_e^T dC_e (A_e [m_e x k] as stored: form TN); an empty expert's dB_e
 *          is zeros (set here, not by cuBLAS). */
static int reference(const GgLaunch *l, const GgProblem *p, float *ref) {
    for (int e = 0; e < p->experts; ++e) {
        const size_t row0 = (size_t)p->offsets[e], m = (size_t)p->m[e], k = (size_t)p->k, n = (size_t)p->n;
        const uint16_t *b_e = l->b + (size_t)e * k * n;
        int rc = GG_EXIT_OK;
        if (l->pass == GG_PASS_FORWARD && m > 0)
            rc = gg_gemm_ref(GG_GEMM_NN, l->a + row0 * k, b_e, ref + row0 * n, p->m[e], p->n, p->k);
        else if (l->pass == GG_PASS_DGRAD && m > 0)
            rc = gg_gemm_ref(GG_GEMM_NT, l->a + row0 * n, b_e, ref + row0 * k, p->m[e], p->k, p->n);
        else if (l->pass == GG_PASS_WGRAD) {
            float *db = ref + (size_t)e * k * n;
            if (m == 0) GG_CUDA(cudaMemsetAsync(db, 0, sizeof(float) * k * n, gg_stream()));
            else rc = gg_gemm_ref(GG_GEMM_TN, l->a + row0 * k, l->b + row0 * n, db, p->k, p->n, p->m[e]);
        }
        if (rc) return rc;
    }
    return GG_EXIT_OK;
}

int gg_check_prepare(const GgLaunch *l, const GgProblem *p, unsigned long long seed) {
    const GgPassShape ps = gg_pass_shape(p, l->pass);
    const size_t c_n = ps.c;
    float *ref = NULL;
    if (gg_buf(GG_BUF_REF, c_n * sizeof(float), (void **)&ref)) return GG_EXIT_CHECK;
    GG_CUDA(gg_fill_uniform_bf16((uint16_t *)l->a, ps.a, 2 * seed, gg_stream()));
    GG_CUDA(gg_fill_uniform_bf16((uint16_t *)l->b, ps.b, 2 * seed + 1, gg_stream()));
    GG_CUDA(cudaMemsetAsync(ref, 0xff, c_n * sizeof(float), gg_stream()));
    if (reference(l, p, ref)) return GG_EXIT_CHECK;
    /* 0xffff is a bf16 NaN: any element the kernel does not write fails the check. */
    GG_CUDA(cudaMemsetAsync(l->c, 0xff, c_n * 2, gg_stream()));
    return GG_EXIT_OK;
}

/* fp64 on the CPU from the inputs the GPU holds. */
static int reference_cpu(const GgLaunch *l, const GgProblem *p, double **out) {
    const GgPassShape ps = gg_pass_shape(p, l->pass);
    const size_t a_n = ps.a, b_n = ps.b;
    uint16_t *a = malloc(a_n * 2 + 2), *b = malloc(b_n * 2 + 2);
    double *c = malloc(sizeof(double) * (ps.c + 1));
    int rc = a && b && c ? GG_EXIT_OK : GG_EXIT_CHECK;
    if (rc) gg_error_set("out of host memory for the fp64 reference");
    if (!rc && (cudaMemcpy(a, l->a, a_n * 2, cudaMemcpyDeviceToHost) != cudaSuccess ||
                cudaMemcpy(b, l->b, b_n * 2, cudaMemcpyDeviceToHost) != cudaSuccess)) {
        gg_error_set("copying the inputs back: %s", cudaGetErrorString(cudaGetLastError()));
        rc = GG_EXIT_CHECK;
    }
    if (!rc && l->pass == GG_PASS_DGRAD) gg_reference_dgrad_fp64(p, a, b, c);
    else if (!rc && l->pass == GG_PASS_WGRAD) gg_reference_wgrad_fp64(p, a, b, c);
    else if (!rc) gg_reference_fp64(p, a, b, c);
    free(a);
    free(b);
    if (rc) free(c);
    *out = rc ? NULL : c;
    return rc;
}

int gg_check_output(const GgLaunch *l, const GgProblem *p, int cpu_ref, GgCheck *chk) {
    const GgPassShape ps = gg_pass_shape(p, l->pass);
    const size_t c_n = ps.c;
    memset(chk, 0, sizeof *chk);
    GG_CUDA(cudaStreamSynchronize(gg_stream()));
    uint16_t *out = malloc(c_n * 2 + 2);
    float *ref = malloc(c_n * sizeof(float) + 4);
    void *ref_d = NULL;
    int rc = out && ref ? GG_EXIT_OK : GG_EXIT_CHECK;
    if (rc) gg_error_set("out of host memory for the check");
    if (!rc) rc = gg_buf(GG_BUF_REF, c_n * sizeof(float), &ref_d);
    if (!rc && (cudaMemcpy(out, l->c, c_n * 2, cudaMemcpyDeviceToHost) != cudaSuccess ||
                cudaMemcpy(ref, ref_d, c_n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)) {
        gg_error_set("copying the output back: %s", cudaGetErrorString(cudaGetLastError()));
        rc = GG_EXIT_CHECK;
    }
    if (!rc) {
        /* wgrad's output is one k x n matrix per expert: a bad element is named (expert, row, col) */
        gg_check_compare(out, ref, NULL, c_n, ps.c_cols, ps.reduction, ps.expert_rows, chk);
        if (cpu_ref && chk->pass) {
            double *ref64 = NULL;
            rc = reference_cpu(l, p, &ref64);
            if (!rc) {
                GgCheck cpu;
                gg_check_compare(out, NULL, ref64, c_n, ps.c_cols, ps.reduction, ps.expert_rows, &cpu);
                if (!cpu.pass) *chk = cpu;
                chk->cpu_ref = 1;
            }
            free(ref64);
        }
    }
    free(out);
    free(ref);
    return rc;
}

void gg_check_describe(const GgCheck *chk, char *why, size_t len) {
    if (chk->first_expert >= 0)
        snprintf(why, len,
                 "check failed: %ld elements outside tolerance%s, first at expert %ld row %ld col %ld of dB "
                 "(got %.6g, expected %.6g), max abs err %.4g, rel err %.4g",
                 chk->bad, chk->cpu_ref ? " (fp64 CPU reference)" : "", chk->first_expert, chk->first_row,
                 chk->first_col, chk->first_out, chk->first_ref, chk->max_abs_err, chk->rel_err);
    else if (chk->first_row >= 0)
        snprintf(why, len,
                 "check failed: %ld elements outside tolerance%s, first at row %ld col %ld (got %.6g, expected %.6g), "
                 "max abs err %.4g, rel err %.4g",
                 chk->bad, chk->cpu_ref ? " (fp64 CPU reference)" : "", chk->first_row, chk->first_col,
                 chk->first_out, chk->first_ref, chk->max_abs_err, chk->rel_err);
    else
        snprintf(why, len, "check failed: relative error %.4g over %.4g", chk->rel_err, gg_rtol());
}
