/* k4_moe's host side on the CPU: W1's packing map, the workspace carving, what can_implement
 * refuses, the roofline floor. (The permutation and the layer itself: tests/test_gpu.c, case moe.) */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gg_moe.h"
#include "k4_moe/k4_moe.h"

/* Expert widths F: multiples of 128 (whole 256-column blocks) and of 64 only (F / 64 odd: the last
 * block holds one gate/up pair), the model table's among them. */
static const int widths[] = {64, 128, 192, 256, 320, 768, 1024, 1408, 1536, 2048, 2880, 14336};

/* Every packed column comes from exactly one W1 column, and packed column j of gate panel 2p and
 * of up panel 2p + 1 are gate column g and up column F + g of the same g. */
START_TEST(pack_is_a_permutation_with_pairs_one_panel_apart) {
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
        const int f = widths[i];
        char *seen = calloc(2 * (size_t)f, 1);
        for (int c = 0; c < 2 * f; ++c) {
            const int src = k4_packed_w1_column(c, f);
            ck_assert_int_ge(src, 0);
            ck_assert_int_lt(src, 2 * f);
            ck_assert_int_eq(seen[src], 0);
            seen[src] = 1;
            const int panel = c / K4_GLU_PANEL;
            if (panel % 2 == 0) { /* gate: its up column is one panel to the right */
                ck_assert_int_lt(src, f);
                ck_assert_int_eq(k4_packed_w1_column(c + K4_GLU_PANEL, f), f + src);
            }
        }
        free(seen);
    }
}
END_TEST

/* The fused GEMM1's column blocks (2 K4_PACK_N packed columns from col0 = 0, 256, ...): block
 * col0 holds k4_block_pairs gate/up pairs, 2 everywhere but in the last block when F / 64 is odd
 * (1); pair q's gate panel is packed columns col0 + 128 q + [0, 64), its up panel the next 64, and
 * together they give H columns col0 / 2 + 64 q + [0, 64). Over the blocks, every H column once. */
START_TEST(blocks_cover_h_once_with_a_half_last_block) {
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
        const int f = widths[i], block = 2 * K4_PACK_N;
        char *covered = calloc((size_t)f, 1);
        int blocks = 0, half_blocks = 0;
        for (int col0 = 0; col0 < 2 * f; col0 += block, ++blocks) {
            const int pairs = k4_block_pairs(col0, f);
            ck_assert_int_ge(pairs, 1);
            ck_assert_int_le(pairs, K4_PACK_N / K4_GLU_PANEL);
            if (pairs < K4_PACK_N / K4_GLU_PANEL) { /* only the last block, only when F / 64 is odd */
                ck_assert_int_ge(col0 + block, 2 * f);
                ck_assert_int_eq(f / K4_GLU_PANEL % 2, 1);
                ++half_blocks;
            }
            for (int q = 0; q < pairs; ++q)
                for (int j = 0; j < K4_GLU_PANEL; ++j) {
                    const int gate = col0 + 2 * q * K4_GLU_PANEL + j, up = gate + K4_GLU_PANEL;
                    const int hc = col0 / 2 + q * K4_GLU_PANEL + j;
                    ck_assert_int_lt(up, 2 * f);
                    ck_assert_int_eq(k4_packed_w1_column(gate, f), hc);
                    ck_assert_int_eq(k4_packed_w1_column(up, f), f + hc);
                    ck_assert_int_eq(covered[hc]++, 0);
                }
        }
        for (int hc = 0; hc < f; ++hc) ck_assert_msg(covered[hc] == 1, "F = %d: H column %d not covered", f, hc);
        ck_assert_int_eq(blocks, (2 * f + block - 1) / block);
        ck_assert_int_eq(half_blocks, f / K4_GLU_PANEL % 2);
        free(covered);
    }
}
END_TEST

/* Every B box of every block starts on a panel inside the packed row [0, 2F) and ends inside it
 * (a box overlaps the tensor: full bytes), and the boxes of the block's own pairs are its own
 * panels, unmoved. */
