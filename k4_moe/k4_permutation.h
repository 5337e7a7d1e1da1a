/* The order of the MoE layer's routed rows (k4_moe), defined by a counting sort on the CPU: the
 * definition harness/moe.c checks the GPU's permutation against and labs/cpu/route.c's grader
 * checks a student's. k4_moe's routing kernels reach the same order in passes over chunks of
 * tokens (k4_moe/k4_moe_steps.cu); this is what they must give, whatever order their CTAs ran in.
 *
 * Assignment a = token * topk + slot goes to expert expert[a]. Expert e owns routed rows
 * offsets[e] .. offsets[e + 1] (experts + 1 offsets, offsets[0] = 0), its assignments in order
 * of a, that is by (token, slot); row_of[a] is assignment a's row and src_token[row] its token.
 * `next` is scratch for `experts` ints. Every expert[a] must lie in [0, experts). */
#ifndef K4_PERMUTATION_H
#define K4_PERMUTATION_H

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

#endif
