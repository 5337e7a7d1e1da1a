/* CPU checks of the tcgen05 descriptor encoders (common/gg_desc_sm100.h) that the
 * k3_tcgen05 kernel hands to tcgen05.mma. There is no Blackwell GPU to try them on, so each
 * expected value below was derived by hand from the PTX ISA tables
 * (#tcgen05-shared-memory-descriptor, Table 40; #tcgen05-instruction-descriptor, Table 42),
 * with the arithmetic written next to it. */
#include <check.h>
#include <stdint.h>

#include "gg_desc_sm100.h"

/* Read back bits [lo, lo + width) of a descriptor. */
static uint64_t field64(uint64_t d, int lo, int width) { return (d >> lo) & ((1ull << width) - 1); }
static uint32_t field32(uint32_t d, int lo, int width) { return (d >> lo) & ((1u << width) - 1); }

/* ---------------- shared-memory descriptor ---------------- */

/* k3_tcgen05's A tile: K-major, 128 rows of 64 bf16 = 128 bytes, 128B swizzle, at 0x400.
 *   start  0x400 >> 4 = 0x40                       -> bits 0-13
 *   LBO    16 >> 4 = 1 ("assumed 1")               -> 0x1 << 16 = 0x10000
 *   SBO    1024 >> 4 = 64 = 0x40                   -> 0x40 << 32 = 0x40_0000_0000
 *   fixed  0b001 << 46                             -> 0x4000_0000_0000
 *   swizzle 128B = 2 << 61                         -> 0x4000_0000_0000_0000
 *   sum                                            =  0x4000_4040_0001_0040 */
START_TEST(test_smem_desc_a_kmajor_sw128) {
    const uint64_t d = gg_sm100_smem_desc(0x400, 16, 1024, GG_SM100_SWIZZLE_128B);
    ck_assert_uint_eq(d, 0x4000404000010040ull);
}
END_TEST

/* k3_tcgen05's B tile: N-major, two 64-column panels of 64 k-rows (8 KiB each), at 0x8000.
 *   start  0x8000 >> 4 = 0x800
 *   LBO    8192 >> 4 = 0x200 (next 64-column panel) -> 0x200 << 16 = 0x200_0000
 *   SBO    1024 >> 4 = 0x40 (next 8 k-rows)         -> 0x40_0000_0000
 *   fixed + swizzle as above                        -> 0x4000_4000_0000_0000
 *   sum                                             =  0x4000_4040_0200_0800 */
START_TEST(test_smem_desc_b_nmajor_sw128) {
    const uint64_t d = gg_sm100_smem_desc(0x8000, 8192, 1024, GG_SM100_SWIZZLE_128B);
    ck_assert_uint_eq(d, 0x4000404002000800ull);
}
END_TEST

/* Each field lands where Table 40 puts it, and nothing spills into its neighbours. */
START_TEST(test_smem_desc_field_placement) {
    /* largest encodable values: 0x3FFF0 >> 4 = 0x3FFF fills 14 bits exactly */
    const uint64_t d = gg_sm100_smem_desc(0x3FFF0, 0x3FFF0, 0x3FFF0, GG_SM100_SWIZZLE_32B);
    ck_assert_uint_eq(field64(d, 0, 14), 0x3FFF);
    ck_assert_uint_eq(field64(d, 14, 2), 0);   /* reserved */
    ck_assert_uint_eq(field64(d, 16, 14), 0x3FFF);
    ck_assert_uint_eq(field64(d, 30, 2), 0);   /* reserved */
    ck_assert_uint_eq(field64(d, 32, 14), 0x3FFF);
    ck_assert_uint_eq(field64(d, 46, 3), 1);   /* fixed 0b001 */
    ck_assert_uint_eq(field64(d, 49, 3), 0);   /* base offset */
    ck_assert_uint_eq(field64(d, 52, 1), 0);   /* relative LBO */
    ck_assert_uint_eq(field64(d, 53, 8), 0);   /* fixed 0 */
    ck_assert_uint_eq(field64(d, 61, 3), 6);   /* 32B swizzle */
}
END_TEST

