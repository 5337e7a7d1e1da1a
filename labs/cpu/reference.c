/* The repository's own functions under the exercises' names: built instead of the student's
 * files into lab_cpu_reference, which must pass every exercise (and so shows the grader is
 * right about the reference). */
#include "gg_adaptive.h"
#include "gg_desc_sm100.h"
#include "gg_desc_sm90.h"
#include "gg_fragments.h"
#include "gg_problem.h"
#include "gg_swizzle.h"
#include "gg_wgrad.h"
#include "k4_moe/k4_permutation.h"
#include "lab_cpu.h"

uint32_t lab_swizzle128(uint32_t row, uint32_t chunk) { return gg_swizzle128(row, chunk); }

int lab_ldsm_x4_row(int row0, int lane) { return gg_ldsm_x4_row(row0, lane); }
int lab_ldsm_x4_chunk(int chunk0, int lane) { return gg_ldsm_x4_chunk(chunk0, lane); }
int lab_mma_c_row(int lane, int reg) { return gg_mma_c_row(lane, reg); }
int lab_mma_c_col(int lane, int reg) { return gg_mma_c_col(lane, reg); }

uint64_t lab_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t base_offset,
                        uint32_t swizzle) {
    return gg_wgmma_desc(smem_addr, lbo_bytes, sbo_bytes, base_offset, swizzle);
}
uint64_t lab_sm100_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t swizzle) {
    return gg_sm100_smem_desc(smem_addr, lbo_bytes, sbo_bytes, swizzle);
}

/* The model takes a whole problem; k and n do not change the row counts. */
static GgProblem problem(const int *m, int experts, int n) {
    GgProblem p;
    if (gg_problem_from_counts(&p, m, experts, 64, n)) p.experts = -1; /* out of memory: the test says so */
    return p;
}

long lab_m_tiles(const int *m, int experts, int block_m) {
    GgProblem p = problem(m, experts, 8);
    const long t = p.experts < 0 ? -1 : gg_m_tiles(&p, block_m);
    gg_problem_free(&p);
    return t;
}
long lab_tile_count(const int *m, int experts, int n, int block_m, int block_n) {
    GgProblem p = problem(m, experts, n);
    const long t = p.experts < 0 ? -1 : gg_tile_count(&p, block_m, block_n);
    gg_problem_free(&p);
    return t;
}
double lab_eta(const int *m, int experts, int block_m) {
    GgProblem p = problem(m, experts, 8);
    const double eta = p.experts < 0 ? -1 : gg_eta(&p, block_m);
    gg_problem_free(&p);
    return eta;
}
int lab_adaptive_m_tiles(int m, int *tiles_128, int *tiles_64) { return gg_adaptive_m_tiles(m, tiles_128, tiles_64); }

/* The work list's parameters with `tiles` and `chunk` given (the tile shape does not change the
 * list's order, only where each tile sits in dB_e). */
static GgWgradParams wgrad_params(const int *m, int experts, int tiles, int chunk) {
    GgWgradParams p = gg_wgrad_params(experts, 0, 8, 8, 8, 8, 1, 0);
    for (int e = 0; e < experts; ++e) p.tokens += m[e];
    p.tiles = p.k_blocks = tiles; /* tile t is k block t (no L2 given: n block first) */
    p.n_blocks = 1;
    p.chunk = chunk;
    return p;
}
int lab_wgrad_splits(int m, int chunk) {
    const int none = 0;
    const GgWgradParams p = wgrad_params(&none, 1, 1, chunk);
    return gg_wgrad_splits(&p, m);
}
long lab_wgrad_fixups(const int *m, int experts, int tiles, int chunk) {
    const GgWgradParams p = wgrad_params(m, experts, tiles, chunk);
    long fixups = 0;
    for (int e = 0; e < experts; ++e) fixups += gg_wgrad_splits(&p, m[e]) > 1 ? p.tiles : 0;
    return fixups;
}
long lab_wgrad_busiest(const int *blocks, int items, int grid, int dynamic) {
    int busy[LAB_WGRAD_MAX_GRID] = {0}, draw_at[LAB_WGRAD_MAX_GRID] = {0}, drawn[LAB_WGRAD_MAX_GRID] = {0}, start;
    GgWgradDeal d = {grid, dynamic, busy, draw_at, drawn};
    long busiest = 0;
    for (int t = 0; t < items; ++t) {
        const int c = gg_wgrad_deal(&d, t, blocks[t], &start);
        busiest = busy[c] > busiest ? busy[c] : busiest;
    }
    return busiest;
}
int lab_wgrad_k_first(long l2_bytes, int k, int n, int tile_m, int tile_n, int m) {
    const GgWgradParams p = gg_wgrad_params(1, m, k, n, tile_m, tile_n, 1, l2_bytes);
    return gg_wgrad_k_first(&p, m);
}
void lab_wgrad_item(const int *m, int experts, int tiles, int chunk, int index, int *expert, int *tile, int *split,
                    int *row0, int *rows) {
    const GgWgradParams p = wgrad_params(m, experts, tiles, chunk);
    int item_start[LAB_WGRAD_MAX_EXPERTS + 1], slot_start[LAB_WGRAD_MAX_EXPERTS + 1], offsets[LAB_WGRAD_MAX_EXPERTS + 1];
    item_start[0] = slot_start[0] = offsets[0] = 0; /* the kernel's prefix sums */
    for (int e = 0; e < experts; ++e) {
        item_start[e + 1] = item_start[e] + gg_wgrad_items(&p, m[e]);
        slot_start[e + 1] = slot_start[e] + gg_wgrad_slots(&p, m[e]);
        offsets[e + 1] = offsets[e] + m[e];
    }
    const GgWgradItem it = gg_wgrad_at(&p, item_start, slot_start, offsets, index);
    *expert = it.expert, *tile = it.tile, *split = it.split, *row0 = it.row0, *rows = it.rows;
}

/* route.c: the routing kernels' CPU twin (k4_moe/k4_permutation.h). */
void lab_route_ranks(const int *expert, int tokens, int topk, int experts, int chunk_tokens, int *count,
                     int *rank) {
    k4_chunk_ranks(expert, tokens, topk, experts, chunk_tokens, count, rank);
}
void lab_route_scan(int *count, int chunks, int experts) { k4_count_scan(count, chunks, experts); }
void lab_route_rows(const int *expert, const int *rank, const int *scanned, int tokens, int topk, int experts,
                    int chunk_tokens, int *offsets, int *row_of, int *src_token) {
    k4_scatter_rows(expert, rank, scanned, tokens, topk, experts, chunk_tokens, offsets, row_of, src_token);
}
