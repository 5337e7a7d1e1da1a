/* The two descriptors a Blackwell tcgen05.mma reads, as bit-field encoders.
 *
 * tcgen05.mma takes its operands from shared memory through 64-bit "shared memory
 * descriptors" (where a tile starts, how its 8-row groups and 64-element chunks are
 * spaced, which swizzle TMA wrote it with) and is told the shape and types of the product
 * by a 32-bit "instruction descriptor". Both are plain integers built on the CPU or GPU by
 * the functions below; tests/suite_desc_sm100.c checks every field against values worked
 * out by hand from the PTX ISA tables.
 *
 * PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-shared-memory-descriptor
 *          https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instruction-descriptor
 * Careful: the tcgen05 swizzle code is a 3-bit field at bits 61-63 where 128B = 2; the
 * Hopper wgmma descriptor uses a 2-bit field at 62-63 where 128B = 1. They do not mix. */
#ifndef GG_DESC_SM100_H
#define GG_DESC_SM100_H
#include <stdint.h>
#include "gg_hd.h"

/* Swizzle codes of the shared-memory descriptor, bits 61-63 (3, 5 and 7 are invalid). */
#define GG_SM100_SWIZZLE_NONE 0u
#define GG_SM100_SWIZZLE_128B_BASE32B 1u /* 128-byte swizzle with 32-byte atoms */
#define GG_SM100_SWIZZLE_128B 2u         /* CU_TENSOR_MAP_SWIZZLE_128B */
#define GG_SM100_SWIZZLE_64B 4u
#define GG_SM100_SWIZZLE_32B 6u

/* 64-bit shared-memory descriptor.
 *   smem_addr  shared-window address of the tile (16-byte aligned; the swizzle pattern
 *              must start on its natural boundary, 1024 B for 128B, so base offset is 0)
 *   lbo_bytes  leading-dimension byte offset: for MN-major swizzled tiles the distance
 *              between consecutive 64-element (128-byte) MN chunks; unused for K-major
 *              swizzled tiles (pass 16, the documented "assumed 1")
 *   sbo_bytes  stride-dimension byte offset: the distance between consecutive 8-row groups
 *              (K-major) or 8-k-row groups (MN-major); 1024 for 128-byte rows
 *   swizzle    one of GG_SM100_SWIZZLE_* */
GG_HD uint64_t gg_sm100_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                  uint32_t swizzle) {
    uint64_t d = 0;
    d |= (uint64_t)((smem_addr & 0x3FFFFu) >> 4);       /* bits  0-13: start address >> 4 */
    d |= (uint64_t)((lbo_bytes & 0x3FFFFu) >> 4) << 16; /* bits 16-29: leading byte offset >> 4 */
    d |= (uint64_t)((sbo_bytes & 0x3FFFFu) >> 4) << 32; /* bits 32-45: stride byte offset >> 4 */
    d |= (uint64_t)1u << 46;                            /* bits 46-48: fixed constant 0b001 */
    /* bits 49-51: matrix base offset = 0 (pattern starts on its boundary, see above) */
    /* bit  52:    leading-dimension mode = 0, a relative byte offset (not an address) */
    /* bits 53-60: fixed constant 0 */
    d |= (uint64_t)(swizzle & 7u) << 61;                /* bits 61-63: swizzling mode */
    return d;
}

/* 32-bit instruction descriptor for tcgen05.mma .kind::f16 with bf16 A and B and an fp32
 * accumulator, dense, no negation, no saturation.
 *   m, n        the MMA shape: m in {64, 128} for cta_group::1, {128, 256} for cta_group::2
 *               (M is the pair's total); n a multiple of 8 (16 for M = 128/256) up to 256
 *   a_mn_major  0: A is K-major (k contiguous); 1: M-major ("transpose A")
 *   b_mn_major  0: B is K-major; 1: N-major, i.e. B stored k-rows x n-contiguous */
GG_HD uint32_t gg_sm100_idesc_bf16(uint32_t m, uint32_t n, uint32_t a_mn_major,
                                   uint32_t b_mn_major) {
    uint32_t d = 0;
    /* bits  0-1: sparsity selector = 0; bit 2: dense = 0; bit 3: saturate = 0 */
    d |= 1u << 4;                       /* bits  4-5:  D type, 1 = F32 */
    /* bit   6:   reserved */
    d |= 1u << 7;                       /* bits  7-9:  A type, 1 = BF16 (0 would be F16) */
    d |= 1u << 10;                      /* bits 10-12: B type, 1 = BF16 */
    /* bits 13-14: negate A, negate B = 0 */
    d |= (a_mn_major & 1u) << 15;       /* bit  15:    transpose A (1 = M-major) */
    d |= (b_mn_major & 1u) << 16;       /* bit  16:    transpose B (1 = N-major) */
    d |= ((n >> 3) & 0x3Fu) << 17;      /* bits 17-22: N >> 3 */
    /* bit  23:   reserved */
    d |= ((m >> 4) & 0x1Fu) << 24;      /* bits 24-28: M >> 4 */
    /* bit  29:   reserved; bits 30-31: max shift, .ws only = 0 */
    return d;
}

#endif
