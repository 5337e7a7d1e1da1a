/* k4_moe's host side on the CPU: W1's packing map, the workspace carving, what can_implement
 * refuses, the roofline floor, the TMA gather's byte counts; the router's padded N and k split,
 * the routing chunks and the permutation they imply; the routing check's bound
 * (harness/gg_moe_bound.h). (The kernels and the layer itself: tests/test_gpu.c, case moe.) */
#include <check.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gg_moe.h"
#include "harness/gg_moe_bound.h"
#include "k3_wgmma/k3_wgmma.h"
#include "k4_moe/k4_moe.h"
#include "k4_moe/k4_permutation.h"

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
                                 {16384, 4096, 14336, 8, 2, 1}, {4096, 2880, 2880, 128, 4, 1}, {1024, 7168, 2048, 256, 8, 1},
                                 {300, 200, 64, 4096, 8, 1}, {77, 64, 128, 5, 5, 0}};
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
            } b[] = {{w.logits, t ? 4 * t * s->experts * k4_router_splits(s->tokens, s->experts, s->d) : 0},
                     {w.topk_expert, 4 * r}, {w.topk_weight, 4 * r},
                     {w.chunk_count, t ? 4 * ((size_t)k4_route_chunks(s->tokens, s->experts) + 1) * s->experts : 0},
                     {w.row_offsets, 4 * ((size_t)s->experts + 1)}, {w.src_token, 4 * r},
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
    const GgMoeShape empty = {0, 64, 128, 8, 2, 1};
    ck_assert(k4_moe_can_implement(&empty, why, sizeof why));
    /* Any expert count: the router pads its N (no experts % 8 condition). */
    const GgMoeShape odd[] = {{8, 64, 128, 1, 1, 1}, {8, 64, 128, 5, 5, 0}, {8, 64, 128, 12, 2, 1}};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; ++i)
        ck_assert_msg(k4_moe_can_implement(&odd[i], why, sizeof why), "%zu: %s", i, why);
    /* The routing alone goes up to K4_ROUTE_MAX_EXPERTS experts and d % 8. */
    const GgMoeShape route_ok[] = {{8, 200, 0, 4096, 8, 1}, {8, 7168, 0, 512, 8, 1}, {8, 8, 0, 1000, 1000, 0}};
    for (size_t i = 0; i < sizeof route_ok / sizeof route_ok[0]; ++i)
        ck_assert_msg(k4_moe_can_route(&route_ok[i], why, sizeof why), "%zu: %s", i, why);
    const GgMoeShape route_bad[] = {{8, 64, 0, 4097, 8, 1}, {8, 100, 0, 64, 8, 1}, {8, 64, 0, 64, 65, 1}};
    for (size_t i = 0; i < sizeof route_bad / sizeof route_bad[0]; ++i) {
        why[0] = 0;
        ck_assert_msg(!k4_moe_can_route(&route_bad[i], why, sizeof why) && why[0], "route shape %zu", i);
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

/* The router's padded N and its tiles: 16-byte rows, above 64 experts 128-byte ones, the fewest
 * zero columns that gives, a tile width the
 * wgmma wrappers have; the k split covers every k-block once, no split empty, none shorter than
 * K4_ROUTER_MIN_KB unless K is, and no more splits than needed to reach K4_ROUTER_CTAS. The
 * stagger: exactly the routers of 16 experts or fewer, whatever T picks for the tile. */
START_TEST(router_padding_and_split) {
    static const int tokens[] = {1, 100, 256, 1024, 4096, 16384};
    static const int ds[] = {8, 64, 200, 2048, 4096, 7168};
    for (int e = 1; e <= K4_ROUTE_MAX_EXPERTS; e += (e < 70 ? 1 : 61)) {
        const int n = k4_router_n(e);
        const int row = e <= 64 ? 8 : 64; /* columns per row unit: 16 bytes, or 128 above 64 experts */
        ck_assert(n % row == 0 && n >= e && n < e + row);
        for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; ++i) {
            const int t = tokens[i], bn = k4_router_block_n(t, e);
            ck_assert(bn == 64 || bn == 128 || bn == 256);
            const int tiles = k4_router_tiles(t, e);
            ck_assert_int_eq(tiles, (t + 127) / 128 * ((n + bn - 1) / bn));
            if (bn > 64) ck_assert_int_ge(tiles, K4_ROUTER_CTAS); /* wide only when the tiles alone fill */
            if (bn > 64) ck_assert_int_lt(bn / 2, n); /* never a tile of zero columns' work */
            ck_assert_int_eq(k4_router_stagger(e, bn), e <= 16);
            for (size_t j = 0; j < sizeof ds / sizeof ds[0]; ++j) {
                const int d = ds[j], kb = (d + 63) / 64;
                const int per = k4_router_split_kblocks(t, e, d), splits = k4_router_splits(t, e, d);
                ck_assert(per >= 1 && splits >= 1);
                ck_assert_msg((splits - 1) * per < kb && kb <= splits * per, "t %d e %d d %d: %d x %d for %d", t, e,
                              d, splits, per, kb);
                if (kb >= K4_ROUTER_MIN_KB) ck_assert_int_ge(per, K4_ROUTER_MIN_KB);
                if (splits > 1) ck_assert_int_le((long)(splits - 1) * tiles, K4_ROUTER_CTAS);
            }
        }
    }
}
END_TEST

