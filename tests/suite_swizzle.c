/* CPU checks of the 128-byte swizzle address function (common/gg_swizzle.h) that the k2
 * kernel's ldmatrix addresses are built from, and of k4's row-by-row TMA gather into it. */
#include <check.h>
#include <stdint.h>

#include "gg_banks.h"
#include "gg_swizzle.h"

enum { ATOM_ROWS = 8, ROW_CHUNKS = 8, BANK_GROUPS = GG_BANK_GROUPS };

/* Every (row, chunk) of one 8 x 8 atom lands on its own 16-byte slot of the atom's 1024
 * bytes, and every slot is used: the swizzle only permutes, it neither loses nor pads. */
START_TEST(test_atom_is_a_bijection) {
    int used[ATOM_ROWS * ROW_CHUNKS] = {0};
    for (uint32_t row = 0; row < ATOM_ROWS; ++row)
        for (uint32_t chunk = 0; chunk < ROW_CHUNKS; ++chunk) {
            const uint32_t off = gg_swizzle128(row, chunk);
            ck_assert_uint_eq(off % GG_SWIZZLE128_CHUNK_BYTES, 0);
            ck_assert_uint_lt(off, ATOM_ROWS * GG_SWIZZLE128_ROW_BYTES);
            /* the chunk stays in its own row: only the position inside the row moves */
            ck_assert_uint_eq(off / GG_SWIZZLE128_ROW_BYTES, row);
            used[off / GG_SWIZZLE128_CHUNK_BYTES] += 1;
        }
    for (int slot = 0; slot < ATOM_ROWS * ROW_CHUNKS; ++slot) ck_assert_int_eq(used[slot], 1);
}
END_TEST

/* One ldmatrix phase reads the same logical chunk from 8 consecutive rows. Those 8 reads
 * must use 8 different bank groups, for every logical chunk and for rows starting at any
 * multiple of 8 (the next atoms repeat the pattern). */
START_TEST(test_column_reads_spread_over_bank_groups) {
    for (uint32_t first_row = 0; first_row < 4 * ATOM_ROWS; first_row += ATOM_ROWS)
        for (uint32_t chunk = 0; chunk < ROW_CHUNKS; ++chunk) {
            int hits[BANK_GROUPS] = {0};
            for (uint32_t r = first_row; r < first_row + ATOM_ROWS; ++r)
                hits[gg_bank_group(gg_swizzle128(r, chunk))] += 1;
            for (int g = 0; g < BANK_GROUPS; ++g) ck_assert_int_eq(hits[g], 1);
        }
}
END_TEST

/* Values worked out by hand: offset = 128 row + 16 (chunk XOR (row mod 8)). */
START_TEST(test_hand_computed_offsets) {
    ck_assert_uint_eq(gg_swizzle128(0, 0), 0);            /* row 0 is not permuted */
    ck_assert_uint_eq(gg_swizzle128(0, 5), 80);           /* 16 * 5 */
    ck_assert_uint_eq(gg_swizzle128(1, 0), 144);          /* 128 + 16 * (0^1 = 1) */
    ck_assert_uint_eq(gg_swizzle128(3, 5), 480);          /* 384 + 16 * (5^3 = 6) */
    ck_assert_uint_eq(gg_swizzle128(7, 7), 896);          /* 896 + 16 * (7^7 = 0) */
    ck_assert_uint_eq(gg_swizzle128(9, 2), 1200);         /* 1152 + 16 * (2^1 = 3) */
    ck_assert_uint_eq(gg_swizzle128(127, 0), 16368);      /* last row of a 128-row A tile */
    /* one atom later, the same pattern 1024 bytes further on */
    ck_assert_uint_eq(gg_swizzle128(8 + 3, 5), 1024 + 480);
}
END_TEST

/* The 128B swizzle as TMA applies it (gg_swizzle.h): on the shared-memory address written, address
 * bits [6:4] XOR bits [9:7]. */
static uint32_t tma_swizzle128_address(uint32_t addr) { return addr ^ (((addr >> 7) & 7u) << 4); }

/* k4's gather (k4_gemm1_swiglu.cu) writes row r of an A stage by a TMA of a one-row box at
 * stage + 128 r. Its chunk c then lands at the swizzled address of stage + 128 r + 16 c, and a
 * 128-row box would have put it at stage + gg_swizzle128(r, c), where the wgmma descriptors look.
 * For every 1024-byte-aligned stage (ring_start and STAGE_BYTES keep them so) the two agree for
 * every row and chunk; 128 bytes off an atom they do not. */
START_TEST(test_one_row_box_lands_like_a_tile_row) {
    static const uint32_t stages[] = {0, 1024, 3 * 49152 + 1024, 227 * 1024 - 16384};
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; ++i)
        for (uint32_t r = 0; r < 128; ++r)
            for (uint32_t c = 0; c < ROW_CHUNKS; ++c) {
                const uint32_t row_box = stages[i] + r * GG_SWIZZLE128_ROW_BYTES + c * GG_SWIZZLE128_CHUNK_BYTES;
                ck_assert_uint_eq(tma_swizzle128_address(row_box), stages[i] + gg_swizzle128(r, c));
            }
    int differ = 0; /* a stage 128 bytes past an atom: the rows land one phase off */
    for (uint32_t r = 0; r < 128; ++r)
        for (uint32_t c = 0; c < ROW_CHUNKS; ++c)
            differ += tma_swizzle128_address(128 + r * 128 + c * 16) != 128 + gg_swizzle128(r, c);
    ck_assert_int_eq(differ, 128 * ROW_CHUNKS);
}
END_TEST

Suite *swizzle_suite(void) {
    Suite *s = suite_create("swizzle128");
    TCase *tc = tcase_create("address");
    tcase_add_test(tc, test_atom_is_a_bijection);
    tcase_add_test(tc, test_column_reads_spread_over_bank_groups);
    tcase_add_test(tc, test_hand_computed_offsets);
    tcase_add_test(tc, test_one_row_box_lands_like_a_tile_row);
    suite_add_tcase(s, tc);
    return s;
}