/* Only address bits 4..17 are encoded: (a & 0x3FFFF) >> 4. */
START_TEST(test_smem_desc_address_masking) {
    /* 0x41230 & 0x3FFFF = 0x1230, >> 4 = 0x123 */
    ck_assert_uint_eq(field64(gg_sm100_smem_desc(0x41230, 0, 0, 0), 0, 14), 0x123);
    /* the low 4 bits (below 16-byte alignment) are dropped: 0x40F -> 0x40 */
    ck_assert_uint_eq(field64(gg_sm100_smem_desc(0x40F, 0, 0, 0), 0, 14), 0x40);
    /* a 227 KiB shared-memory address still fits: 0x38C00 >> 4 = 0x38C0 */
    ck_assert_uint_eq(field64(gg_sm100_smem_desc(0x38C00, 0, 0, 0), 0, 14), 0x38C0);
}
END_TEST

/* Swizzle codes: none 0, 128B-with-32B-atoms 1, 128B 2, 64B 4, 32B 6, all at bits 61-63. */
START_TEST(test_smem_desc_swizzle_codes) {
    const uint64_t base = 1ull << 46; /* the fixed field is always there */
    ck_assert_uint_eq(gg_sm100_smem_desc(0, 0, 0, GG_SM100_SWIZZLE_NONE), base);
    ck_assert_uint_eq(gg_sm100_smem_desc(0, 0, 0, GG_SM100_SWIZZLE_128B_BASE32B),
                      base | 0x2000000000000000ull);
    ck_assert_uint_eq(gg_sm100_smem_desc(0, 0, 0, GG_SM100_SWIZZLE_128B),
                      base | 0x4000000000000000ull);
    ck_assert_uint_eq(gg_sm100_smem_desc(0, 0, 0, GG_SM100_SWIZZLE_64B),
                      base | 0x8000000000000000ull);
    ck_assert_uint_eq(gg_sm100_smem_desc(0, 0, 0, GG_SM100_SWIZZLE_32B),
                      base | 0xC000000000000000ull);
    /* read back as a 3-bit field: 128B is 2 here (wgmma's 2-bit field would say 1) */
    ck_assert_uint_eq(field64(gg_sm100_smem_desc(0, 0, 0, GG_SM100_SWIZZLE_128B), 61, 3), 2);
}
END_TEST

/* The kernel steps through K by rebuilding the descriptor at the advanced address.
 * A (K-major): k16 step = 16 bf16 = 32 bytes = +2 in the address field.
 * B (N-major): k16 step = 16 k-rows of 128 bytes = 2048 bytes = +128 in the address field.
 * Only the address field may change. */
START_TEST(test_smem_desc_k_steps) {
    const uint64_t a0 = gg_sm100_smem_desc(0x400, 16, 1024, GG_SM100_SWIZZLE_128B);
    for (uint32_t k = 0; k < 4; ++k) {
        const uint64_t a = gg_sm100_smem_desc(0x400 + 32 * k, 16, 1024, GG_SM100_SWIZZLE_128B);
        ck_assert_uint_eq(a - a0, 2 * k);
    }
    const uint64_t b0 = gg_sm100_smem_desc(0x8000, 8192, 1024, GG_SM100_SWIZZLE_128B);
    for (uint32_t k = 0; k < 4; ++k) {
        const uint64_t b = gg_sm100_smem_desc(0x8000 + 2048 * k, 8192, 1024, GG_SM100_SWIZZLE_128B);
        ck_assert_uint_eq(b - b0, 128 * k);
    }
}
END_TEST

/* ---------------- instruction descriptor, kind::f16 ---------------- */

/* Common part for bf16 x bf16 -> f32: D type 1 << 4 = 0x10, A type 1 << 7 = 0x80,
 * B type 1 << 10 = 0x400; together 0x490. */

/* k3_tcgen05's MMA: M = 256 (2-CTA pair), N = 256, A K-major, B N-major.
 *   0x490 | transpose B 1 << 16 = 0x10000 | N>>3 = 32 << 17 = 0x400000
 *         | M>>4 = 16 << 24 = 0x10000000                 = 0x10410490 */
START_TEST(test_idesc_m256_n256_b_nmajor) {
    ck_assert_uint_eq(gg_sm100_idesc_bf16(256, 256, 0, 1), 0x10410490u);
}
END_TEST

/* M = 128, N = 256, both K-major: 0x490 | 32 << 17 | 8 << 24 = 0x08400490;
 * with B N-major: | 0x10000 = 0x08410490; M = 256 both K-major: 0x10400490. */
START_TEST(test_idesc_other_shapes) {
    ck_assert_uint_eq(gg_sm100_idesc_bf16(128, 256, 0, 0), 0x08400490u);
    ck_assert_uint_eq(gg_sm100_idesc_bf16(128, 256, 0, 1), 0x08410490u);
    ck_assert_uint_eq(gg_sm100_idesc_bf16(256, 256, 0, 0), 0x10400490u);
    /* M = 256, N = 128: N>>3 = 16 << 17 = 0x200000 -> 0x10210490 */
    ck_assert_uint_eq(gg_sm100_idesc_bf16(256, 128, 0, 1), 0x10210490u);
    /* M = 128, N = 16: N>>3 = 2 << 17 = 0x40000 -> 0x08040490 */
    ck_assert_uint_eq(gg_sm100_idesc_bf16(128, 16, 0, 0), 0x08040490u);
    /* transpose A alone is bit 15 = 0x8000: M = 64, N = 8 -> 0x490|0x8000|1<<17|4<<24 */
    ck_assert_uint_eq(gg_sm100_idesc_bf16(64, 8, 1, 0), 0x04028490u);
}
END_TEST

/* Every field of Table 42 read back from one descriptor; reserved bits stay 0. */
START_TEST(test_idesc_field_placement) {
    const uint32_t d = gg_sm100_idesc_bf16(256, 248, 1, 1);
    ck_assert_uint_eq(field32(d, 0, 4), 0);       /* sparsity selector, sparse, saturate */
    ck_assert_uint_eq(field32(d, 4, 2), 1);       /* D = F32 */
    ck_assert_uint_eq(field32(d, 6, 1), 0);       /* reserved */
    ck_assert_uint_eq(field32(d, 7, 3), 1);       /* A = BF16 */
    ck_assert_uint_eq(field32(d, 10, 3), 1);      /* B = BF16 */
    ck_assert_uint_eq(field32(d, 13, 2), 0);      /* no negation */
    ck_assert_uint_eq(field32(d, 15, 1), 1);      /* A M-major */
    ck_assert_uint_eq(field32(d, 16, 1), 1);      /* B N-major */
    ck_assert_uint_eq(field32(d, 17, 6), 31);     /* 248 >> 3 */
    ck_assert_uint_eq(field32(d, 23, 1), 0);      /* reserved */
    ck_assert_uint_eq(field32(d, 24, 5), 16);     /* 256 >> 4 */
    ck_assert_uint_eq(field32(d, 29, 3), 0);      /* reserved, max shift */
}
END_TEST

Suite *desc_sm100_suite(void) {
    Suite *s = suite_create("desc_sm100");
    TCase *smem = tcase_create("smem_descriptor");
    tcase_add_test(smem, test_smem_desc_a_kmajor_sw128);
    tcase_add_test(smem, test_smem_desc_b_nmajor_sw128);
    tcase_add_test(smem, test_smem_desc_field_placement);
    tcase_add_test(smem, test_smem_desc_address_masking);
    tcase_add_test(smem, test_smem_desc_swizzle_codes);
    tcase_add_test(smem, test_smem_desc_k_steps);
    suite_add_tcase(s, smem);
    TCase *instr = tcase_create("instruction_descriptor");
    tcase_add_test(instr, test_idesc_m256_n256_b_nmajor);
    tcase_add_test(instr, test_idesc_other_shapes);
    tcase_add_test(instr, test_idesc_field_placement);
    suite_add_tcase(s, instr);
    return s;
}
