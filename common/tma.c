#include "gg_tma.h"

#include <stdio.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include "gg_check.h"

static PFN_cuTensorMapEncodeTiled_v12000 encode_fn(void) {
    static PFN_cuTensorMapEncodeTiled_v12000 fn;
    if (!fn) {
        void *p = NULL;
        enum cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            return NULL;
        fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    }
    return fn;
}

int gg_tmap_bf16(CUtensorMap *map, const void *base, int rank, const uint64_t *dims,
                 const uint64_t *strides, const uint32_t *box, CUtensorMapSwizzle swizzle) {
    PFN_cuTensorMapEncodeTiled_v12000 fn = encode_fn();
    if (!fn) {
        fprintf(stderr, "gg_tmap_bf16: cuTensorMapEncodeTiled not available from the driver\n");
        return 1;
    }
    cuuint64_t d[3], s[2];
    cuuint32_t b[3], e[3] = {1, 1, 1};
    for (int i = 0; i < rank; ++i) {
        d[i] = dims[i];
        b[i] = box[i];
        if (i + 1 < rank) s[i] = strides[i];
    }
    CU_CHECK(fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (cuuint32_t)rank, (void *)base, d, s, b, e,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return 0;
}

int gg_launch_aligned16(const GgLaunch *p, const char *who) {
    if (((uintptr_t)p->a | (uintptr_t)p->b | (uintptr_t)p->c) % 16 == 0) return 1;
    fprintf(stderr, "%s: A, B and C must be 16-byte aligned (TMA, 16-byte stores)\n", who);
    return 0;
}

int gg_tmap_rows(CUtensorMap *map, const void *base, int cols, int rows, uint32_t box_rows) {
    const uint64_t dims[2] = {(uint64_t)cols, (uint64_t)rows};
    const uint64_t strides[1] = {(uint64_t)cols * 2};
    const uint32_t box[2] = {64, box_rows};
    return gg_tmap_bf16(map, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
}

int gg_tmap_a(CUtensorMap *map, const GgLaunch *p, uint32_t box_rows) {
    return gg_tmap_rows(map, p->a, p->k, p->tokens, box_rows);
}

int gg_tmap_experts(CUtensorMap *map, const void *base, int experts, int rows, int cols, uint32_t box_rows) {
    const uint64_t dims[3] = {(uint64_t)cols, (uint64_t)rows, (uint64_t)experts};
    const uint64_t strides[2] = {(uint64_t)cols * 2, (uint64_t)rows * cols * 2};
    const uint32_t box[3] = {64, box_rows, 1};
    return gg_tmap_bf16(map, base, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
}

int gg_tmap_b(CUtensorMap *map, const GgLaunch *p) { return gg_tmap_experts(map, p->b, p->experts, p->k, p->n, 64); }
