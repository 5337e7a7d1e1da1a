/* The one C ABI every stage implements.
 *
 * A stage folder (k0_fma, k1_mmasync, ...) compiles to a static library that
 * exports, per registered configuration, two extern "C" functions:
 *   cudaError_t NAME_launch(const GgLaunch *);   enqueue one grouped GEMM
 *   cudaError_t NAME_info(GgKernelInfo *);       the __global__ symbol, threads, dynamic smem
 * and one can_implement() per stage. A configuration with a traced twin (the same kernel built
 * with tracing on, gg_trace.h) also exports
 *   cudaError_t NAME_trace_launch(const GgLaunch *, const GgTraceBuffer *);
 * harness/registry.c lists them all in one table.
 * Host side is plain C; kernels include this header from .cu files. */
#ifndef GG_KERNEL_H
#define GG_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "gg_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One output tile of the flat, expert-major tile list (common/problem.c builds it). */
typedef struct GgTile {
    int expert; /* which B_e to multiply by */
    int row0;   /* first row of the tile in A and C */
    int rows;   /* valid rows: min(BLOCK_M, m_e - local row); never crosses an expert */
    int col0;   /* first column of the tile in C */
} GgTile;

/* Which product a configuration computes. The problem (tokens, experts, k, n, the split) is
 * always the forward layer's, C_e = A_e B_e; the passes of its backward are the two gradients:
 *   GG_PASS_FORWARD  C [tokens x n]      = A_e B_e           a = A,  b = B,  c = C
 *   GG_PASS_DGRAD    dA [tokens x k]     = dC_e B_e^T        a = dC, b = B,  c = dA
 *   GG_PASS_WGRAD    dB [experts x k x n], dB_e = A_e^T dC_e a = A,  b = dC, c = dB
 * (a, b, c: the GgLaunch pointers below; dC is [tokens x n] like C). Every pass does
 * 2 tokens k n useful FLOPs. */
typedef enum GgPass { GG_PASS_FORWARD = 0, GG_PASS_DGRAD = 1, GG_PASS_WGRAD = 2 } GgPass;

/* Everything one launch needs. Pointers are device pointers; bf16 travels as its
 * 16-bit pattern so that host C code never needs a bf16 type. */
typedef struct GgLaunch {
    const uint16_t *a;       /* A [tokens x k], row-major (dgrad: dC [tokens x n]) */
    const uint16_t *b;       /* B [experts x k x n], n contiguous (wgrad: dC [tokens x n]) */
    uint16_t *c;             /* C [tokens x n], row-major (dgrad: dA, wgrad: dB; GgPass) */
    GgPass pass;             /* what a, b and c hold (the configuration's GgKernelInfo.pass) */
    void *workspace;         /* GgKernelInfo.workspace_bytes of scratch, zeroed before the
                                first launch; NULL if the configuration needs none */
    int tokens, experts, k, n;
    const int *row_offsets;  /* experts+1 entries: expert e owns rows [off[e], off[e+1]) */
    const GgTile *tiles;     /* host-built tile list for this config's BLOCK_M x BLOCK_N */
    int num_tiles;           /* (unused by stages that schedule on the device) */
    int num_sms;             /* for persistent grids */
    cudaStream_t stream;
} GgLaunch;

/* What a configuration is, read from the kernel's own compile-time constants: the one place
 * a tile parameter lives. The registry, `ggemm list`, the eta/FLOP columns and the README
 * tables all take them from here. */
