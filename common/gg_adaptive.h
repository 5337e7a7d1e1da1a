/* Adaptive BM: how many 128-row and 64-row tiles cover an expert of m rows.
 * Every full 128 rows gets a 128-row tile; a remainder of 1..64 rows gets one 64-row tile
 * (half the padding of a 128-row tile), a remainder of 65..127 rows a 128-row tile.
 * Shared by the host (eta, tile counts) and the k3 kernels' device-side schedule. */
#ifndef GG_ADAPTIVE_H
#define GG_ADAPTIVE_H
#include "gg_hd.h"

GG_HD int gg_adaptive_m_tiles(int m, int *tiles_128, int *tiles_64) {
    int full = m / 128, rest = m % 128;
    *tiles_128 = full + (rest > 64 ? 1 : 0);
    *tiles_64 = (rest > 0 && rest <= 64) ? 1 : 0;
    return *tiles_128 + *tiles_64;
}

/* Rows the hardware computes for an expert of m rows under this policy. */
GG_HD int gg_adaptive_scheduled_rows(int m) {
    int t128, t64;
    gg_adaptive_m_tiles(m, &t128, &t64);
    return 128 * t128 + 64 * t64;
}
#endif
