/* gg_layouts: prints, as CSV, the layouts and schedules the diagrams of plots/diagrams.py draw,
 * computed by the very functions the kernels use (compiled here for the host):
 *
 *   gg_layouts ldmatrix addr      lane -> matrix, row in it, block row and chunk it addresses
 *   gg_layouts ldmatrix frag      (.x4 / .x4.trans, lane, register, element) -> (row, col)
 *   gg_layouts mma                mma.sync m16n8k16 C/D: (lane, register) -> (row, col)
 *   gg_layouts wgmma N            wgmma m64nNk16 D: (thread, register) -> (row, col), N = 8..256
 *   gg_layouts swizzle            one 8 x 8 atom: byte offset and bank group, unswizzled vs 128B
 *   gg_layouts ring STAGES KBLOCKS   the mbarrier ring walked with GgPipe (gg_pipeline.h)
 *   gg_layouts k1pipe SLICES [LATENCY]   k1's cp.async double buffer as a timeline (k1pipe below)
 *   gg_layouts tiles TOKENS EXPERTS SKEW   the row tiles of the flat list under BM 128, 64, adaptive
 *   gg_layouts kernel NAME        a registered kernel's GgKernelInfo (threads, tile, stages, smem)
 *   gg_layouts glu F              k4's packed W1 (k4_packed_w1_column) over one 256-column tile, and
 *                                 which accumulator register of thread 0 holds each column (row 0)
 *
 * No GPU needed. Exit 2 with one line on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_adaptive.h"
#include "gg_banks.h"
#include "gg_fragments.h"
#include "gg_harness.h"
#include "gg_pipeline.h"
#include "gg_problem.h"
#include "gg_swizzle.h"
#include "k4_moe/k4_moe.h"

enum { LANES = 32, WARPGROUP = 128, X4_REGS = 4, MAX_SLICES = 200 };

static int usage(const char *why) {
    fprintf(stderr, "gg_layouts: %s (ldmatrix addr|frag, mma, wgmma N, swizzle, ring STAGES KBLOCKS, "
                    "k1pipe SLICES [LATENCY], tiles TOKENS EXPERTS SKEW, kernel NAME, glu F)\n", why);
    return GG_EXIT_USAGE;
}

/* The k16 step 0 of fragment 0: the addresses k1 and k2 hand ldmatrix, relative to the block. */
static void ldmatrix_addr(void) {
    puts("lane,matrix,matrix_row,row,chunk");
    for (int lane = 0; lane < LANES; ++lane)
        printf("%d,%d,%d,%d,%d\n", lane, gg_x4_matrix(lane), gg_x4_matrix_row(lane),
               gg_ldsm_x4_row(0, lane), gg_ldsm_x4_chunk(0, lane));
}

static void ldmatrix_frag(void) {
    puts("trans,lane,reg,elem,row,col");
    for (int trans = 0; trans < 2; ++trans)
        for (int lane = 0; lane < LANES; ++lane)
            for (int reg = 0; reg < X4_REGS; ++reg)
                for (int elem = 0; elem < 2; ++elem)
                    printf("%d,%d,%d,%d,%d,%d\n", trans, lane, reg, elem,
                           gg_ldsm_x4_elem_row(lane, reg, elem, trans),
                           gg_ldsm_x4_elem_col(lane, reg, elem, trans));
}

static void mma(void) {
    puts("lane,reg,row,col");
    for (int lane = 0; lane < LANES; ++lane)
        for (int reg = 0; reg < 4; ++reg)
            printf("%d,%d,%d,%d\n", lane, reg, gg_mma_c_row(lane, reg), gg_mma_c_col(lane, reg));
}

static void wgmma(int n) {
    puts("thread,warp,lane,reg,row,col");
    for (int t = 0; t < WARPGROUP; ++t)
        for (int reg = 0; reg < n / 2; ++reg)
            printf("%d,%d,%d,%d,%d,%d\n", t, t / LANES, t % LANES, reg, gg_wgmma_d_row(t, reg),
                   gg_wgmma_d_col(t, reg));
}

static void swizzle(void) {
    puts("row,chunk,naive_offset,naive_group,swizzled_offset,swizzled_group");
    for (uint32_t row = 0; row < 8; ++row)
        for (uint32_t chunk = 0; chunk < GG_SWIZZLE128_ROW_BYTES / GG_SWIZZLE128_CHUNK_BYTES; ++chunk) {
            const uint32_t naive = gg_rowmajor128(row, chunk), swz = gg_swizzle128(row, chunk);
            printf("%u,%u,%u,%u,%u,%u\n", row, chunk, naive, gg_bank_group(naive), swz, gg_bank_group(swz));
        }
}