/* The permutation's definition on a worked example (3 tokens, top-2, 3 experts): expert-major,
 * each expert's rows by (token, slot): expert 0's two rows are token 0's second slot, then token
 * 1's first. */
START_TEST(permutation_is_expert_major_by_token_then_slot) {
    const int expert[6] = {1, 0, 0, 2, 1, 2};
    int next[3], offsets[4], row_of[6], src[6];
    k4_permutation(expert, 6, 2, 3, next, offsets, row_of, src);
    const int want_offsets[4] = {0, 2, 4, 6}, want_row_of[6] = {2, 0, 1, 4, 3, 5}, want_src[6] = {0, 1, 0, 2, 1, 2};
    for (int e = 0; e < 4; ++e) ck_assert_int_eq(offsets[e], want_offsets[e]);
    for (int a = 0; a < 6; ++a) {
        ck_assert_int_eq(row_of[a], want_row_of[a]);
        ck_assert_int_eq(src[a], want_src[a]);
    }
}
END_TEST

/* Routing chunks: whole tokens, at least one token for each warp of the route CTA, exactly one
 * token per warp wherever the bounds allow, the chunks cover the tokens exactly, and the count
 * table (chunks x E) and a column (chunks) stay within K4_ROUTE_TABLE and K4_ROUTE_MAX_CHUNKS. */
START_TEST(route_chunks_cover_and_bound_table) {
    static const int tokens[] = {1, 7, 256, 1000, 4096, 16384, 1 << 20};
    static const int experts[] = {1, 8, 64, 128, 256, 512, 3000, 4096};
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; ++i)
        for (size_t k = 0; k < sizeof experts / sizeof experts[0]; ++k) {
            const int t = tokens[i], e = experts[k];
            const int ct = k4_route_chunk_tokens(t, e), chunks = k4_route_chunks(t, e);
            ck_assert_int_ge(ct, K4_ROUTE_THREADS / 32);
            ck_assert((long)(chunks - 1) * ct < t && (long)chunks * ct >= t);
            ck_assert_msg((long long)chunks * e <= K4_ROUTE_TABLE && chunks <= K4_ROUTE_MAX_CHUNKS, "t %d e %d", t, e);
            const int most = K4_ROUTE_TABLE / e < K4_ROUTE_MAX_CHUNKS ? K4_ROUTE_TABLE / e : K4_ROUTE_MAX_CHUNKS;
            if (t <= (K4_ROUTE_THREADS / 32) * most) ck_assert_int_eq(ct, K4_ROUTE_THREADS / 32);
        }
}
END_TEST

/* The three routing kernels' arithmetic on the CPU (their twin in k4_moe/k4_permutation.h: each
 * chunk's ranks and counts, the scan down each expert's column, the scatter), at the chunk length
 * the launchers use, must give the stable sort of the assignments by expert (k4_permutation:
 * expert-major, (token, slot) order inside). */
START_TEST(permutation_chunks_give_a_stable_sort) {
    static const struct { int t, topk, e; } shapes[] = {{1, 1, 1}, {333, 8, 5}, {1000, 2, 8}, {4096, 8, 128},
                                                         {700, 8, 4096}, {5000, 3, 1000}, {300, 64, 64}};
    unsigned seed = 12345;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const int T = shapes[si].t, K = shapes[si].topk, E = shapes[si].e, A = T * K;
        const int ct = k4_route_chunk_tokens(T, E), chunks = k4_route_chunks(T, E);
        int *expert = malloc(sizeof(int) * A), *rank = malloc(sizeof(int) * A), *row = malloc(sizeof(int) * A);
        int *count = calloc((size_t)(chunks + 1) * E, sizeof(int)), *next = malloc(sizeof(int) * E);
        int *offset = malloc(sizeof(int) * (E + 1));
        for (int a = 0; a < A; ++a) { /* skewed: low experts often, so that experts repeat in a chunk */
            seed = seed * 1103515245u + 12345u;
            const unsigned r = seed >> 8;
            expert[a] = (int)(r % 3 ? r % (unsigned)(E < 4 ? E : E / 4) : r % (unsigned)E);
        }
        k4_chunk_ranks(expert, T, K, E, ct, count, rank); /* the kernels' three passes, as one thread */
        k4_count_scan(count, chunks, E);
        int *src = malloc(sizeof(int) * A), *want_row = malloc(sizeof(int) * A), *want_src = malloc(sizeof(int) * A);
        int *want_offset = malloc(sizeof(int) * (E + 1));
        k4_scatter_rows(expert, rank, count, T, K, E, ct, offset, row, src);
        ck_assert_int_eq(offset[E], A);
        k4_permutation(expert, A, K, E, next, want_offset, want_row, want_src); /* the stable sort, directly */
        for (int e = 0; e <= E; ++e) ck_assert_int_eq(offset[e], want_offset[e]);
        for (int a = 0; a < A; ++a) {
            ck_assert_int_eq(row[a], want_row[a]);
            ck_assert_int_eq(src[a], want_src[a]);
        }
        free(src), free(want_row), free(want_src), free(want_offset);
        free(expert), free(rank), free(row), free(count), free(next), free(offset);
    }
}
END_TEST

/* ---- the routing check's bound (harness/gg_moe_bound.h) ---- */

static float to_bf16(float v) { /* truncate to bf16: an exact bf16 value, as the inputs are */
    uint32_t u;
    memcpy(&u, &v, 4);
    u &= 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}

/* The tensor-core model of gg_moe_bound.h: blocks of b products added to the accumulator with
 * every term aligned to the largest exponent and truncated, then the sum truncated to fp32. */
static float block_truncated_sum(const double *p, int k, int b) {
    float acc = 0;
    for (int i0 = 0; i0 < k; i0 += b) {
        const int i1 = i0 + b < k ? i0 + b : k;
        double big = fabs(acc);
        for (int i = i0; i < i1; ++i) big = fmax(big, fabs(p[i]));
        if (big == 0) continue;
        int ex;
        frexp(big, &ex);                       /* big in [2^(ex-1), 2^ex) */
        const double ulp = ldexp(1.0, ex - 24); /* fp32's last place at big's exponent */
        double sum = trunc(acc / ulp) * ulp;
        for (int i = i0; i < i1; ++i) sum += trunc(p[i] / ulp) * ulp;
        fesetround(FE_TOWARDZERO);
        acc = (float)sum;
        fesetround(FE_TONEAREST);
    }
    return acc;
}

/* The route and permute launchers refuse an expert count outside [1, K4_ROUTE_MAX_EXPERTS] and a
 * top-k outside [1, E] with cudaErrorInvalidValue before touching the GPU (no pointer is read). */
START_TEST(route_and_permute_refuse_bad_arguments) {
    const int bad[][2] = {{0, 1}, {K4_ROUTE_MAX_EXPERTS + 1, 8}, {8, 0}, {8, 9}, {8, -1}}; /* {experts, topk} */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const int e = bad[i][0], k = bad[i][1];
        ck_assert_msg(k4_route(NULL, 64, e, 128, k, 1, NULL, NULL, NULL, NULL, 0) == cudaErrorInvalidValue,
                      "k4_route accepted E = %d, top-k = %d", e, k);
        ck_assert_msg(k4_permute(NULL, 64, k, e, NULL, NULL, NULL, NULL, 0) == cudaErrorInvalidValue,
                      "k4_permute accepted E = %d, top-k = %d", e, k);
    }
}
END_TEST

/* Every summation order and rounding the router may use stays within gg_moe_logit_bound of the
 * exact sum, for K up to DeepSeek-V3's d, on random, one-signed (the worst case for a K-long
 * error) and cancelling inputs; and the bound stays below 2^-8 S at those K (tighter than a bf16
 * logit's rounding, which it replaces). */
START_TEST(logit_bound_holds_for_every_order) {
    static const int ks[] = {8, 64, 200, 2048, 7168};
    unsigned seed = 99;
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki)
        for (int kind = 0; kind < 3; ++kind) {
            const int k = ks[ki];
            double *p = malloc(sizeof(double) * k), exact = 0, abs_dot = 0;
            const float scale = ldexpf(4.0f, -(int)lround(log2(sqrt((double)k))));
            for (int i = 0; i < k; ++i) {
                seed = seed * 1664525u + 1013904223u;
                float x = to_bf16((float)((seed >> 8) / 16777216.0 * 2 - 1));
                seed = seed * 1664525u + 1013904223u;
                float w = to_bf16((float)((seed >> 8) / 16777216.0 * 2 - 1) * scale);
                if (kind == 1) x = fabsf(x), w = fabsf(w);                          /* one sign */
                if (kind == 2 && i % 2) x = -(float)p[i - 1] / (w != 0 ? w : 1); /* cancelling pairs */
                x = to_bf16(x);
                p[i] = (double)x * w; /* exact: two 8-bit significands */
                exact += p[i];
                abs_dot += fabs(p[i]);
            }
            const double bound = gg_moe_logit_bound(abs_dot, k);
            ck_assert(bound <= ldexp(abs_dot, -8) + k * 0x1p-126);
            float fwd = 0, rev = 0, rz = 0;
            for (int i = 0; i < k; ++i) fwd += (float)p[i];
            for (int i = k - 1; i >= 0; --i) rev += (float)p[i];
            fesetround(FE_TOWARDZERO);
            for (int i = 0; i < k; ++i) rz += (float)p[i];
            fesetround(FE_TONEAREST);
            const float sums[] = {fwd, rev, rz, block_truncated_sum(p, k, 2), block_truncated_sum(p, k, 8),
                                  block_truncated_sum(p, k, 16)};
            for (size_t q = 0; q < sizeof sums / sizeof sums[0]; ++q)
                ck_assert_msg(fabs(sums[q] - exact) <= bound, "k %d kind %d sum %zu: error %.3g, bound %.3g", k, kind,
                              q, fabs(sums[q] - exact), bound);
            /* split over k: each split's partial by the tensor-core model, the partials added in order */
            for (int splits = 2; splits <= 16 && splits <= k; splits *= 2) {
                const int per = (k + splits - 1) / splits;
                float total = 0;
                for (int z = 0; z * per < k; ++z) total += block_truncated_sum(p + z * per, k - z * per < per ? k - z * per : per, 8);
                ck_assert_msg(fabs(total - exact) <= bound, "k %d kind %d, %d splits: error %.3g, bound %.3g", k, kind,
                              splits, fabs(total - exact), bound);
            }
            free(p);
        }
}
END_TEST

