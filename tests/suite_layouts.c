/* CPU checks of the layout functions the kernels and the diagrams share (common/gg_fragments.h,
 * gg_banks.h with gg_swizzle.h, gg_pipeline.h) against entries worked out by hand from the PTX
 * ISA's fragment tables: groupID = lane / 4 and threadID_in_group = lane % 4 place every 8 x 8
 * piece. A wrong map here would be a wrong figure and a wrong epilogue at once. */
#include <check.h>

#include "gg_banks.h"
#include "gg_fragments.h"
#include "gg_pipeline.h"
#include "gg_swizzle.h"

enum { LANES = 32, WARPGROUP = 128 };

/* ---- ldmatrix.x4: lanes 0-7 address matrix 0, 8-15 matrix 1, 16-23 matrix 2, 24-31 matrix 3 */
START_TEST(ldmatrix_address_contract) {
    ck_assert_int_eq(gg_x4_matrix(0), 0);
    ck_assert_int_eq(gg_x4_matrix(13), 1);
    ck_assert_int_eq(gg_x4_matrix_row(13), 5);
    ck_assert_int_eq(gg_x4_matrix(31), 3);
    ck_assert_int_eq(gg_x4_matrix_row(31), 7);
    /* the kernels' order: matrix m is rows 8 (m % 2) .. + 7 of chunk m / 2 of a 16 x 16 block */
    for (int lane = 0; lane < LANES; ++lane) {
        const int m = gg_x4_matrix(lane);
        ck_assert_int_eq(gg_ldsm_x4_row(0, lane), 8 * (m % 2) + gg_x4_matrix_row(lane));
        ck_assert_int_eq(gg_ldsm_x4_chunk(0, lane), m / 2);
    }
    ck_assert_int_eq(gg_ldsm_x4_row(32, 20), 36); /* matrix 2, row 4, offset by the block row */
    ck_assert_int_eq(gg_ldsm_x4_chunk(6, 20), 7);
}
END_TEST

/* Without .trans, register r of lane L is the PTX A fragment a_r of mma.m16n8k16:
 * a0 (g, 2t + e), a1 (g + 8, 2t + e), a2 (g, 2t + 8 + e), a3 (g + 8, 2t + 8 + e). */
START_TEST(ldmatrix_x4_is_the_a_fragment) {
    ck_assert_int_eq(gg_ldsm_x4_elem_row(6, 0, 1, 0), 1); /* lane 6: g = 1, t = 2 */
    ck_assert_int_eq(gg_ldsm_x4_elem_col(6, 0, 1, 0), 5);
    ck_assert_int_eq(gg_ldsm_x4_elem_row(6, 3, 1, 0), 9);
    ck_assert_int_eq(gg_ldsm_x4_elem_col(6, 3, 1, 0), 13);
    for (int lane = 0; lane < LANES; ++lane)
        for (int reg = 0; reg < 4; ++reg)
            for (int e = 0; e < 2; ++e) {
                const int g = lane / 4, t = lane % 4;
                ck_assert_int_eq(gg_ldsm_x4_elem_row(lane, reg, e, 0), g + 8 * (reg % 2));
                ck_assert_int_eq(gg_ldsm_x4_elem_col(lane, reg, e, 0), 2 * t + e + 8 * (reg / 2));
            }
}
END_TEST

/* With .trans from a k x n slice, register r is the B fragment: k = 2t + e (+ 8 for b1),
 * n = g, registers 0, 1 for columns 0-7 and 2, 3 for columns 8-15. */
