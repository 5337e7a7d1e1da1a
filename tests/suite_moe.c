/* k4_moe's host side on the CPU: W1's packing map, the workspace carving, what can_implement
 * refuses, the roofline floor, the TMA gather's byte counts. (The permutation and the layer itself: tests/test_gpu.c, case moe.) */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "k4_moe/k4_moe.h"

/* Every packed column comes from exactly one W1 column, and packed column j of gate panel 2p and
 * of up panel 2p + 1 are gate column g and up column F + g of the same g. */
START_TEST(pack_is_a_permutation_with_pairs_one_panel_apart) {
    static const int fs[] = {128, 256, 768, 1024, 14336};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; ++i) {
        const int f = fs[i];
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

/* The H columns of a fused GEMM1 tile are the gate/up pairs of its packed block, in order. */
START_TEST(pack_block_holds_consecutive_h_columns) {
    const int f = 768;
    for (int block = 0; block < 2 * f / (2 * K4_PACK_N); ++block)
        for (int q = 0; q < K4_PACK_N / K4_GLU_PANEL; ++q)
            for (int j = 0; j < K4_GLU_PANEL; ++j) {
                const int c = block * 2 * K4_PACK_N + 2 * q * K4_GLU_PANEL + j;
                ck_assert_int_eq(k4_packed_w1_column(c, f), block * K4_PACK_N + q * K4_GLU_PANEL + j);
            }
}
END_TEST

static int overlaps(uintptr_t a, size_t na, uintptr_t b, size_t nb) { return a < b + nb && b < a + na; }

START_TEST(workspace_buffers_disjoint_aligned_inside) {
    const GgMoeShape shapes[] = {{4096, 2048, 768, 128, 8, 1}, {1, 64, 128, 8, 2, 1}, {0, 64, 128, 8, 2, 1},
                                 {16384, 4096, 14336, 8, 2, 1}};
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
    const GgMoeShape bad[] = {{8, 64, 128, 8, 0, 1},   {8, 64, 128, 8, 9, 1},   {8, 100, 128, 8, 2, 1},
                              {8, 64, 192, 8, 2, 1},   {8, 64, 128, 12, 2, 1},  {8, 64, 128, 264, 2, 1},
                              {-1, 64, 128, 8, 2, 1},  {K4_MAX_ROWS / 2 + 1, 64, 128, 8, 2, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        why[0] = 0;
        ck_assert_msg(!k4_moe_can_implement(&bad[i], why, sizeof why), "bad shape %zu accepted", i);
        ck_assert_msg(why[0], "bad shape %zu refused without a reason", i);
    }
    const GgMoeShape empty = {0, 64, 128, 8, 2, 1};
    ck_assert(k4_moe_can_implement(&empty, why, sizeof why));
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

/* The fused GEMM1's TMA gather (k4_gather_warp_rows / _tx): for every count of valid rows a tile
 * can hold (0..128; a 64-row tile holds at most 64) and both layouts (one gathering warp, four),
 * the warps take the rows in order without gaps or overlap, each within its share, and the bytes
 * they announce on the stage's full barrier add up to exactly what their copies deliver: 128 bytes
 * per row loaded, and the B panels once. One byte more and the stage would never complete; one
 * fewer and the consumers would read a row before it lands. */
START_TEST(gather_bytes_add_up_to_the_stage) {
    const uint32_t b_bytes = 4 * 64 * 64 * 2; /* W1's four 64 x 64 bf16 panels of a stage */
    static const int layouts[] = {1, 4};
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; ++i) {
        const int warps = layouts[i], share = K4_GATHER_ROWS / warps;
        for (int rows = 0; rows <= K4_GATHER_ROWS; ++rows) {
            uint32_t tx = 0;
            int next = 0; /* the first row no warp has taken yet */
            for (int w = 0; w < warps; ++w) {
                const int n = k4_gather_warp_rows(rows, w, warps);
                ck_assert_int_ge(n, 0);
                ck_assert_int_le(n, share);
                if (n > 0) ck_assert_int_eq(w * share, next); /* warp w's rows start at w x share */
                next += n;
                tx += k4_gather_warp_tx(rows, w, warps, b_bytes);
            }
            ck_assert_int_eq(next, rows);
            ck_assert_uint_eq(tx, (uint32_t)rows * K4_GATHER_ROW_BYTES + b_bytes);
        }
    }
    /* by hand: 70 rows over four warps are 32, 32, 6, 0 */
    ck_assert_int_eq(k4_gather_warp_rows(70, 2, 4), 6);
    ck_assert_int_eq(k4_gather_warp_rows(70, 3, 4), 0);
    ck_assert_uint_eq(k4_gather_warp_tx(70, 0, 4, b_bytes), 32 * 128 + b_bytes);
    ck_assert_uint_eq(k4_gather_warp_tx(70, 2, 4, b_bytes), 6 * 128);
    ck_assert_uint_eq(k4_gather_warp_tx(70, 0, 1, b_bytes), 70 * 128 + b_bytes);
}
END_TEST

Suite *moe_suite(void) {
    Suite *s = suite_create("moe");
    TCase *t = tcase_create("host");
    tcase_add_test(t, pack_is_a_permutation_with_pairs_one_panel_apart);
    tcase_add_test(t, pack_block_holds_consecutive_h_columns);
    tcase_add_test(t, workspace_buffers_disjoint_aligned_inside);
    tcase_add_test(t, can_implement_refuses_and_accepts);
    tcase_add_test(t, floor_grows_with_tokens);
    tcase_add_test(t, gather_bytes_add_up_to_the_stage);
    suite_add_tcase(s, t);
    return s;
}