/* The choice is checked exactly: the k largest, best first, ties to the lower expert, NaN last. */
START_TEST(topk_exact_accepts_only_the_top_k) {
    const float lg[] = {0.5f, 2.0f, -1.0f, 2.0f, NAN, 1.0f};
    unsigned char mark[6];
    char why[160];
    const int good[] = {1, 3, 5}, good_all[] = {1, 3, 5, 0, 2, 4};
    ck_assert(gg_moe_topk_exact(lg, 6, good, 3, mark, why, sizeof why));
    ck_assert(gg_moe_topk_exact(lg, 6, good_all, 6, mark, why, sizeof why)); /* the NaN last */
    const int tie_order[] = {3, 1, 5}, missed[] = {1, 3, 0}, twice[] = {1, 1, 3}, range[] = {1, 3, 6},
              nan_first[] = {4, 1, 3};
    const int *bad[] = {tie_order, missed, twice, range, nan_first};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        why[0] = 0;
        ck_assert_msg(!gg_moe_topk_exact(lg, 6, bad[i], 3, mark, why, sizeof why) && why[0], "bad choice %zu", i);
    }
    ck_assert(gg_moe_logit_bound(100.0, 7168) < 0.2 && gg_moe_logit_bound(1.0, 64) < 2e-5);
    ck_assert(isinf(gg_moe_gamma(1 << 22)));
}
END_TEST

/* The fused GEMM1's 64-row paths (a gate/up pair per consumer; consumer 1 idle on a one-pair
 * block) run only where k3's cost model turns adaptive rows on (k4_gemm1_swiglu's launcher): at
 * least one GPU edge layer with F / 64 odd must get them under the built-in calibration, or a
 * recalibration could drop that path from the tests unnoticed. */
START_TEST(edge_layers_reach_the_one_pair_64_row_path) {
    int reached = 0;
    for (int i = 0; i < gg_moe_edge_layer_count; ++i) {
        const GgMoeShape *s = &gg_moe_edge_layers[i].s;
        if (s->tokens == 0 || (s->f / 64) % 2 == 0) continue;
        const GgShape gemm1 = {s->tokens * s->topk, s->experts, s->d, 2 * s->f};
        reached |= k3_wgmma_adaptive_rows(&gemm1, NULL, 2 * K4_PACK_N);
    }
    ck_assert_msg(reached, "no edge layer with F / 64 odd runs 64-row tiles in the fused GEMM1");
}
END_TEST

/* FNV-1a's published values for "" and "a", and three int32s as the Python peers hash them
 * (peer_common.fnv1a64 of struct.pack('<3i', 1, 2, -1)): the routing digests of both sides agree. */
START_TEST(routing_digest_is_fnv1a) {
    ck_assert_uint_eq(gg_fnv1a64("", 0), 0xcbf29ce484222325ull);
    ck_assert_uint_eq(gg_fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
    const int32_t ids[] = {1, 2, -1};
    ck_assert_uint_eq(gg_fnv1a64(ids, sizeof ids), 0x511984b0dc92e782ull);
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
    tcase_add_test(t, edge_layers_reach_the_one_pair_64_row_path);
    tcase_add_test(t, gather_bytes_add_up_to_the_stage);
    tcase_add_test(t, router_padding_and_split);
    tcase_add_test(t, route_chunks_cover_and_bound_table);
    tcase_add_test(t, permutation_is_expert_major_by_token_then_slot);
    tcase_add_test(t, permutation_chunks_give_a_stable_sort);
    tcase_add_test(t, route_and_permute_refuse_bad_arguments);
    tcase_add_test(t, logit_bound_holds_for_every_order);
    tcase_add_test(t, topk_exact_accepts_only_the_top_k);
    tcase_add_test(t, routing_digest_is_fnv1a);
    suite_add_tcase(s, t);
    return s;
}
