/* The problem model, in plain C: no GPU needed.
 *
 * tokens routed rows are grouped by expert: expert e owns m[e] consecutive rows
 * [offsets[e], offsets[e+1]) of A (tokens x k) and C (tokens x n), and multiplies them by
 * B_e (k x n). The split follows a power law, m_e proportional to (e+1)^-skew. */
#ifndef GG_PROBLEM_H
#define GG_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GgProblem {
    int tokens, experts, k, n;
    double skew;   /* NAN when the split was given explicitly */
    int *m;        /* experts entries */
    int *offsets;  /* experts + 1 entries, offsets[0] = 0, offsets[experts] = tokens */
} GgProblem;

/* Rows per expert summing exactly to tokens: floor(tokens * w_e / sum w) with
 * w_e = (e+1)^-skew, then the leftover rows one each to experts 0, 1, 2, ... */
void gg_split_rows(int tokens, int experts, double skew, int *m);

/* Allocate and fill; 0 on success. free with gg_problem_free. */
int gg_problem_init(GgProblem *p, int tokens, int experts, int k, int n, double skew);
int gg_problem_from_counts(GgProblem *p, const int *m, int experts, int k, int n);
void gg_problem_free(GgProblem *p);

/* Row-tile statistics for a block of BLOCK_M rows (block_m = 0 means adaptive 128/64). */
long gg_m_tiles(const GgProblem *p, int block_m);              /* sum_e ceil(m_e / BM) */
long gg_scheduled_rows(const GgProblem *p, int block_m);       /* rows the hardware computes */
long gg_tile_count(const GgProblem *p, int block_m, int block_n);
double gg_eta(const GgProblem *p, int block_m);                /* useful rows / scheduled rows */

/* The flat, expert-major tile list: for each expert, each row block, each column block.
 * Tiles never cross an expert boundary; empty experts give none. out must hold
 * gg_tile_count() entries; returns the count written. block_m must be > 0. */
long gg_build_tiles(const GgProblem *p, int block_m, int block_n, GgTile *out);

double gg_useful_flops(const GgProblem *p);                              /* 2 tokens k n */
double gg_scheduled_flops(const GgProblem *p, int block_m, int block_n); /* whole tiles */
/* Compulsory DRAM bytes: A once, B once per non-empty expert, C once. */
double gg_min_bytes(const GgProblem *p);

int gg_m_max(const GgProblem *p);
int gg_m_min(const GgProblem *p);
int gg_empty_experts(const GgProblem *p);

/* fp64 reference on the CPU: C[r][j] = sum_k A[r][k] B_e[k][j] for the expert e owning r.
 * a, b are bf16 bit patterns as laid out on the device; c has tokens x n doubles. */
void gg_reference_fp64(const GgProblem *p, const uint16_t *a, const uint16_t *b, double *c);

/* Elements of a launch's a, b and c (GgLaunch) for pass `pass` (GgPass) of problem p, the
 * output's row length and reduction length (the check's tolerance grows with the latter; for
 * wgrad, the longest expert), and the roofline's two numbers. The one place the passes' shapes
 * are spelled out. Compulsory bytes: every input read once, the output written once:
 *   forward  A, B_e of each non-empty expert, C              2 (tk + e' kn + tn)
 *   dgrad    dC, B_e of each non-empty expert, dA            2 (tn + e' kn + tk)
 *   wgrad    A, dC, and dB_e of EVERY expert (an empty one   2 (tk + tn + E kn)
 *            is written as zeros)
 * (t tokens, e' non-empty experts, E experts, bf16). */
typedef struct GgPassShape {
    size_t a, b, c;   /* elements */
    int c_cols;       /* row length of c: n (forward, wgrad), k (dgrad) */
    int reduction;    /* k (forward), n (dgrad), max m_e (wgrad) */
    int expert_rows;  /* rows of c per expert when c is one matrix per expert: k (wgrad's dB_e);
                         0 when c's rows are tokens (forward, dgrad) */
    double flops;     /* useful: 2 tokens k n in every pass */
    double bytes;     /* compulsory DRAM bytes (above) */
} GgPassShape;
GgPassShape gg_pass_shape(const GgProblem *p, GgPass pass);
/* The pass's name as --pass and `ggemm list` spell it: forward, dgrad, wgrad. */
const char *gg_pass_name(GgPass pass);
/* The FLOPs whole tiles of block_m ragged rows x block_n output columns compute: the ragged
 * rows padded to block_m per expert (forward, dgrad: output rows; wgrad: reduction rows, the
 * caller passing its 64-row stage, GgKernelInfo.block_k), times the other dimension, times the
 * output columns padded to block_n. gg_scheduled_flops for the forward. */
double gg_pass_scheduled_flops(const GgProblem *p, GgPass pass, int block_m, int block_n);

/* fp64 references on the CPU of the two backward passes, laid out as GgPass says: dgrad from
 * dc (tokens x n) and b into da (tokens x k); wgrad from a and dc into db (experts x k x n),
 * zeros for an empty expert. */
void gg_reference_dgrad_fp64(const GgProblem *p, const uint16_t *dc, const uint16_t *b, double *da);
void gg_reference_wgrad_fp64(const GgProblem *p, const uint16_t *a, const uint16_t *dc, double *db);

/* Host bf16 (round to nearest even; NaN stays NaN). */
uint16_t gg_f32_to_bf16(float f);
float gg_bf16_to_f32(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif
