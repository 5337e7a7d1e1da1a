/* The CPU exercises' grader: each student function against the repository's own on every input
 * listed here; the first difference is the failure message.
 * usage: lab_cpu [swizzle|ldmatrix|desc|eta|wgrad|route]   (no argument: all six)
 *        lab_cpu --list                         each exercise and the functions it asks for
 * Exit 0 all pass, 1 one fails, 2 bad usage or an exercise file newer than this grader. */
#define _POSIX_C_SOURCE 200809L /* stat's nanosecond times */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gg_adaptive.h"
#include "gg_desc_sm100.h"
#include "gg_desc_sm90.h"
#include "gg_fragments.h"
#include "gg_problem.h"
#include "gg_swizzle.h"
#include "gg_wgrad.h"
#include "k4_moe/k4_permutation.h"
#include "lab_cpu.h"

START_TEST(swizzle) {
    for (uint32_t row = 0; row < 64; ++row)
        for (uint32_t chunk = 0; chunk < 8; ++chunk)
            ck_assert_msg(lab_swizzle128(row, chunk) == gg_swizzle128(row, chunk),
                          "lab_swizzle128(row %u, chunk %u) = %u, expected %u", row, chunk,
                          lab_swizzle128(row, chunk), gg_swizzle128(row, chunk));
}
END_TEST

START_TEST(ldmatrix_addresses) {
    for (int base = 0; base <= 48; base += 16)
        for (int lane = 0; lane < 32; ++lane) {
            ck_assert_msg(lab_ldsm_x4_row(base, lane) == gg_ldsm_x4_row(base, lane),
                          "lab_ldsm_x4_row(row0 %d, lane %d) = %d, expected %d", base, lane,
                          lab_ldsm_x4_row(base, lane), gg_ldsm_x4_row(base, lane));
            ck_assert_msg(lab_ldsm_x4_chunk(base / 8, lane) == gg_ldsm_x4_chunk(base / 8, lane),
                          "lab_ldsm_x4_chunk(chunk0 %d, lane %d) = %d, expected %d", base / 8, lane,
                          lab_ldsm_x4_chunk(base / 8, lane), gg_ldsm_x4_chunk(base / 8, lane));
        }
}
END_TEST

START_TEST(mma_accumulator) {
    for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < 4; ++reg) {
            ck_assert_msg(lab_mma_c_row(lane, reg) == gg_mma_c_row(lane, reg),
                          "lab_mma_c_row(lane %d, reg %d) = %d, expected %d", lane, reg,
                          lab_mma_c_row(lane, reg), gg_mma_c_row(lane, reg));
            ck_assert_msg(lab_mma_c_col(lane, reg) == gg_mma_c_col(lane, reg),
                          "lab_mma_c_col(lane %d, reg %d) = %d, expected %d", lane, reg,
                          lab_mma_c_col(lane, reg), gg_mma_c_col(lane, reg));
        }
}
END_TEST

/* Addresses and offsets as the kernels use them, and odd ones that catch a wrong shift or mask. */
static const uint32_t addrs[] = {0x0, 0x400, 0x1800, 0x2C10, 0x3FC00, 0x7FFF0};
static const uint32_t offsets[] = {16, 1024, 2048, 8192, 24576, 0x3FFF0};

START_TEST(wgmma_descriptor) {
    for (size_t a = 0; a < sizeof addrs / sizeof *addrs; ++a)
        for (size_t l = 0; l < sizeof offsets / sizeof *offsets; ++l)
            for (size_t s = 0; s < sizeof offsets / sizeof *offsets; ++s)
                for (uint32_t base = 0; base < 8; base += 7)
                    for (uint32_t sw = 0; sw < 4; ++sw) {
                        const uint64_t got = lab_wgmma_desc(addrs[a], offsets[l], offsets[s], base, sw);
                        const uint64_t want = gg_wgmma_desc(addrs[a], offsets[l], offsets[s], base, sw);
                        ck_assert_msg(got == want,
                                      "lab_wgmma_desc(addr 0x%x, lbo %u, sbo %u, base %u, swizzle %u) = 0x%016llx, "
                                      "expected 0x%016llx",
                                      addrs[a], offsets[l], offsets[s], base, sw, (unsigned long long)got,
                                      (unsigned long long)want);
                    }
}
END_TEST

START_TEST(sm100_descriptor) {
    static const uint32_t swizzles[] = {GG_SM100_SWIZZLE_NONE, GG_SM100_SWIZZLE_128B_BASE32B, GG_SM100_SWIZZLE_128B,
                                        GG_SM100_SWIZZLE_64B, GG_SM100_SWIZZLE_32B};
    for (size_t a = 0; a < sizeof addrs / sizeof *addrs; ++a)
        for (size_t l = 0; l < sizeof offsets / sizeof *offsets; ++l)
            for (size_t s = 0; s < sizeof offsets / sizeof *offsets; ++s)
                for (size_t w = 0; w < sizeof swizzles / sizeof *swizzles; ++w) {
                    const uint64_t got = lab_sm100_smem_desc(addrs[a], offsets[l], offsets[s], swizzles[w]);
                    const uint64_t want = gg_sm100_smem_desc(addrs[a], offsets[l], offsets[s], swizzles[w]);
                    ck_assert_msg(got == want,
                                  "lab_sm100_smem_desc(addr 0x%x, lbo %u, sbo %u, swizzle %u) = 0x%016llx, "
                                  "expected 0x%016llx",
                                  addrs[a], offsets[l], offsets[s], swizzles[w], (unsigned long long)got,
                                  (unsigned long long)want);
                }
}
END_TEST

/* The worklog's splits (16384 rows over 64 experts, s = 0 and 1.2) and small ragged ones. */
START_TEST(tile_model) {
    static int ragged[][8] = {{0, 1, 130, 0, 64, 1, 257, 3}, {0, 0, 777, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 0, 0, 0},
                              {0, 0, 0, 0, 0, 0, 0, 0}, {65, 64, 63, 128, 129, 192, 193, 256}};
    static const int block_m[] = {16, 32, 64, 128}, block_n[] = {64, 128, 192, 256};
    int worklog[64];
    for (int split = 0; split < 7; ++split) {
        const int *m = split < 5 ? ragged[split] : worklog, experts = split < 5 ? 8 : 64, n = split < 5 ? 200 : 2688;
        if (split >= 5) gg_split_rows(16384, 64, split == 5 ? 0.0 : 1.2, worklog);
        GgProblem p;
        ck_assert_int_eq(gg_problem_from_counts(&p, m, experts, 64, n), 0);
        for (int i = 0; i < 4; ++i) {
            const int bm = block_m[i], bn = block_n[i];
            ck_assert_msg(lab_m_tiles(m, experts, bm) == gg_m_tiles(&p, bm),
                          "split %d, block_m %d: lab_m_tiles = %ld, expected %ld", split, bm,
                          lab_m_tiles(m, experts, bm), gg_m_tiles(&p, bm));
            ck_assert_msg(lab_tile_count(m, experts, n, bm, bn) == gg_tile_count(&p, bm, bn),
                          "split %d, n %d, block %d x %d: lab_tile_count = %ld, expected %ld", split, n, bm, bn,
                          lab_tile_count(m, experts, n, bm, bn), gg_tile_count(&p, bm, bn));
            ck_assert_msg(fabs(lab_eta(m, experts, bm) - gg_eta(&p, bm)) < 1e-12,
                          "split %d, block_m %d: lab_eta = %.6f, expected %.6f", split, bm,
                          lab_eta(m, experts, bm), gg_eta(&p, bm));
        }
        gg_problem_free(&p);
    }
    for (int m = 0; m <= 600; ++m) {
        int got128, got64, want128, want64;
        const int got = lab_adaptive_m_tiles(m, &got128, &got64), want = gg_adaptive_m_tiles(m, &want128, &want64);
        ck_assert_msg(got == want && got128 == want128 && got64 == want64,
                      "lab_adaptive_m_tiles(%d) = %d (%d of 128 rows, %d of 64), expected %d (%d, %d)", m, got, got128,
                      got64, want, want128, want64);
    }
}
END_TEST

/* k5_wgrad's work list on ragged splits (empty, 1-row, split and barely split experts) and the
 * worklog's split at 2048 rows, for several tile counts and chunks; every item of every list. */
START_TEST(wgrad_list) {
    static const int ragged[][8] = {{0, 1, 130, 0, 64, 1, 257, 3}, {0, 0, 2049, 0, 0, 0, 0, 0},
                                    {128, 129, 64, 65, 192, 0, 1, 1000}, {0, 0, 0, 0, 0, 0, 0, 0}};
    static const int tiles[] = {1, 3, 4}, chunks[] = {1, 2, 16};
    int worklog[LAB_WGRAD_MAX_EXPERTS];
    gg_split_rows(2048, LAB_WGRAD_MAX_EXPERTS, 1.2, worklog);
    for (int m = 0; m <= 2200; ++m)
        for (int c = 0; c < 3; ++c) {
            GgWgradParams p = gg_wgrad_params(1, m, 8, 8, 8, 8, 1, 0);
            p.chunk = chunks[c];
            ck_assert_msg(lab_wgrad_splits(m, chunks[c]) == gg_wgrad_splits(&p, m),
                          "lab_wgrad_splits(m %d, chunk %d) = %d, expected %d", m, chunks[c],
                          lab_wgrad_splits(m, chunks[c]), gg_wgrad_splits(&p, m));
        }
    for (int split = 0; split < 5; ++split) {
        const int *m = split < 4 ? ragged[split] : worklog, experts = split < 4 ? 8 : LAB_WGRAD_MAX_EXPERTS;
        int offsets[LAB_WGRAD_MAX_EXPERTS + 1], item_start[LAB_WGRAD_MAX_EXPERTS + 1], slot_start[LAB_WGRAD_MAX_EXPERTS + 1];
        for (int t = 0; t < 3; ++t)
            for (int c = 0; c < 3; ++c) {
                GgWgradParams p = gg_wgrad_params(experts, 0, 8, 8, 8, 8, 1, 0);
                p.tiles = p.k_blocks = tiles[t], p.n_blocks = 1, p.chunk = chunks[c];
                long fixups = 0;
                offsets[0] = item_start[0] = slot_start[0] = 0;
                for (int e = 0; e < experts; ++e) {
                    offsets[e + 1] = offsets[e] + m[e];
                    item_start[e + 1] = item_start[e] + gg_wgrad_items(&p, m[e]);
                    slot_start[e + 1] = slot_start[e] + gg_wgrad_slots(&p, m[e]);
                    fixups += gg_wgrad_splits(&p, m[e]) > 1 ? p.tiles : 0;
                }
                p.tokens = offsets[experts];
                ck_assert_msg(lab_wgrad_fixups(m, experts, tiles[t], chunks[c]) == fixups,
                              "split %d, tiles %d, chunk %d: lab_wgrad_fixups = %ld, expected %ld", split, tiles[t],
                              chunks[c], lab_wgrad_fixups(m, experts, tiles[t], chunks[c]), fixups);
                for (int i = 0; i < item_start[experts]; ++i) {
                    const GgWgradItem w = gg_wgrad_at(&p, item_start, slot_start, offsets, i);
                    int e, tile, s, row0, rows;
                    lab_wgrad_item(m, experts, tiles[t], chunks[c], i, &e, &tile, &s, &row0, &rows);
                    ck_assert_msg(e == w.expert && tile == w.tile && s == w.split && row0 == w.row0 && rows == w.rows,
                                  "split %d, tiles %d, chunk %d, item %d: lab_wgrad_item = expert %d tile %d split %d "
                                  "row0 %d rows %d, expected %d %d %d %d %d", split, tiles[t], chunks[c], i, e, tile, s,
                                  row0, rows, w.expert, w.tile, w.split, w.row0, w.rows);
                }
            }
    }
}
END_TEST

/* The deal of a work list to the CTAs: the busiest CTA's blocks under the round robin and the
 * dynamic deal, on the worklog's 2048-row split as k5_wgrad lists it (tiles 4, chunk 2: long
 * splits first, then one-block items), the same items reversed, and lists with empty items, for
 * grids of 1 to LAB_WGRAD_MAX_GRID CTAs. */
START_TEST(wgrad_deal) {
    enum { ITEMS = 600 };
    int worklog[LAB_WGRAD_MAX_EXPERTS], offsets[LAB_WGRAD_MAX_EXPERTS + 1], item_start[LAB_WGRAD_MAX_EXPERTS + 1],
        slot_start[LAB_WGRAD_MAX_EXPERTS + 1], lists[3][ITEMS];
    gg_split_rows(2048, LAB_WGRAD_MAX_EXPERTS, 1.2, worklog);
    GgWgradParams p = gg_wgrad_params(LAB_WGRAD_MAX_EXPERTS, 2048, 8, 8, 8, 8, 1, 0);
    p.tiles = p.k_blocks = 4, p.n_blocks = 1, p.chunk = 2;
    offsets[0] = item_start[0] = slot_start[0] = 0;
    for (int e = 0; e < LAB_WGRAD_MAX_EXPERTS; ++e) {
        offsets[e + 1] = offsets[e] + worklog[e];
        item_start[e + 1] = item_start[e] + gg_wgrad_items(&p, worklog[e]);
        slot_start[e + 1] = slot_start[e] + gg_wgrad_slots(&p, worklog[e]);
    }
    const int items = item_start[LAB_WGRAD_MAX_EXPERTS] < ITEMS ? item_start[LAB_WGRAD_MAX_EXPERTS] : ITEMS;
    for (int t = 0; t < items; ++t) {
        lists[0][t] = gg_wgrad_cdiv(gg_wgrad_at(&p, item_start, slot_start, offsets, t).rows, GG_WGRAD_BLOCK_R);
        lists[1][items - 1 - t] = lists[0][t];
        lists[2][t] = t % 3 ? t % 7 : 0;
    }
    static const int grids[] = {1, 2, 7, 16, 132, LAB_WGRAD_MAX_GRID};
    for (int l = 0; l < 3; ++l)
        for (int g = 0; g < 6; ++g)
            for (int dynamic = 0; dynamic < 2; ++dynamic) {
                int busy[LAB_WGRAD_MAX_GRID] = {0}, draw_at[LAB_WGRAD_MAX_GRID] = {0}, drawn[LAB_WGRAD_MAX_GRID] = {0};
                GgWgradDeal d = {grids[g], dynamic, busy, draw_at, drawn};
                long want = 0;
                for (int t = 0, start; t < items; ++t) {
                    const int c = gg_wgrad_deal(&d, t, lists[l][t], &start);
                    want = busy[c] > want ? busy[c] : want;
                }
                const long got = lab_wgrad_busiest(lists[l], items, grids[g], dynamic);
                ck_assert_msg(got == want, "list %d, grid %d, %s deal: lab_wgrad_busiest = %ld, expected %ld", l,
                              grids[g], dynamic ? "dynamic" : "round-robin", got, want);
            }
}
END_TEST

/* The tile order's rule against gg_wgrad_k_first: both tile heights, shapes with k < n and k > n
 * (the Mixtral-like dW1 and dW2, the worklog's 16k case, a narrow one), an H100's and an H200's
 * L2, a small one where some sweeps never stay, none (0 and -1); every m up to 40000 rows, so
 * each row bound is crossed. A failure is asserted only when one differs: two million passing
 * checks would each cost Check a mark. */
START_TEST(wgrad_order) {
    static const int shapes[][2] = {{4096, 28672}, {14336, 4096}, {1024, 2688}, {320, 14344}, {2048, 768}};
    static const int tile_m[] = {128, 256};
    static const long l2[] = {50L << 20, 60L << 20, 4L << 20, 0, -1};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (int t = 0; t < 2; ++t)
            for (int l = 0; l < 5; ++l) {
                const int k = shapes[s][0], n = shapes[s][1];
                const GgWgradParams p = gg_wgrad_params(1, 1, k, n, tile_m[t], 192, 1, l2[l]); /* the order: m aside */
                for (int m = 0; m <= 40000; ++m) {
                    const int want = gg_wgrad_k_first(&p, m), got = lab_wgrad_k_first(l2[l], k, n, tile_m[t], 192, m);
                    if (got != want)
                        ck_abort_msg("lab_wgrad_k_first(l2_bytes %ld, k %d, n %d, tile_m %d, tile_n 192, m %d) = %d, "
                                     "expected %d",
                                     l2[l], k, n, tile_m[t], m, got, want);
                }
            }
}
END_TEST

/* k4_moe's routing passes, each graded on right inputs (a wrong pass does not fail the next):
 * ranks and counts and the scan against the repository's (k4_chunk_ranks, k4_count_scan), the
 * rows against k4_permutation, on layers with a short last chunk, empty experts, top-k = experts,
 * one token, chunks of one token and a chunk longer than the tokens. */
static int *route_ints(size_t n) {
    int *p = calloc(n ? n : 1, sizeof *p);
    ck_assert_msg(p != NULL, "out of memory");
    return p;
}
/* A student's outputs arrive holding garbage, as the GPU's workspace does between calls: a pass
 * that counts on zeros fails. */
static void route_garbage(int *p, size_t n) {
    for (size_t i = 0; i < n; ++i) p[i] = -1 - (int)(i % 7);
}

START_TEST(route_passes) {
    static const int layers[][4] = {/* tokens, topk, experts, chunk_tokens */
                                    {1, 1, 1, 1},     {5, 2, 8, 2},      {33, 8, 8, 8},   {100, 3, 64, 7},
                                    {257, 4, 256, 8}, {1000, 1, 16, 64}, {300, 2, 5, 32}, {64, 40, 256, 1},
                                    {3, 2, 4, 8}};
    unsigned seed = 12345;
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; ++l) {
        const int T = layers[l][0], K = layers[l][1], E = layers[l][2], ct = layers[l][3], A = T * K;
        const int chunks = (T + ct - 1) / ct;
        int *expert = route_ints(A), *taken = route_ints(E);
        for (int t = 0; t < T; ++t) { /* K distinct experts, skewed toward the low ones */
            for (int e = 0; e < E; ++e) taken[e] = 0;
            for (int j = 0; j < K; ++j) {
                int e;
                do { /* a third of the draws from every expert, the rest from the lowest quarter */
                    seed = seed * 1103515245u + 12345u;
                    const unsigned r = seed >> 8;
                    e = (int)(r / 3 % (r % 3 == 0 ? (unsigned)E : 1u + (unsigned)E / 4));
                } while (taken[e]);
                taken[e] = 1;
                expert[t * K + j] = e;
            }
        }
        /* the repository's passes (tests/suite_moe.c holds them to k4_permutation) */
        const size_t table = (size_t)(chunks + 1) * E;
        int *count = route_ints(table), *rank = route_ints(A), *scanned = route_ints(table);
        k4_chunk_ranks(expert, T, K, E, ct, count, rank);
        memcpy(scanned, count, sizeof(int) * table);
        k4_count_scan(scanned, chunks, E);
        int *got_count = route_ints(table), *got_rank = route_ints(A);
        route_garbage(got_count, table);
        route_garbage(got_rank, (size_t)A);
        lab_route_ranks(expert, T, K, E, ct, got_count, got_rank);
        for (int i = 0; i < chunks * E; ++i)
            ck_assert_msg(got_count[i] == count[i],
                          "layer %zu (T %d, top-%d, E %d, chunks of %d): lab_route_ranks count of chunk %d, expert %d "
                          "= %d, expected %d", l, T, K, E, ct, i / E, i % E, got_count[i], count[i]);
        for (int a = 0; a < A; ++a)
            ck_assert_msg(got_rank[a] == rank[a],
                          "layer %zu (T %d, top-%d, E %d, chunks of %d): lab_route_ranks rank of token %d slot %d "
                          "= %d, expected %d", l, T, K, E, ct, a / K, a % K, got_rank[a], rank[a]);
        memcpy(got_count, count, sizeof(int) * (size_t)chunks * E);
        route_garbage(got_count + (size_t)chunks * E, (size_t)E); /* the totals' row: written by the scan */
        lab_route_scan(got_count, chunks, E);
        for (int i = 0; i < (chunks + 1) * E; ++i)
            ck_assert_msg(got_count[i] == scanned[i], "layer %zu (T %d, E %d, %d chunks): lab_route_scan row %d, "
                          "expert %d = %d, expected %d", l, T, E, chunks, i / E, i % E, got_count[i], scanned[i]);
        int *next = route_ints(E), *offsets = route_ints(E + 1), *row_of = route_ints(A), *src = route_ints(A);
        int *got_offsets = route_ints(E + 1), *got_row_of = route_ints(A), *got_src = route_ints(A);
        k4_permutation(expert, A, K, E, next, offsets, row_of, src);
        route_garbage(got_offsets, (size_t)E + 1);
        route_garbage(got_row_of, (size_t)A);
        route_garbage(got_src, (size_t)A);
        lab_route_rows(expert, rank, scanned, T, K, E, ct, got_offsets, got_row_of, got_src);
        for (int e = 0; e <= E; ++e)
            ck_assert_msg(got_offsets[e] == offsets[e], "layer %zu (T %d, top-%d, E %d): lab_route_rows offsets[%d] = "
                          "%d, expected %d", l, T, K, E, e, got_offsets[e], offsets[e]);
        for (int a = 0; a < A; ++a) {
            ck_assert_msg(got_row_of[a] == row_of[a], "layer %zu (T %d, top-%d, E %d): lab_route_rows row of token %d "
                          "slot %d = %d, expected %d", l, T, K, E, a / K, a % K, got_row_of[a], row_of[a]);
            ck_assert_msg(got_src[a] == src[a], "layer %zu (T %d, top-%d, E %d): lab_route_rows src_token[%d] = %d, "
                          "expected %d", l, T, K, E, a, got_src[a], src[a]);
        }
        int *blocks[] = {expert, taken, count, rank, scanned, got_count, got_rank,
                         next, offsets, row_of, src, got_offsets, got_row_of, got_src};
        for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i) free(blocks[i]);
    }
}
END_TEST

/* Each exercise: its file and the functions the student writes there (what the starter asks for). */
static const struct {
    const char *name, *functions;
} exercises[] = {
    {"swizzle", "lab_swizzle128"},
    {"ldmatrix", "lab_ldsm_x4_row lab_ldsm_x4_chunk lab_mma_c_row lab_mma_c_col"},
    {"desc", "lab_wgmma_desc lab_sm100_smem_desc"},
    {"eta", "lab_m_tiles lab_tile_count lab_eta lab_adaptive_m_tiles"},
    {"wgrad", "lab_wgrad_splits lab_wgrad_fixups lab_wgrad_item lab_wgrad_busiest lab_wgrad_k_first"},
    {"route", "lab_route_ranks lab_route_scan lab_route_rows"},
};
enum { EXERCISES = sizeof exercises / sizeof exercises[0] };

/* LAB_CPU_SOURCES (CMake): the exercise files linked in, ':'-separated. A grade must be of the
 * files as they are now: one changed after this grader was linked would be graded as it was
 * (a restored stub still scoring 100%), so that is refused with the command that rebuilds. */
#ifndef LAB_CPU_SOURCES
#define LAB_CPU_SOURCES ""
#endif
#ifndef LAB_CPU_REBUILD
#define LAB_CPU_REBUILD "cmake --build build --target lab_cpu"
#endif
static int newer(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

static int stale_sources(const char *argv0, const char *only) {
    struct stat self, src;
    if (stat("/proc/self/exe", &self) && stat(argv0, &self)) return 0; /* cannot tell: grade */
    char path[4096];
    for (const char *p = LAB_CPU_SOURCES; *p;) {
        const size_t len = strcspn(p, ":");
        if (len < sizeof path) {
            memcpy(path, p, len);
            path[len] = '\0';
            if (!stat(path, &src) && newer(&src.st_mtim, &self.st_mtim)) {
                fprintf(stderr, "lab_cpu: %s changed after this grader was built; rebuild, then grade: %s && %s%s%s\n",
                        path, LAB_CPU_REBUILD, argv0, only ? " " : "", only ? only : "");
                return 1;
            }
        }
        p += len;
        if (*p) ++p;
    }
    return 0;
}

static Suite *exercise(const char *name, const TTest *a, const TTest *b, const TTest *c) {
    Suite *s = suite_create(name);
    TCase *t = tcase_create(name);
    tcase_add_test(t, a);
    if (b) tcase_add_test(t, b);
    if (c) tcase_add_test(t, c);
    suite_add_tcase(s, t);
    return s;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    if (argc == 2 && !strcmp(only, "--list")) {
        for (int i = 0; i < EXERCISES; ++i) printf("%s.c: %s\n", exercises[i].name, exercises[i].functions);
        return 0;
    }
    int known = !only;
    for (int i = 0; i < EXERCISES; ++i) known |= only && !strcmp(only, exercises[i].name);
    if (argc > 2 || !known) {
        fprintf(stderr, "usage: lab_cpu [swizzle|ldmatrix|desc|eta|wgrad|route | --list]   (no argument: all six)\n");
        return 2;
    }
    if (stale_sources(argv[0], only)) return 2;
    for (int i = 0; i < EXERCISES; ++i) /* what is graded, by name: the functions the starter asks for */
        if (!only || !strcmp(only, exercises[i].name))
            printf("grading %s.c: %s\n", exercises[i].name, exercises[i].functions);
    fflush(stdout); /* before Check's own lines, whichever stream they take */
    SRunner *r = srunner_create(exercise("swizzle", swizzle, NULL, NULL));
    srunner_add_suite(r, exercise("ldmatrix", ldmatrix_addresses, mma_accumulator, NULL));
    srunner_add_suite(r, exercise("desc", wgmma_descriptor, sm100_descriptor, NULL));
    srunner_add_suite(r, exercise("eta", tile_model, NULL, NULL));
    srunner_add_suite(r, exercise("wgrad", wgrad_list, wgrad_deal, wgrad_order));
    srunner_add_suite(r, exercise("route", route_passes, NULL, NULL));
    srunner_run(r, only, NULL, CK_NORMAL);
    const int failed = srunner_ntests_failed(r), run = srunner_ntests_run(r);
    srunner_free(r);
    return failed || run == 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