START_TEST(w1_boxes_overlap_the_packed_row) {
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
        const int f = widths[i];
        for (int col0 = 0; col0 < 2 * f; col0 += 2 * K4_PACK_N)
            for (int p = 0; p < 2 * K4_PACK_N / K4_GLU_PANEL; ++p) {
                const int c = k4_w1_box_col(col0, p, f);
                ck_assert_int_eq(c % K4_GLU_PANEL, 0);
                ck_assert_int_ge(c, 0);
                ck_assert_int_le(c + K4_GLU_PANEL, 2 * f);
                if (p < 2 * k4_block_pairs(col0, f)) ck_assert_int_eq(c, col0 + p * K4_GLU_PANEL);
            }
    }
}
END_TEST

static int overlaps(uintptr_t a, size_t na, uintptr_t b, size_t nb) { return a < b + nb && b < a + na; }

START_TEST(workspace_buffers_disjoint_aligned_inside) {
    const GgMoeShape shapes[] = {{4096, 2048, 768, 128, 8, 1}, {1, 64, 128, 8, 2, 1}, {0, 64, 128, 8, 2, 1},
                                 {16384, 4096, 14336, 8, 2, 1}, {4096, 2880, 2880, 128, 4, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int fused = 0; fused < 2; ++fused) {
            const GgMoeShape *s = &shapes[i];
            const size_t total = k4_moe_workspace_bytes(s, fused), t = s->tokens, r = t * s->topk;
            GgMoeWorkspace w;
            char *base = (char *)(uintptr_t)4096; /* carving is arithmetic: no memory is touched */
            k4_moe_workspace(base, s, fused, &w);
            const struct {
                const void *p;
                size_t bytes;
            } b[] = {{w.logits, 2 * t * s->experts}, {w.topk_expert, 4 * r}, {w.topk_weight, 4 * r},
                     {w.chunk_base, 4 * ((r + K4_CHUNK - 1) / K4_CHUNK) * s->experts},
                     {w.row_offsets, 4 * ((size_t)s->experts + 1)}, {w.route_offsets, 8}, {w.src_token, 4 * r},
                     {w.row_of, 4 * r}, {w.xg, fused ? 0 : 2 * r * s->d}, {w.u, fused ? 0 : 4 * r * s->f},
                     {w.h, 2 * r * s->f}, {w.y, 2 * r * s->d}};
            const int n = (int)(sizeof b / sizeof b[0]);
            for (int x = 0; x < n; ++x) {
                if (!b[x].bytes) continue;
                const uintptr_t p = (uintptr_t)b[x].p;
                ck_assert_msg(p % 256 == 0, "buffer %d not 256-byte aligned", x);
                ck_assert_msg(p >= (uintptr_t)base && p + b[x].bytes <= (uintptr_t)base + total, "buffer %d outside", x);
                for (int y = 0; y < x; ++y)
                    if (b[y].bytes) ck_assert_msg(!overlaps(p, b[x].bytes, (uintptr_t)b[y].p, b[y].bytes), "%d, %d overlap", x, y);
            }
            if (fused) ck_assert_ptr_null(w.xg);
        }
}
END_TEST

START_TEST(can_implement_refuses_and_accepts) {
    char why[256];
    for (int m = 0; m < gg_moe_model_count; ++m) {
        const GgMoeModel *md = &gg_moe_models[m];
        const GgMoeShape s = {16384, md->d, md->f, md->experts, md->topk, md->renorm};
        ck_assert_msg(k4_moe_can_implement(&s, why, sizeof why), "%s: %s", md->name, why);
    }
    /* F and d: any multiple of 64, F / 64 odd included (a one-pair last block); any expert count
     * from 1 to K4_MAX_EXPERTS, multiple of 8 or not. */
    const GgMoeShape good[] = {{8, 64, 64, 8, 2, 1},       {8, 64, 192, 8, 2, 1},     {8, 2880, 2880, 128, 4, 1},
                               {8, 7168, 2048, 256, 8, 1}, {8, 4096, 1536, 128, 8, 1}, {0, 64, 128, 8, 2, 1},
                               {8, 64, 128, 1, 1, 1},      {8, 64, 128, 5, 2, 1},     {8, 64, 128, 1000, 40, 1},
                               {8, 7168, 2048, 384, 8, 1}, {8, 64, 128, K4_MAX_EXPERTS, 8, 1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i)
        ck_assert_msg(k4_moe_can_implement(&good[i], why, sizeof why), "good shape %zu refused: %s", i, why);
    /* Each refusal is one line that names what is wrong. */
    const struct {
        GgMoeShape s;
        const char *says;
    } bad[] = {
        {{8, 64, 128, 8, 0, 1}, "1 <= topk <= experts"},
        {{8, 64, 128, 8, 9, 1}, "1 <= topk <= experts"},
        {{8, 100, 128, 8, 2, 1}, "d % 64 == 0"},
        {{8, 0, 128, 8, 2, 1}, "d % 64 == 0"},
        {{8, 64, 96, 8, 2, 1}, "F % 64 == 0"},
        {{8, 64, 32, 8, 2, 1}, "F % 64 == 0"},
        {{8, 64, 2880 + 32, 8, 2, 1}, "F % 64 == 0"},
        {{8, 64, 128, 0, 1, 1}, "experts"},
        {{8, 64, 128, K4_MAX_EXPERTS + 1, 2, 1}, "experts"},
        {{-1, 64, 128, 8, 2, 1}, "tokens"},
        {{K4_MAX_ROWS / 2 + 1, 64, 128, 8, 2, 1}, "routed rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        why[0] = 0;
        ck_assert_msg(!k4_moe_can_implement(&bad[i].s, why, sizeof why), "bad shape %zu accepted", i);
        ck_assert_msg(strstr(why, bad[i].says), "bad shape %zu: '%s' does not say '%s'", i, why, bad[i].says);
        ck_assert_msg(!strchr(why, '\n'), "bad shape %zu: more than one line", i);
    }
}
END_TEST

/* The GPU test's edge layers (harness/edge_shapes.c) are layers k4_moe runs, and small enough
 * for the fp64 CPU reference that the test asks for; among them F / 64 odd and E % 8 != 0. */
START_TEST(edge_layers_run_and_fit_the_cpu_reference) {
    char why[256];
    int odd_pairs = 0, ragged_experts = 0, two_level = 0;
    for (int i = 0; i < gg_moe_edge_layer_count; ++i) {
        const GgMoeShape *s = &gg_moe_edge_layers[i].s;
        ck_assert_msg(k4_moe_can_implement(s, why, sizeof why), "'%s': %s", gg_moe_edge_layers[i].what, why);
        ck_assert_msg((double)s->tokens * s->topk * s->d * s->f * 3 <= (double)GG_MOE_CPU_REF_MACS,
                      "'%s' is too large for the CPU reference", gg_moe_edge_layers[i].what);
        odd_pairs += s->f / K4_GLU_PANEL % 2;
        ragged_experts += s->experts % 8 != 0;
        two_level += s->experts > 256;
    }
    ck_assert_int_gt(odd_pairs, 0);
    ck_assert_int_gt(ragged_experts, 0);
    ck_assert_int_gt(two_level, 0);
}
END_TEST

START_TEST(floor_grows_with_tokens) {
    double last = 0;
    for (int t = 256; t <= 65536; t *= 2) {
        const GgMoeShape s = {t, 2048, 768, 128, 8, 1};
        const double f = k4_moe_floor_us(&s, 800, 4000);
        ck_assert(f > last);
        last = f;
        ck_assert(k4_moe_gemm_flops(&s) == 2.0 * t * 2048 * 128 + 2.0 * t * 8 * 2048 * 768 * 3);
    }
}
END_TEST

Suite *moe_suite(void) {
    Suite *s = suite_create("moe");
    TCase *t = tcase_create("host");
    tcase_add_test(t, pack_is_a_permutation_with_pairs_one_panel_apart);
    tcase_add_test(t, blocks_cover_h_once_with_a_half_last_block);
    tcase_add_test(t, w1_boxes_overlap_the_packed_row);
    tcase_add_test(t, workspace_buffers_disjoint_aligned_inside);
    tcase_add_test(t, can_implement_refuses_and_accepts);
    tcase_add_test(t, edge_layers_run_and_fit_the_cpu_reference);
    tcase_add_test(t, floor_grows_with_tokens);
    suite_add_tcase(s, t);
    return s;
}
