/* The CPU exercises: the functions a student writes in labs/cpu/{swizzle,ldmatrix,desc,eta,wgrad,route}.c.
 * Each is graded by labs/cpu/test_lab_cpu.c against the function of this repository named in
 * its comment, which the kernels themselves use; reference.c wires those in instead (CI builds
 * both: the exercises must fail as shipped and pass with the references). */
#ifndef LAB_CPU_H
#define LAB_CPU_H
#include <stdint.h>

/* swizzle.c */
uint32_t lab_swizzle128(uint32_t row, uint32_t chunk);
/* ldmatrix.c */
int lab_ldsm_x4_row(int row0, int lane);
int lab_ldsm_x4_chunk(int chunk0, int lane);
int lab_mma_c_row(int lane, int reg);
int lab_mma_c_col(int lane, int reg);
/* desc.c */
uint64_t lab_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t base_offset,
                        uint32_t swizzle);
uint64_t lab_sm100_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t swizzle);
/* eta.c */
long lab_m_tiles(const int *m, int experts, int block_m);
long lab_tile_count(const int *m, int experts, int n, int block_m, int block_n);
double lab_eta(const int *m, int experts, int block_m);
int lab_adaptive_m_tiles(int m, int *tiles_128, int *tiles_64);
/* wgrad.c (at most LAB_WGRAD_MAX_EXPERTS experts) */
#define LAB_WGRAD_MAX_EXPERTS 64
#define LAB_WGRAD_MAX_GRID 256 /* lab_wgrad_busiest's CTAs */
int lab_wgrad_splits(int m, int chunk);
long lab_wgrad_fixups(const int *m, int experts, int tiles, int chunk);
void lab_wgrad_item(const int *m, int experts, int tiles, int chunk, int index, int *expert, int *tile, int *split,
                    int *row0, int *rows);
long lab_wgrad_busiest(const int *blocks, int items, int grid, int dynamic);
int lab_wgrad_k_first(long l2_bytes, int k, int n, int tile_m, int tile_n, int m);
/* route.c: count is [chunks + 1 x experts] (chunks = ceil(tokens / chunk_tokens)); rank, row_of
 * [tokens x topk]; offsets [experts + 1]; src_token [tokens x topk]. lab_route_rows reads the
 * table lab_route_scan leaves (`scanned`). */
void lab_route_ranks(const int *expert, int tokens, int topk, int experts, int chunk_tokens, int *count, int *rank);
void lab_route_scan(int *count, int chunks, int experts);
void lab_route_rows(const int *expert, const int *rank, const int *scanned, int tokens, int topk, int experts,
                    int chunk_tokens, int *offsets, int *row_of, int *src_token);
#endif
