/* The order of the MoE layer's routed rows (k4_moe), defined by a counting sort on the CPU: the
 * definition harness/moe.c checks the GPU's permutation against and labs/cpu/route.c's grader
 * checks a student's. k4_moe's routing kernels reach the same order in passes over chunks of
 * tokens (k4_moe/k4_moe_steps.cu); this is what they must give, whatever order their CTAs ran in.
 *
 * Assignment a = token * topk + slot goes to expert expert[a]. Expert e owns routed rows
 * offsets[e] .. offsets[e + 1] (experts + 1 offsets, offsets[0] = 0), its assignments in order
 * of a, that is by (token, slot); row_of[a] is assignment a's row and src_token[row] its token.
 * `next` is scratch for `experts` ints. Every expert[a] must lie in [0, experts), topk >= 1. */
#ifndef K4_PERMUTATION_H
#define K4_PERMUTATION_H
#include <stddef.h>

static inline void k4_permutation(const int *expert, int assignments, int topk, int experts, int *next,
                                  int *offsets, int *row_of, int *src_token) {
    for (int e = 0; e <= experts; ++e) offsets[e] = 0;
    for (int a = 0; a < assignments; ++a) offsets[expert[a] + 1]++;
    for (int e = 0; e < experts; ++e) {
        offsets[e + 1] += offsets[e];
        next[e] = offsets[e];
    }
    for (int a = 0; a < assignments; ++a) {
        const int row = next[expert[a]]++;
        row_of[a] = row;
        src_token[row] = a / topk;
    }
}

/* The same order in the three passes of the routing kernels (k4_moe_steps.cu), as one thread runs
 * them: their CPU twin, which tests/suite_moe.c checks against k4_permutation and the labs' route
 * exercise asks a student to write. Tokens are cut into chunks of chunk_tokens (the last may be
 * shorter), one route CTA each; `count` is [chunks + 1 x experts]; topk >= 1, chunk_tokens >= 1.
 *   k4_chunk_ranks   route_kernel: count[c x experts + e] = chunk c's assignments to e, and
 *                    rank[a] = assignments to expert[a] before a in its chunk
 *   k4_count_scan    count_scan_kernel, in place: row c = each expert's assignments in chunks
 *                    before c, row `chunks` = its total
 *   k4_scatter_rows  scatter_kernel: offsets, row_of[a] = offsets[e] + scanned[c][e] + rank[a],
 *                    src_token[row_of[a]] = a / topk */
static inline void k4_chunk_ranks(const int *expert, int tokens, int topk, int experts, int chunk_tokens, int *count,
                                  int *rank) {
    for (int c = 0; c * chunk_tokens < tokens; ++c) {
        int *seen = count + (size_t)c * experts;
        for (int e = 0; e < experts; ++e) seen[e] = 0;
        const int a1 = (c + 1) * chunk_tokens < tokens ? (c + 1) * chunk_tokens * topk : tokens * topk;
        for (int a = c * chunk_tokens * topk; a < a1; ++a) rank[a] = seen[expert[a]]++;
    }
}

static inline void k4_count_scan(int *count, int chunks, int experts) {
    for (int e = 0; e < experts; ++e) {
        int run = 0;
        for (int c = 0; c < chunks; ++c) {
            const int here = count[(size_t)c * experts + e];
            count[(size_t)c * experts + e] = run;
            run += here;
        }
        count[(size_t)chunks * experts + e] = run;
    }
}

static inline void k4_scatter_rows(const int *expert, const int *rank, const int *scanned, int tokens, int topk,
                                   int experts, int chunk_tokens, int *offsets, int *row_of, int *src_token) {
    const int chunks = (tokens + chunk_tokens - 1) / chunk_tokens;
    offsets[0] = 0;
    for (int e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + scanned[(size_t)chunks * experts + e];
    for (int a = 0; a < tokens * topk; ++a) {
        const int c = a / topk / chunk_tokens, e = expert[a];
        row_of[a] = offsets[e] + scanned[(size_t)c * experts + e] + rank[a];
        src_token[row_of[a]] = a / topk;
    }
}

#endif
