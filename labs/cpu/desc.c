/* Exercise: write lab_wgmma_desc and lab_sm100_smem_desc, the shared-memory matrix descriptors
 * that the tensor cores read operands through.
 *
 * lab_wgmma_desc: Hopper's 64-bit wgmma descriptor (k3_wgmma) from a shared address, the
 * leading and stride byte offsets, the base offset and the swizzle mode (0 none, 1 128B, 2 64B,
 * 3 32B). PTX ISA "Matrix Descriptor Format" (asynchronous warpgroup level): which bits hold
 * which field, and in what unit. Repository: gg_wgmma_desc, common/gg_desc_sm90.h.
 *
 * lab_sm100_smem_desc: Blackwell's tcgen05 shared-memory descriptor (k3_tcgen05), base offset
 * 0, relative leading offset; swizzle is the 3-bit tcgen05 code. PTX ISA "tcgen05 Shared Memory
 * Descriptor" (mind its fixed-constant field). Repository: gg_sm100_smem_desc,
 * common/gg_desc_sm100.h.
 * Grade (rebuilds first): cmake --build build --target lab_cpu && build/bin/lab_cpu desc */
#include "lab_cpu.h"

uint64_t lab_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t base_offset,
                        uint32_t swizzle) {
    (void)smem_addr;
    (void)lbo_bytes;
    (void)sbo_bytes;
    (void)base_offset;
    (void)swizzle;
    return 0; /* your code here */
}

uint64_t lab_sm100_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t swizzle) {
    (void)smem_addr;
    (void)lbo_bytes;
    (void)sbo_bytes;
    (void)swizzle;
    return 0; /* your code here */
}
