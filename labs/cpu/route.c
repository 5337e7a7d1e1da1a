/* Exercise: write lab_route_ranks, lab_route_scan and lab_route_rows: how k4_moe turns each
 * token's top-k experts into the expert-major order of the routed rows, in the three passes its
 * kernels run, none of which depends on the order its CTAs run in.
 *
 * Assignment a = t * topk + j sends token t to expert expert[a] (topk distinct experts a token).
 * The tokens are cut into chunks = ceil(tokens / chunk_tokens) chunks of chunk_tokens (the last
 * may be shorter): one route CTA each. The output arrays arrive holding garbage, as the GPU's
 * workspace does between calls: write every entry.
 *   lab_route_ranks  per chunk c (rows 0 .. chunks - 1 of count, [chunks + 1 x experts]):
 *                    count[c * experts + e] = the chunk's assignments to expert e, and
 *                    rank[a] = how many assignments to expert[a] come before a in its chunk
 *                    (the route kernel: both from its own chunk alone)
 *   lab_route_scan   the count table in place, chunks + 1 rows: row c becomes each expert's
 *                    assignments in the chunks before c, row `chunks` each expert's total
 *                    (count_scan: a scan down each expert's column)
 *   lab_route_rows   from expert, rank and `scanned` (the table lab_route_scan leaves):
 *                    offsets[e], e = 0 .. experts, with offsets[0] = 0 and offsets[experts] =
 *                    tokens x topk: expert e owns routed rows offsets[e] .. offsets[e + 1];
 *                    for assignment a of token t in chunk c = t / chunk_tokens, e = expert[a]:
 *                    row_of[a] = offsets[e] + scanned[c * experts + e] + rank[a], and
 *                    src_token[row_of[a]] = t (scatter: every assignment at once)
 * The result: each expert's rows by (token, slot). Repository: route_kernel, count_scan_kernel and
 * scatter_kernel (k4_moe/k4_moe_steps.cu) on the GPU, their CPU twin k4_chunk_ranks,
 * k4_count_scan and k4_scatter_rows (k4_moe/k4_permutation.h); the order they must give is
 * k4_permutation there, a counting sort, which the grader and harness/moe.c check against. Why
 * three passes and not the counting sort, on a GPU? Which pass needs every chunk's counts before
 * it can start?
 * Grade (rebuilds first): cmake --build build --target lab_cpu && build/bin/lab_cpu route */
#include "lab_cpu.h"

void lab_route_ranks(const int *expert, int tokens, int topk, int experts, int chunk_tokens, int *count,
                     int *rank) {
    (void)expert;
    (void)tokens;
    (void)topk;
    (void)experts;
    (void)chunk_tokens;
    (void)count;
    (void)rank; /* your code here */
}

void lab_route_scan(int *count, int chunks, int experts) {
    (void)count;
    (void)chunks;
    (void)experts; /* your code here */
}

void lab_route_rows(const int *expert, const int *rank, const int *scanned, int tokens, int topk, int experts,
                    int chunk_tokens, int *offsets, int *row_of, int *src_token) {
    (void)expert;
    (void)rank;
    (void)scanned;
    (void)tokens;
    (void)topk;
    (void)experts;
    (void)chunk_tokens;
    (void)offsets;
    (void)row_of;
    (void)src_token; /* your code here */
}