START_TEST(ldmatrix_x4_trans_is_the_b_fragment) {
    ck_assert_int_eq(gg_ldsm_x4_elem_row(6, 0, 1, 1), 5); /* k */
    ck_assert_int_eq(gg_ldsm_x4_elem_col(6, 0, 1, 1), 1); /* n */
    ck_assert_int_eq(gg_ldsm_x4_elem_row(6, 1, 0, 1), 12);
    ck_assert_int_eq(gg_ldsm_x4_elem_col(31, 2, 1, 1), 15);
    for (int lane = 0; lane < LANES; ++lane)
        for (int reg = 0; reg < 4; ++reg)
            for (int e = 0; e < 2; ++e) {
                const int g = lane / 4, t = lane % 4;
                ck_assert_int_eq(gg_ldsm_x4_elem_row(lane, reg, e, 1), 2 * t + e + 8 * (reg % 2));
                ck_assert_int_eq(gg_ldsm_x4_elem_col(lane, reg, e, 1), g + 8 * (reg / 2));
            }
}
END_TEST

/* Either way, the 32 lanes x 4 registers x 2 elements receive each of the 256 elements once. */
START_TEST(ldmatrix_x4_covers_the_block_once) {
    for (int trans = 0; trans < 2; ++trans) {
        int seen[16][16] = {{0}};
        for (int lane = 0; lane < LANES; ++lane)
            for (int reg = 0; reg < 4; ++reg)
                for (int e = 0; e < 2; ++e)
                    seen[gg_ldsm_x4_elem_row(lane, reg, e, trans)][gg_ldsm_x4_elem_col(lane, reg, e, trans)]++;
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 16; ++c) ck_assert_int_eq(seen[r][c], 1);
    }
}
END_TEST

/* ---- mma.m16n8k16 f32 C/D: c0, c1 at row g, columns 2t, 2t + 1; c2, c3 at row g + 8 ---- */
START_TEST(mma_c_fragment) {
    const int want[][4][2] = {
        /* lane 0 */ {{0, 0}, {0, 1}, {8, 0}, {8, 1}},
        /* lane 5 */ {{1, 2}, {1, 3}, {9, 2}, {9, 3}},
        /* lane 31 */ {{7, 6}, {7, 7}, {15, 6}, {15, 7}},
    };
    const int lanes[] = {0, 5, 31};
    for (int i = 0; i < 3; ++i)
        for (int reg = 0; reg < 4; ++reg) {
            ck_assert_int_eq(gg_mma_c_row(lanes[i], reg), want[i][reg][0]);
            ck_assert_int_eq(gg_mma_c_col(lanes[i], reg), want[i][reg][1]);
        }
    int seen[16][8] = {{0}};
    for (int lane = 0; lane < LANES; ++lane)
        for (int reg = 0; reg < 4; ++reg) seen[gg_mma_c_row(lane, reg)][gg_mma_c_col(lane, reg)]++;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 8; ++c) ck_assert_int_eq(seen[r][c], 1);
}
END_TEST

/* ---- wgmma m64nNk16 f32 D: warp w owns rows 16w .. 16w + 15; for each 8-column chunk j,
 * registers 4j .. 4j + 3 repeat the m16n8 C pattern: row 16w + g + 8 (i / 2), column
 * 8j + 2t + i % 2 for i = reg % 4. */
START_TEST(wgmma_d_fragment) {
    ck_assert_int_eq(gg_wgmma_d_row(0, 0), 0);
    ck_assert_int_eq(gg_wgmma_d_col(0, 0), 0);
    ck_assert_int_eq(gg_wgmma_d_row(37, 6), 25); /* warp 1, lane 5: g = 1, t = 1; j = 1, i = 2 */
    ck_assert_int_eq(gg_wgmma_d_col(37, 6), 10);
    ck_assert_int_eq(gg_wgmma_d_row(127, 127), 63); /* last register of N = 256 */
    ck_assert_int_eq(gg_wgmma_d_col(127, 127), 255);
    ck_assert_int_eq(gg_wgmma_d_row(64, 1), 32); /* warp 2 starts at row 32 */
    ck_assert_int_eq(gg_wgmma_d_col(64, 1), 1);
    const int ns[] = {8, 64, 192, 256};
    static int seen[64][256];
    for (int i = 0; i < 4; ++i) {
        const int n = ns[i];
        for (int r = 0; r < 64; ++r)
            for (int c = 0; c < n; ++c) seen[r][c] = 0;
        for (int t = 0; t < WARPGROUP; ++t)
            for (int reg = 0; reg < n / 2; ++reg) {
                const int row = gg_wgmma_d_row(t, reg), col = gg_wgmma_d_col(t, reg);
                ck_assert_int_eq(row / GG_WGMMA_WARP_ROWS, t / LANES);
                ck_assert_int_lt(col, n);
                seen[row][col]++;
            }
        for (int r = 0; r < 64; ++r)
            for (int c = 0; c < n; ++c) ck_assert_int_eq(seen[r][c], 1);
    }
}
END_TEST

