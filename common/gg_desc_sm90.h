/* The 64-bit shared-memory matrix descriptor of Hopper's wgmma.mma_async (sm_90a).
 *
 * PTX ISA "Matrix Descriptor Format":
 * https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor
 * and, for what LBO/SBO mean per major-ness, "Leading/Stride Dimension Byte Offset" and
 * "Canonical Layouts" (#asynchronous-warpgroup-level-majorness-supported-by-strides).
 *
 *   bits  0-13  start address     (addr & 0x3FFFF) >> 4
 *   bits 16-29  leading byte offset (LBO) >> 4
 *   bits 32-45  stride byte offset  (SBO) >> 4
 *   bits 49-51  base offset: 0 when the swizzle pattern starts on its own boundary
 *               (1024 B for 128B swizzle), which every tile here does
 *   bits 62-63  swizzle: 0 none, 1 128B, 2 64B, 3 32B (tcgen05 numbers these differently)
 *
 * The two operands of k3_wgmma, both 128B-swizzled by TMA, bf16:
 *   A, K-major: rows of 64 k (128 B), 8-row atoms of 1024 B. SBO = 1024 (next 8 rows);
 *     LBO is not used by swizzled K-major layouts ("assumed 1") and is encoded as 1.
 *     Next k16 step: start + 32 B (the hardware applies the XOR itself).
 *   B, N-major (N contiguous, imm-trans-b = 1): rows of 64 n (128 B) per k, one such
 *     64-column panel per TMA box. LBO = stride between 64-column panels, SBO = 1024
 *     (next 8 k rows). Next k16 step: start + 16 rows x 128 B = 2048 B.
 * Shared by the kernel and the CPU test tests/suite_desc_sm90.c. */
#ifndef GG_DESC_SM90_H
#define GG_DESC_SM90_H
#include <stdint.h>
#include "gg_hd.h"

#define GG_WGMMA_SWIZZLE_NONE 0u
#define GG_WGMMA_SWIZZLE_128B 1u
#define GG_WGMMA_SWIZZLE_64B 2u
#define GG_WGMMA_SWIZZLE_32B 3u

#define GG_WGMMA_SW128_ATOM_BYTES 1024u   /* 8 rows x 128 B: SBO of both operands */
#define GG_WGMMA_KMAJOR_K16_BYTES 32u     /* A: 16 bf16 along a 128-byte row */
#define GG_WGMMA_MNMAJOR_K16_BYTES 2048u  /* B: 16 rows of 128 bytes */

/* matrix-descriptor-encode(x) of the PTX ISA: 14 bits of a 16-byte-granular value. */
GG_HD uint64_t gg_wgmma_desc_encode(uint32_t bytes) { return (uint64_t)((bytes & 0x3FFFFu) >> 4); }

/* All fields; the named encoders below fill them for our two operand layouts. */
GG_HD uint64_t gg_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                             uint32_t base_offset, uint32_t swizzle) {
    uint64_t d = 0;
    d |= gg_wgmma_desc_encode(smem_addr);            /* bits 0-13: start address >> 4 */
    d |= gg_wgmma_desc_encode(lbo_bytes) << 16;      /* bits 16-29: leading byte offset >> 4 */
    d |= gg_wgmma_desc_encode(sbo_bytes) << 32;      /* bits 32-45: stride byte offset >> 4 */
    d |= (uint64_t)(base_offset & 0x7u) << 49;       /* bits 49-51: base offset */
    d |= (uint64_t)(swizzle & 0x3u) << 62;           /* bits 62-63: swizzle mode */
    return d;
}

/* A operand: K-major, 128B swizzle, tile base 1024-byte aligned. */
GG_HD uint64_t gg_wgmma_desc_a_kmajor_sw128(uint32_t smem_addr) {
    return gg_wgmma_desc(smem_addr,
                         16u,                        /* LBO unused here; the ISA assumes 1 (= 16 B) */
                         GG_WGMMA_SW128_ATOM_BYTES,  /* SBO: next group of 8 rows */
                         0u,                         /* pattern starts on a 1024 B boundary */
                         GG_WGMMA_SWIZZLE_128B);
}

/* B operand: N-major (imm-trans-b = 1), 128B swizzle, 64-column panels panel_bytes apart. */
GG_HD uint64_t gg_wgmma_desc_b_mnmajor_sw128(uint32_t smem_addr, uint32_t panel_bytes) {
    return gg_wgmma_desc(smem_addr,
                         panel_bytes,                /* LBO: next 64 columns (next panel) */
                         GG_WGMMA_SW128_ATOM_BYTES,  /* SBO: next group of 8 k rows */
                         0u,                         /* pattern starts on a 1024 B boundary */
                         GG_WGMMA_SWIZZLE_128B);
}

/* The same two layouts with the roles swapped, for k5_backward. dgrad's B is B_e^T, whose
 * reduction index (n) is contiguous: K-major, imm-trans-b = 0, laid out exactly as A above.
 * wgrad's A is A_e^T, whose output-row index (k) is contiguous: M-major, imm-trans-a = 1, laid
 * out exactly as the forward's B (rows of 64 m per reduction row, 64-column panels). */
GG_HD uint64_t gg_wgmma_desc_b_kmajor_sw128(uint32_t smem_addr) {
    return gg_wgmma_desc_a_kmajor_sw128(smem_addr);
}
GG_HD uint64_t gg_wgmma_desc_a_mnmajor_sw128(uint32_t smem_addr, uint32_t panel_bytes) {
    return gg_wgmma_desc_b_mnmajor_sw128(smem_addr, panel_bytes);
}

/* Move the start address by a byte offset (a k16 step) without touching other fields.
 * The caller keeps the address inside shared memory, so the 14-bit field cannot carry. */
GG_HD uint64_t gg_wgmma_desc_advance(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

#endif