/* Every role walks the ring with its own GgPipe and they all advance once per k-block, so one
 * walk gives every role's position. `use` counts the uses of the stage so far; the producer's
 * wait on empty[] before use 0 asks for the phase before the barrier's first and returns at
 * once (gg_pipeline.h), so it blocks only from use 1 on. */
static void ring(int stages, int kblocks) {
    int uses[64] = {0};
    GgPipe p = {0, 0u};
    puts("kblock,stage,use,full_parity,empty_parity,producer_blocks");
    for (int kb = 0; kb < kblocks; ++kb) {
        const int use = uses[p.stage]++;
        printf("%d,%d,%d,%u,%u,%d\n", kb, p.stage, use, gg_pipe_full_parity(p), gg_pipe_empty_parity(p),
               use > 0);
        gg_pipe_advance(&p, stages);
    }
}

/* k1's main loop (k1_mmasync.cu) replayed step by step on a schematic clock, with STAGES and
 * BLOCK_K read from the kernel (its GgKernelInfo). The structure is the kernel's: STAGES commit
 * groups in the prologue, then per slice kt: wait until group kt has landed
 * (cp.async.wait_group STAGES - 1), block barrier, compute on stage kt % STAGES, block barrier,
 * refill that stage with slice kt + STAGES, commit (one group per slice index, empty past the
 * end). The durations are illustrative, not measured: one slice's MMAs take 1 unit, a copy
 * lands `latency` units after it is issued. */
static int k1pipe(int slices, double latency) {
    GgImpl impl;
    if (gg_impl_find("k1_mmasync_bm128", &impl) || !impl.kernel) return usage("k1_mmasync_bm128 is not registered");
    const GgKernel *k = impl.kernel;
    const GgKernelInfo info = impl.info;
    const int stages = info.stages;
    const double compute = 1.0, barrier = 0.08, issue = 0.15;
    double landed[MAX_SLICES], t = 0.0;
    printf("# kernel=%s,stages=%d,block_k=%d,latency=%g\n", k->name, stages, info.block_k, latency);
    puts("event,slice,stage,group,start,end");
    for (int st = 0; st < stages; ++st) {
        if (st < slices) {
            printf("issue,%d,%d,%d,%g,%g\n", st, st, st, t, t + issue);
            landed[st] = t + issue + latency;
            printf("copy,%d,%d,%d,%g,%g\n", st, st, st, t + issue, landed[st]);
            t += issue;
        }
    }
    for (int kt = 0; kt < slices; ++kt) {
        const int stage = kt % stages;
        const double ready = landed[kt] > t ? landed[kt] : t;
        printf("wait,%d,%d,%d,%g,%g\n", kt, stage, kt, t, ready);
        t = ready;
        printf("barrier,%d,%d,,%g,%g\n", kt, stage, t, t + barrier);
        t += barrier;
        printf("compute,%d,%d,,%g,%g\n", kt, stage, t, t + compute);
        t += compute;
        printf("barrier,%d,%d,,%g,%g\n", kt, stage, t, t + barrier);
        t += barrier;
        const int next = kt + stages, group = stages + kt;
        if (next < slices) {
            printf("issue,%d,%d,%d,%g,%g\n", next, stage, group, t, t + issue);
            landed[next] = t + issue + latency;
            printf("copy,%d,%d,%d,%g,%g\n", next, stage, group, t + issue, landed[next]);
            t += issue;
        } else {
            printf("empty_commit,,%d,%d,%g,%g\n", stage, group, t, t);
        }
    }
    return GG_EXIT_OK;
}

/* The row tiles of the flat list (one column block: every column block repeats them). Fixed BM
 * comes from the list the host builds for the kernels (gg_build_tiles); adaptive from the
 * per-expert counts the k3 schedule uses (gg_adaptive.h): its 128-row tiles first, then the one
 * 64-row tile of a 1..64-row remainder. */
static int tiles(int tokens, int experts, double skew) {
    GgProblem p;
    if (gg_problem_init(&p, tokens, experts, 64, 64, skew)) return usage("tiles: cannot build the problem");
    printf("# m_e=%d", p.m[0]);
    for (int e = 1; e < experts; ++e) printf(" %d", p.m[e]);
    printf(",eta_128=%.4f,eta_64=%.4f,eta_adaptive=%.4f\n", gg_eta(&p, 128), gg_eta(&p, 64), gg_eta(&p, 0));
    puts("policy,expert,row0,rows,height");
    const int fixed[] = {128, 64};
    GgTile *list = malloc(sizeof *list * (size_t)(gg_tile_count(&p, 64, p.n) + 1));
    for (int f = 0; f < 2; ++f) {
        const long count = gg_build_tiles(&p, fixed[f], p.n, list);
        for (long t = 0; t < count; ++t)
            printf("%d,%d,%d,%d,%d\n", fixed[f], list[t].expert, list[t].row0, list[t].rows, fixed[f]);
    }
    free(list);
    for (int e = 0; e < experts; ++e) {
        int t128, t64;
        gg_adaptive_m_tiles(p.m[e], &t128, &t64);
        for (int t = 0, row = 0; t < t128 + t64; ++t) {
            const int height = t < t128 ? 128 : 64, rows = p.m[e] - row < height ? p.m[e] - row : height;
            printf("adaptive,%d,%d,%d,%d\n", e, p.offsets[e] + row, rows, height);
            row += height;
        }
    }
    gg_problem_free(&p);
    return GG_EXIT_OK;
}

