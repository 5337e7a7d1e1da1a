#include <math.h>
#include <stdlib.h>

#include "gg_adaptive.h"
#include "gg_problem.h"

void gg_split_rows(int tokens, int experts, double skew, int *m) {
    double sum = 0.0;
    for (int e = 0; e < experts; ++e) sum += pow(e + 1.0, -skew);
    long given = 0;
    for (int e = 0; e < experts; ++e) {
        m[e] = (int)floor((double)tokens * pow(e + 1.0, -skew) / sum);
        given += m[e];
    }
    /* floor() leaves fewer than `experts` rows over; hand them out from expert 0 on. */
    for (int e = 0; given < tokens; e = (e + 1) % experts, ++given) m[e] += 1;
}

int gg_problem_from_counts(GgProblem *p, const int *m, int experts, int k, int n) {
    p->experts = experts;
    p->k = k;
    p->n = n;
    p->skew = NAN;
    p->m = malloc(sizeof(int) * (size_t)(experts > 0 ? experts : 1));
    p->offsets = malloc(sizeof(int) * (size_t)(experts + 1));
    if (!p->m || !p->offsets) {
        gg_problem_free(p);
        return 1;
    }
    p->offsets[0] = 0;
    for (int e = 0; e < experts; ++e) {
        p->m[e] = m[e];
        p->offsets[e + 1] = p->offsets[e] + m[e];
    }
    p->tokens = p->offsets[experts];
    return 0;
}

int gg_problem_init(GgProblem *p, int tokens, int experts, int k, int n, double skew) {
    int *m = malloc(sizeof(int) * (size_t)(experts > 0 ? experts : 1));
    if (!m) return 1;
    gg_split_rows(tokens, experts, skew, m);
    int rc = gg_problem_from_counts(p, m, experts, k, n);
    free(m);
    if (rc == 0) p->skew = skew;
    return rc;
}

