/* CPU checks of the wgmma shared-memory matrix descriptor encoders (common/gg_desc_sm90.h)
 * that the k3_wgmma kernel builds its A and B operands from. Expected values are worked out by
 * hand from the PTX ISA table "Matrix Descriptor Format":
 *   bits 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset, 62-63 swizzle
 *   (128B swizzle = 1). */
#include <check.h>
#include <stdint.h>

#include "gg_desc_sm90.h"

Suite *desc_sm90_suite(void);

static uint64_t field(uint64_t d, int lo, int width) { return (d >> lo) & ((1ull << width) - 1); }

/* Each field lands in its own bits, and nothing is written outside the five fields. */
START_TEST(test_field_positions) {
    const uint64_t d = gg_wgmma_desc(0x3FFF0u, 0x3FFF0u, 0x3FFF0u, 7u, 3u);
    ck_assert_uint_eq(field(d, 0, 14), 0x3FFFu);
    ck_assert_uint_eq(field(d, 16, 14), 0x3FFFu);
    ck_assert_uint_eq(field(d, 32, 14), 0x3FFFu);
    ck_assert_uint_eq(field(d, 49, 3), 7u);
    ck_assert_uint_eq(field(d, 62, 2), 3u);
    /* reserved bits 14-15, 30-31, 46-48, 52-61 stay zero */
    const uint64_t used = 0x3FFFull | (0x3FFFull << 16) | (0x3FFFull << 32) | (7ull << 49) | (3ull << 62);
    ck_assert_uint_eq(d & ~used, 0);
    ck_assert_uint_eq(d, used);
}
END_TEST

/* matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4: 16-byte units, 18-bit shared window. */
START_TEST(test_encode) {
    ck_assert_uint_eq(gg_wgmma_desc_encode(0), 0);
    ck_assert_uint_eq(gg_wgmma_desc_encode(16), 1);
    ck_assert_uint_eq(gg_wgmma_desc_encode(1024), 64);
    ck_assert_uint_eq(gg_wgmma_desc_encode(8192), 512);
    ck_assert_uint_eq(gg_wgmma_desc_encode(0x40000u + 32), 2); /* bits above 17 are dropped */
    ck_assert_uint_eq(gg_wgmma_desc_encode(15), 0);            /* below 16 B is not encodable */
}
END_TEST

/* A, K-major, 128B swizzle at shared address 1024:
 * start 1024 >> 4 = 0x40; LBO 16 >> 4 = 1 -> 0x1 << 16; SBO 1024 >> 4 = 0x40 -> 0x40 << 32;
 * swizzle 1 << 62. */
START_TEST(test_a_kmajor_hand_value) {
    const uint64_t d = gg_wgmma_desc_a_kmajor_sw128(1024u);
    ck_assert_uint_eq(d, 0x4000004000010040ull);
    ck_assert_uint_eq(field(d, 62, 2), GG_WGMMA_SWIZZLE_128B);
    ck_assert_uint_eq(field(d, 49, 3), 0);
    /* the same layout at the second 64-row half of a 128-row A tile (+8192 B) */
    ck_assert_uint_eq(gg_wgmma_desc_a_kmajor_sw128(1024u + 8192u), 0x4000004000010240ull);
}
END_TEST

/* B, N-major, 128B swizzle at shared address 0x4000 + 16384 (a B tile after a 16 KiB A tile),
 * panels 8192 B apart: start 0x8000 >> 4 = 0x800; LBO 8192 >> 4 = 0x200 -> 0x200 << 16;
 * SBO 0x40 << 32; swizzle 1 << 62. */
START_TEST(test_b_mnmajor_hand_value) {
    const uint64_t d = gg_wgmma_desc_b_mnmajor_sw128(0x8000u, 8192u);
    ck_assert_uint_eq(d, 0x4000004002000800ull);
    ck_assert_uint_eq(field(d, 16, 14) << 4, 8192u); /* LBO: one 64-column panel */
    ck_assert_uint_eq(field(d, 32, 14) << 4, 1024u); /* SBO: 8 k rows of 128 B */
}
END_TEST

/* k16 steps: A moves 32 B along its rows (+2 in the address field), B moves 16 rows of
 * 128 B (+128); no other field changes. */
START_TEST(test_k16_advance) {
    const uint64_t a = gg_wgmma_desc_a_kmajor_sw128(1024u);
    for (uint32_t kk = 0; kk < 4; ++kk) {
        const uint64_t ak = gg_wgmma_desc_advance(a, kk * GG_WGMMA_KMAJOR_K16_BYTES);
        ck_assert_uint_eq(ak, gg_wgmma_desc_a_kmajor_sw128(1024u + 32u * kk));
        ck_assert_uint_eq(field(ak, 0, 14), 0x40u + 2u * kk);
        ck_assert_uint_eq(ak >> 14, a >> 14);
    }
    const uint64_t b = gg_wgmma_desc_b_mnmajor_sw128(0x8000u, 8192u);
    for (uint32_t kk = 0; kk < 4; ++kk) {
        const uint64_t bk = gg_wgmma_desc_advance(b, kk * GG_WGMMA_MNMAJOR_K16_BYTES);
        ck_assert_uint_eq(bk, gg_wgmma_desc_b_mnmajor_sw128(0x8000u + 2048u * kk, 8192u));
        ck_assert_uint_eq(field(bk, 0, 14), 0x800u + 128u * kk);
        ck_assert_uint_eq(bk >> 14, b >> 14);
    }
    /* the last k16 of a 64-deep B stage is 6 KiB in: still inside the 8 KiB panel */
    ck_assert_uint_lt(3u * GG_WGMMA_MNMAJOR_K16_BYTES, 8192u);
}
END_TEST

/* k5_backward's swapped roles: dgrad's K-major B (B_e^T) is encoded as A is; wgrad's M-major A
 * (A_e^T, consumer 1's panel 8 KiB in) as the forward's N-major B, panels 8192 B apart. */
START_TEST(test_swapped_roles) {
    ck_assert_uint_eq(gg_wgmma_desc_b_kmajor_sw128(0x5000u), gg_wgmma_desc_a_kmajor_sw128(0x5000u));
    ck_assert_uint_eq(field(gg_wgmma_desc_b_kmajor_sw128(0x5000u), 32, 14) << 4, 1024u);
    const uint64_t a1 = gg_wgmma_desc_a_mnmajor_sw128(0x4000u + 8192u, 8192u);
    ck_assert_uint_eq(a1, 0x4000004002000600ull);
    ck_assert_uint_eq(a1, gg_wgmma_desc_b_mnmajor_sw128(0x6000u, 8192u));
}
END_TEST

/* The highest shared address an H100/H200 block can use (227 KiB) still fits the field. */
START_TEST(test_address_range) {
    const uint32_t top = 227u * 1024u - 16u;
    const uint64_t d = gg_wgmma_desc_a_kmajor_sw128(top);
    ck_assert_uint_eq(field(d, 0, 14), top >> 4);
    ck_assert_uint_eq(field(d, 16, 14), 1u);
}
END_TEST

Suite *desc_sm90_suite(void) {
    Suite *s = suite_create("desc_sm90");
    TCase *tc = tcase_create("wgmma_descriptor");
    tcase_add_test(tc, test_field_positions);
    tcase_add_test(tc, test_encode);
    tcase_add_test(tc, test_a_kmajor_hand_value);
    tcase_add_test(tc, test_b_mnmajor_hand_value);
    tcase_add_test(tc, test_k16_advance);
    tcase_add_test(tc, test_address_range);
    tcase_add_test(tc, test_swapped_roles);
    suite_add_tcase(s, tc);
    return s;
}
