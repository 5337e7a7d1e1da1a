/* Exercise: write lab_m_tiles, lab_tile_count, lab_eta and lab_adaptive_m_tiles, the tile model
 * every stage is scheduled by.
 *
 * Expert e owns m[e] consecutive rows (0 allowed). A stage cuts each expert's rows into row
 * tiles of block_m rows, the last one partial, and every row tile into column blocks of
 * block_n of the n columns; tiles never cross an expert, and a partial tile still computes
 * block_m rows.
 *   lab_m_tiles     row tiles over all experts
 *   lab_tile_count  tiles (row tiles x column blocks)
 *   lab_eta         useful rows / computed rows (1 when there are no rows at all)
 *   lab_adaptive_m_tiles  k3's policy for one expert: 128-row tiles, except that a remainder
 *                   of 1..64 rows gets one 64-row tile; the counts of each, and their sum
 * Repository: gg_m_tiles, gg_tile_count, gg_eta (common/problem.c), gg_adaptive_m_tiles
 * (common/gg_adaptive.h).
 * Grade (rebuilds first): cmake --build build --target lab_cpu && build/bin/lab_cpu eta */
#include "lab_cpu.h"

long lab_m_tiles(const int *m, int experts, int block_m) {
    (void)m;
    (void)experts;
    (void)block_m;
    return 0; /* your code here */
}

long lab_tile_count(const int *m, int experts, int n, int block_m, int block_n) {
    (void)m;
    (void)experts;
    (void)n;
    (void)block_m;
    (void)block_n;
    return 0; /* your code here */
}

double lab_eta(const int *m, int experts, int block_m) {
    (void)m;
    (void)experts;
    (void)block_m;
    return 0; /* your code here */
}

int lab_adaptive_m_tiles(int m, int *tiles_128, int *tiles_64) {
    (void)m;
    *tiles_128 = *tiles_64 = 0; /* your code here */
    return 0;
}