void gg_problem_free(GgProblem *p) {
    free(p->m);
    free(p->offsets);
    p->m = p->offsets = NULL;
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

long gg_m_tiles(const GgProblem *p, int block_m) {
    long t = 0;
    for (int e = 0; e < p->experts; ++e) {
        if (block_m > 0) {
            t += cdiv(p->m[e], block_m);
        } else {
            int t128, t64;
            t += gg_adaptive_m_tiles(p->m[e], &t128, &t64);
        }
    }
    return t;
}

long gg_scheduled_rows(const GgProblem *p, int block_m) {
    long rows = 0;
    for (int e = 0; e < p->experts; ++e)
        rows += block_m > 0 ? (long)cdiv(p->m[e], block_m) * block_m
                            : gg_adaptive_scheduled_rows(p->m[e]);
    return rows;
}

long gg_tile_count(const GgProblem *p, int block_m, int block_n) {
    return gg_m_tiles(p, block_m) * cdiv(p->n, block_n);
}

double gg_eta(const GgProblem *p, int block_m) {
    long rows = gg_scheduled_rows(p, block_m);
    return rows > 0 ? (double)p->tokens / (double)rows : 1.0;
}

long gg_build_tiles(const GgProblem *p, int block_m, int block_n, GgTile *out) {
    long t = 0;
    for (int e = 0; e < p->experts; ++e)
        for (int r = 0; r < p->m[e]; r += block_m)
            for (int c = 0; c < p->n; c += block_n) {
                out[t].expert = e;
                out[t].row0 = p->offsets[e] + r;
                out[t].rows = p->m[e] - r < block_m ? p->m[e] - r : block_m;
                out[t].col0 = c;
                ++t;
            }
    return t;
}

double gg_useful_flops(const GgProblem *p) { return 2.0 * p->tokens * (double)p->k * p->n; }

double gg_scheduled_flops(const GgProblem *p, int block_m, int block_n) {
    return 2.0 * (double)gg_scheduled_rows(p, block_m) * p->k * (double)cdiv(p->n, block_n) * block_n;
}

double gg_min_bytes(const GgProblem *p) {
    double bytes = 2.0 * p->tokens * (double)p->k + 2.0 * p->tokens * (double)p->n;
    for (int e = 0; e < p->experts; ++e)
        if (p->m[e] > 0) bytes += 2.0 * p->k * (double)p->n;
    return bytes;
}

int gg_m_max(const GgProblem *p) {
    int v = 0;
    for (int e = 0; e < p->experts; ++e) v = p->m[e] > v ? p->m[e] : v;
    return v;
}

int gg_m_min(const GgProblem *p) {
    int v = p->experts > 0 ? p->m[0] : 0;
    for (int e = 0; e < p->experts; ++e) v = p->m[e] < v ? p->m[e] : v;
    return v;
}

int gg_empty_experts(const GgProblem *p) {
    int v = 0;
    for (int e = 0; e < p->experts; ++e) v += p->m[e] == 0;
    return v;
}

void gg_reference_fp64(const GgProblem *p, const uint16_t *a, const uint16_t *b, double *c) {
    for (size_t i = 0; i < (size_t)p->tokens * p->n; ++i) c[i] = 0.0;
    for (int e = 0; e < p->experts; ++e)
        for (int r = p->offsets[e]; r < p->offsets[e + 1]; ++r)
            for (int kk = 0; kk < p->k; ++kk) {
                const double av = gg_bf16_to_f32(a[(size_t)r * p->k + kk]);
                const uint16_t *brow = b + ((size_t)e * p->k + kk) * p->n;
                double *crow = c + (size_t)r * p->n;
                for (int j = 0; j < p->n; ++j) crow[j] += av * gg_bf16_to_f32(brow[j]);
            }
}

GgPassShape gg_pass_shape(const GgProblem *p, GgPass pass) {
    const size_t tk = (size_t)p->tokens * p->k, tn = (size_t)p->tokens * p->n, ekn = (size_t)p->experts * p->k * p->n;
    GgPassShape s;
    switch (pass) {
    case GG_PASS_DGRAD: s = (GgPassShape){tn, ekn, tk, p->k, p->n, 0, 0, 0}; break;
    case GG_PASS_WGRAD: s = (GgPassShape){tk, tn, ekn, p->n, gg_m_max(p), p->k, 0, 0}; break;
    default: s = (GgPassShape){tk, ekn, tn, p->n, p->k, 0, 0, 0}; break;
    }
    s.flops = gg_useful_flops(p);
    /* dgrad moves what the forward moves (dC for C, dA for A); wgrad writes every expert's dB. */
    s.bytes = pass == GG_PASS_WGRAD ? 2.0 * ((double)tk + (double)tn + (double)ekn) : gg_min_bytes(p);
    return s;
}

const char *gg_pass_name(GgPass pass) {
    static const char *const names[] = {"forward", "dgrad", "wgrad"};
    return names[pass];
}

double gg_pass_scheduled_flops(const GgProblem *p, GgPass pass, int block_m, int block_n) {
    const double rows = (double)gg_scheduled_rows(p, block_m);
    if (pass == GG_PASS_DGRAD) return 2.0 * rows * p->n * (double)cdiv(p->k, block_n) * block_n;
    return 2.0 * rows * p->k * (double)cdiv(p->n, block_n) * block_n; /* forward, wgrad */
}

void gg_reference_dgrad_fp64(const GgProblem *p, const uint16_t *dc, const uint16_t *b, double *da) {
    for (int e = 0; e < p->experts; ++e)
        for (int r = p->offsets[e]; r < p->offsets[e + 1]; ++r)
            for (int i = 0; i < p->k; ++i) {
                const uint16_t *brow = b + ((size_t)e * p->k + i) * p->n, *drow = dc + (size_t)r * p->n;
                double sum = 0.0;
                for (int j = 0; j < p->n; ++j) sum += (double)gg_bf16_to_f32(drow[j]) * gg_bf16_to_f32(brow[j]);
                da[(size_t)r * p->k + i] = sum;
            }
}

void gg_reference_wgrad_fp64(const GgProblem *p, const uint16_t *a, const uint16_t *dc, double *db) {
    for (size_t i = 0; i < (size_t)p->experts * p->k * p->n; ++i) db[i] = 0.0;
    for (int e = 0; e < p->experts; ++e)
        for (int r = p->offsets[e]; r < p->offsets[e + 1]; ++r)
            for (int i = 0; i < p->k; ++i) {
                const double av = gg_bf16_to_f32(a[(size_t)r * p->k + i]);
                double *out = db + ((size_t)e * p->k + i) * p->n;
                const uint16_t *drow = dc + (size_t)r * p->n;
                for (int j = 0; j < p->n; ++j) out[j] += av * gg_bf16_to_f32(drow[j]);
            }
}
