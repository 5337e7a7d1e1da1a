/* The edge shapes every kernel must compute right: the GPU tests (tests/test_gpu.c) and
 * `ggemm grade` both run this list. k is a multiple of 64 (every stage's BLOCK_K divides it);
 * n a multiple of 8. Above 256 experts the device schedule groups experts (2 per group from 257,
 * 16 at 4096; common/gg_schedule.h): the last shapes cross those boundaries. gg_tail_shapes:
 * k % 64 != 0, for the kernels that take it. */
#include <stdlib.h>

#include "gg_harness.h"
#include "gg_moe.h"

const GgEdgeShape gg_edge_shapes[] = {
    {"empty experts, 1-row experts, m not a multiple of BM", 256, 384, 8, {0, 1, 130, 0, 64, 1, 257, 3}, 0, 0},
    {"all rows in one expert", 128, 256, 4, {0, 0, 777, 0}, 0, 0},
    {"minimum-aligned k and n", 64, 8, 3, {5, 0, 70}, 0, 0},
    {"n not a multiple of any BLOCK_N", 192, 200, 5, {129, 2, 0, 63, 300}, 0, 0},
    {"fewer rows than experts", 64, 136, 8, {1, 1, 1, 1, 1, 0, 0, 0}, 0, 0},
    {"every expert empty", 64, 64, 3, {0, 0, 0}, 0, 0},
    {"experts long enough to split a weight-gradient reduction (3 and 2 splits, a 1-row last split)", 256, 384, 10,
     {3000, 1400, 600, 200, 64, 3, 0, 1, 1025, 2048}, 0, 0},
    {"257 experts: the last group one expert, holding the most rows", 128, 200, 257,
     {0, 1, 130, 0, 64, 1, 0, 3, 0, 65, 0, 0, 2, 0, 63, 0}, 256, 700},
    {"384 experts, every other one empty", 64, 256, 384, {0, 7, 0, 129, 0, 1, 0, 64, 0, 0, 0, 2, 0, 65, 0, 0}, 0, 0},
    {"512 experts: 256 full groups, most experts empty", 64, 136, 512, {1, 0, 0, 2, 0, 0, 0, 0, 300, 0, 0, 0, 0, 0, 0, 5}, 0, 0},
    {"4096 experts, all rows in one", 64, 192, 4096, {0}, 2050, 1000},
    {"4096 experts, mostly empty, 1-row experts", 64, 72, 4096, {0, 0, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 65}, 0, 0},
};
const int gg_edge_shape_count = (int)(sizeof gg_edge_shapes / sizeof gg_edge_shapes[0]);

/* Shapes that only some stages take (k0..k2 need whole 64-wide k-blocks): a kernel whose
 * can_implement accepts one must compute it right; every k3_wgmma configuration accepts them. */
const GgEdgeShape gg_tail_shapes[] = {
    {"k tail: k = 8, one partial k-block", 8, 200, 3, {130, 0, 64}, 0, 0},
    {"k tail: k % 64 == 8 after whole k-blocks", 136, 264, 4, {1, 257, 0, 64}, 0, 0},
    {"k tail: k % 64 == 56, n not a multiple of any BLOCK_N", 1080, 392, 5, {300, 2, 129, 0, 63}, 0, 0},
};
const int gg_tail_shape_count = (int)(sizeof gg_tail_shapes / sizeof gg_tail_shapes[0]);

int gg_edge_problem(const GgEdgeShape *e, GgProblem *p) {
    int *m = malloc(sizeof(int) * (size_t)(e->experts > 0 ? e->experts : 1));
    if (!m) return 1;
    for (int i = 0; i < e->experts; ++i) m[i] = e->one_rows > 0 && i == e->one ? e->one_rows : e->m[i % 16];
    const int rc = gg_problem_from_counts(p, m, e->experts, e->k, e->n);
    free(m);
    return rc;
}

/* The MoE layer's (k4_moe) edge layers: small enough for the fp64 CPU reference. The routing
 * is the layer's own, so empty and 1-row experts come from few tokens over many experts. */
const GgMoeEdgeLayer gg_moe_edge_layers[] = {
    {"one token", {1, 64, 128, 8, 2, 1}},
    {"no tokens", {0, 64, 128, 8, 2, 1}},
    {"top-k = experts: every expert gets every token", {33, 128, 256, 8, 8, 1}},
    {"top-1; d = 320 leaves GEMM2 a padded column block", {1000, 320, 384, 16, 1, 1}},
    {"top-k above 32: the router writes its slots in two rounds", {100, 64, 128, 256, 40, 1}},
    {"fewer routed rows than experts x 2: empty and 1-row experts, no renormalisation", {40, 64, 128, 64, 3, 0}},
    {"256 experts, rows not a multiple of 64", {257, 64, 128, 256, 4, 1}},
    {"many rows per expert: 128-row tiles and remainders", {1500, 128, 256, 8, 2, 1}},
    {"F = 192: the fused GEMM1's last column block holds one gate/up pair", {1500, 128, 192, 8, 2, 1}},
    {"F = 64: one gate/up pair, the only block", {700, 64, 64, 8, 2, 1}},
    {"gpt-oss-shaped d = F = 2880 (F / 64 odd), few rows: 64-row tiles", {5, 2880, 2880, 16, 4, 1}},
    {"5 experts: E not a multiple of 8", {300, 64, 128, 5, 2, 1}},
    {"1000 experts, top-40: the schedule's two-level index, most experts empty", {100, 64, 192, 1000, 40, 1}},
    {"the most experts (4096), few rows each", {600, 64, 128, 4096, 8, 0}},
};
const int gg_moe_edge_layer_count = (int)(sizeof gg_moe_edge_layers / sizeof gg_moe_edge_layers[0]);