/* What the kernel's own info() reports; no GPU needed (registers and static shared memory
 * are the compiler's: diagrams.py reads them from the binary with cuobjdump). */
static int kernel(const char *name) {
    GgImpl impl;
    if (gg_impl_find(name, &impl) || !impl.kernel) return usage("kernel NAME: not a registered kernel");
    const GgKernel *k = impl.kernel;
    const GgKernelInfo info = impl.info;
    puts("kernel,stage,threads,dynamic_smem,cluster,block_m,block_n,block_k,stages");
    printf("%s,%s,%d,%zu,%d,%d,%d,%d,%d\n", k->name, k->stage, info.threads, info.dynamic_smem, info.cluster,
           info.block_m, info.block_n, info.block_k, info.stages);
    return GG_EXIT_OK;
}

/* One fused-GEMM1 tile of packed W1 (2 x K4_PACK_N columns): where each column comes from, and
 * the register of thread 0 (warp 0, lane 0) that holds it in row 0 of the m64n256 accumulator
 * (-1: another thread's column). SwiGLU pairs register i with i + 32 (k4_gemm1_swiglu.cu). */
static void glu(int f) {
    puts("packed_col,src_col,up,pair,reg_thread0");
    const int tile = 2 * K4_PACK_N;
    int reg_of[2 * K4_PACK_N];
    for (int c = 0; c < tile; ++c) reg_of[c] = -1;
    for (int reg = 0; reg < tile / 2; ++reg)
        if (gg_wgmma_d_row(0, reg) == 0) reg_of[gg_wgmma_d_col(0, reg)] = reg;
    for (int c = 0; c < tile; ++c) {
        const int src = k4_packed_w1_column(c, f);
        printf("%d,%d,%d,%d,%d\n", c, src, src >= f, c / (2 * K4_GLU_PANEL), reg_of[c]);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) return usage("missing layout");
    const char *what = argv[1];
    int a = 0, b = 0;
    if (!strcmp(what, "ldmatrix") && argc == 3 && !strcmp(argv[2], "addr")) ldmatrix_addr();
    else if (!strcmp(what, "ldmatrix") && argc == 3 && !strcmp(argv[2], "frag")) ldmatrix_frag();
    else if (!strcmp(what, "mma") && argc == 2) mma();
    else if (!strcmp(what, "wgmma") && argc == 3) {
        if (gg_parse_int(argv[2], 8, 256, &a) || a % 8) return usage("wgmma N: N is 8..256, a multiple of 8");
        wgmma(a);
    } else if (!strcmp(what, "swizzle") && argc == 2) swizzle();
    else if (!strcmp(what, "ring") && argc == 4) {
        if (gg_parse_int(argv[2], 1, 64, &a) || gg_parse_int(argv[3], 1, 1024, &b))
            return usage("ring STAGES KBLOCKS: 1..64 stages, 1..1024 k-blocks");
        ring(a, b);
    } else if (!strcmp(what, "k1pipe") && (argc == 3 || argc == 4)) {
        double latency = 1.5;
        if (gg_parse_int(argv[2], 1, MAX_SLICES, &a) || (argc == 4 && gg_parse_double(argv[3], 0.0, 100.0, &latency)))
            return usage("k1pipe SLICES [LATENCY]: 1..200 slices, latency 0..100 units");
        return k1pipe(a, latency);
    } else if (!strcmp(what, "tiles") && argc == 5) {
        double skew;
        if (gg_parse_int(argv[2], 1, 1 << 20, &a) || gg_parse_int(argv[3], 1, 1024, &b) ||
            gg_parse_double(argv[4], 0.0, 10.0, &skew))
            return usage("tiles TOKENS EXPERTS SKEW: 1..2^20 rows, 1..1024 experts, skew 0..10");
        return tiles(a, b, skew);
    } else if (!strcmp(what, "kernel") && argc == 3) return kernel(argv[2]);
    else if (!strcmp(what, "glu") && argc == 3) {
        if (gg_parse_int(argv[2], K4_PACK_N, 1 << 18, &a) || a % K4_PACK_N)
            return usage("glu F: F a multiple of 128 (the diagram draws one whole block of two gate/up pairs)");
        glu(a);
    }
    else return usage("unknown layout or wrong arguments");
    return GG_EXIT_OK;
}
