/* The edge shapes every kernel must compute right: the GPU tests (tests/test_gpu.c) and
 * `ggemm grade` both run this list. k is a multiple of 64 (every stage's BLOCK_K divides it);
 * n a multiple of 8. */
#include "gg_harness.h"

const GgEdgeShape gg_edge_shapes[] = {
    {"empty experts, 1-row experts, m not a multiple of BM", 256, 384, 8, {0, 1, 130, 0, 64, 1, 257, 3}},
    {"all rows in one expert", 128, 256, 4, {0, 0, 777, 0}},
    {"minimum-aligned k and n", 64, 8, 3, {5, 0, 70}},
    {"n not a multiple of any BLOCK_N", 192, 200, 5, {129, 2, 0, 63, 300}},
    {"fewer rows than experts", 64, 136, 8, {1, 1, 1, 1, 1, 0, 0, 0}},
    {"every expert empty", 64, 64, 3, {0, 0, 0}},
};
const int gg_edge_shape_count = (int)(sizeof gg_edge_shapes / sizeof gg_edge_shapes[0]);