/* ---- banks: 32 banks x 4 bytes; the swizzle diagram's two layouts ---- */
START_TEST(bank_groups_naive_and_swizzled) {
    ck_assert_uint_eq(gg_bank_group(0), 0);
    ck_assert_uint_eq(gg_bank_group(16), 1);
    ck_assert_uint_eq(gg_bank_group(112), 7);
    ck_assert_uint_eq(gg_bank_group(128), 0); /* a 128-byte row spans all 32 banks exactly once */
    ck_assert_uint_eq(gg_bank_group(1024 + 48), 3);
    for (uint32_t row = 0; row < 16; ++row)
        for (uint32_t chunk = 0; chunk < 8; ++chunk) {
            /* unpadded rows: a chunk is in the same group in every row (8-way conflict) */
            ck_assert_uint_eq(gg_bank_group(gg_rowmajor128(row, chunk)), chunk);
            /* 128B swizzle: group chunk XOR (row % 8) */
            ck_assert_uint_eq(gg_bank_group(gg_swizzle128(row, chunk)), chunk ^ (row % 8));
        }
    ck_assert_uint_eq(gg_bank_group(gg_swizzle128(3, 5)), 6);
}
END_TEST

/* ---- the mbarrier ring: use u of stage s is phase u of full[s] (parity u % 2); the producer
 * waits on empty[s] for the parity before it, which on use 0 a fresh barrier already has. */
START_TEST(ring_positions) {
    GgPipe p = {0, 0u};
    const int want[7][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 0}}; /* 3 stages */
    for (int kb = 0; kb < 7; ++kb) {
        ck_assert_int_eq(p.stage, want[kb][0]);
        ck_assert_uint_eq(gg_pipe_full_parity(p), (unsigned)want[kb][1]);
        ck_assert_uint_eq(gg_pipe_empty_parity(p), (unsigned)want[kb][1] ^ 1u);
        gg_pipe_advance(&p, 3);
    }
    for (int stages = 1; stages <= 6; ++stages) {
        GgPipe q = {0, 0u};
        for (int kb = 0; kb < 50; ++kb) {
            ck_assert_int_eq(q.stage, kb % stages);
            ck_assert_uint_eq(gg_pipe_full_parity(q), (unsigned)(kb / stages) % 2u);
            gg_pipe_advance(&q, stages);
        }
    }
}
END_TEST

Suite *layouts_suite(void) {
    Suite *s = suite_create("layouts");
    TCase *tc = tcase_create("ptx_tables");
    tcase_add_test(tc, ldmatrix_address_contract);
    tcase_add_test(tc, ldmatrix_x4_is_the_a_fragment);
    tcase_add_test(tc, ldmatrix_x4_trans_is_the_b_fragment);
    tcase_add_test(tc, ldmatrix_x4_covers_the_block_once);
    tcase_add_test(tc, mma_c_fragment);
    tcase_add_test(tc, wgmma_d_fragment);
    tcase_add_test(tc, bank_groups_naive_and_swizzled);
    tcase_add_test(tc, ring_positions);
    suite_add_tcase(s, tc);
    return s;
}