typedef struct GgKernelInfo {
    const void *kernel;      /* the __global__ function, for cudaFuncGetAttributes / occupancy */
    int threads;             /* threads per block */
    size_t dynamic_smem;     /* dynamic shared memory per block, bytes */
    int cluster;             /* CTAs per cluster (1 = no cluster) */
    int block_m;             /* rows per tile; 0 = adaptive 128/64 (common/gg_adaptive.h) */
    int block_n, block_k;    /* columns per tile; k per pipeline stage */
    int stages;              /* shared-memory pipeline stages */
    int host_tiles;          /* 1: launch reads the host-built tile list; 0: schedules on the device */
    int whole_tiles;         /* 1: each consumer warpgroup computes whole tiles, in turn (ping-pong);
                                0: the consumers share every tile */
    GgPass pass;             /* forward (0, every stage up to k4), dgrad or wgrad (k5_backward) */
    int dynamic_deal;        /* wgrad: 1 if each CTA draws its next item from a counter (k5_wgrad.cuh),
                                0 if item t runs on CTA t % grid */
    int tail_split;          /* 1: the last wave's tiles split along the reduction (gg_tail_splits,
                                common/gg_schedule.h; k5_dgrad_tail.cu) */
    /* NULL, or the scratch bytes a launch of l's sizes needs (GgLaunch.workspace), from sizes
     * alone so that a captured graph replays with new m_e. Its launches leave it as they found it. */
    size_t (*workspace_bytes)(const GgLaunch *l);
} GgKernelInfo;

typedef cudaError_t (*GgLaunchFn)(const GgLaunch *);
typedef cudaError_t (*GgInfoFn)(GgKernelInfo *);
/* The traced twin: one launch that also records into `trace` (gg_trace.h). */
typedef cudaError_t (*GgTraceLaunchFn)(const GgLaunch *, const GgTraceBuffer *trace);
/* The sizes a kernel may refuse. (Per-expert rows are run-time data and never refused.) */
/* An entry point: the name of the registered configuration it runs for this shape, and in why
 * one line saying which property of the shape (or the GPU) decided (see
 * k3_wgmma/k3_wgmma_entry.c); NULL, with why saying so, if the GPU cannot be asked. */
struct GgShape;
typedef const char *(*GgChooseFn)(const struct GgShape *shape, char *why, size_t why_len);

typedef struct GgShape {
    int tokens, experts, k, n;
} GgShape;

/* What a launch rule may read of the GPU beside the shape (gg_launch_gpu): its SMs (a persistent
 * grid's size, hence how many tiles run at once), its name (which calibration is its own) and its
 * L2 (the wgrad tiles' order, gg_wgrad_k_first). */
typedef struct GgGpu {
    int sms;
    const char *name; /* cudaDeviceProp.name; lives as long as the process */
    long l2_bytes;    /* cudaDeviceProp.l2CacheSize; 0: unknown */
} GgGpu;

/* An entry point's choice for the GPU given, no GPU asked (its SMs and its calibration; NULL: the
 * calibration's own GPU): what `ggemm tiles` lists for N SMs. */
typedef const char *(*GgChooseOnFn)(const GgShape *shape, const GgGpu *gpu, char *why, size_t why_len);

/* Returns 1 if the kernel computes this shape correctly; else 0 and one line in why. */
typedef int (*GgCanImplementFn)(const GgShape *shape, char *why, size_t why_len);

/* One row of the registry: {name, what it is, the code it was built for, its functions}.
 * Tile parameters are not repeated here: info() reads them from the kernel (GgKernelInfo). */
typedef struct GgKernel {
    const char *name;        /* --kernel NAME */
    const char *stage;       /* folder: k0_fma, k1_mmasync, ... */
    const char *config;      /* short description of the variant */
    const char *archs;       /* what it was built for, from CMake's -gencode: "sm_80+ sm_90a" */
    GgCanImplementFn can_implement;
    GgInfoFn info;
    GgLaunchFn launch;
    GgTraceLaunchFn trace_launch; /* NULL: no traced twin */
    GgChooseFn choose;            /* non-NULL: an entry point that runs the configuration it names */
    GgChooseOnFn choose_on;       /* an entry point's: the same choice for a GPU given */
    int step;                     /* > 0: step `step` of its stage's lesson ladder (k3_wgmma) */
} GgKernel;

/* What a stage header declares for each registered configuration NAME. */
#define GG_DECLARE_CONFIG(NAME)                     \
    cudaError_t NAME##_launch(const GgLaunch *p);   \
    cudaError_t NAME##_info(GgKernelInfo *info);
/* ... and for a configuration that also has a traced twin. */
#define GG_DECLARE_TRACED_CONFIG(NAME)                                                \
    GG_DECLARE_CONFIG(NAME)                                                           \
    cudaError_t NAME##_trace_launch(const GgLaunch *p, const GgTraceBuffer *trace);

#ifdef __cplusplus
}
#endif
#endif
