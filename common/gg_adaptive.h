/* Row tiles of height tile_m over an expert of m rows: every full tile_m rows get a tile; a
 * remainder of more than tile_m / 2 rows a full tile too, a remainder of 1..tile_m / 2 rows one
 * tile that the adaptive policy makes half as high (half the padding of a full tile). Either way
 * the count is ceil(m / tile_m). Shared by the host (eta, tile counts) and the device-side
 * schedule (gg_schedule.h). */
#ifndef GG_ADAPTIVE_H
#define GG_ADAPTIVE_H
#include "gg_hd.h"

GG_HD int gg_row_tiles(int m, int tile_m, int *full, int *half) {
    int whole = m / tile_m, rest = m % tile_m;
    *full = whole + (rest > tile_m / 2 ? 1 : 0);
    *half = (rest > 0 && rest <= tile_m / 2) ? 1 : 0;
    return *full + *half;
}

/* The k3 policy, tile_m = 128: 128-row tiles plus at most one 64-row tile per expert. */
GG_HD int gg_adaptive_m_tiles(int m, int *tiles_128, int *tiles_64) {
    return gg_row_tiles(m, 128, tiles_128, tiles_64);
}

/* Rows the hardware computes for an expert of m rows under this policy. */
GG_HD int gg_adaptive_scheduled_rows(int m) {
    int t128, t64;
    gg_adaptive_m_tiles(m, &t128, &t64);
    return 128 * t128 + 64 * t64;
}
#endif
