#include "model_props.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FAIL(...) do { snprintf(why, len, __VA_ARGS__); goto fail; } while (0)

/* Closed forms, independent of problem.c: ceil division and the adaptive remainder rule. */
static long ceil_div(long a, long b) { return (a + b - 1) / b; }
static long adaptive_rows(long m) {
    long rest = m % 128;
    return 128 * (m / 128) + (rest == 0 ? 0 : rest <= 64 ? 64 : 128);
}

/* Build the row blocks of height bm (one column block: the N split is a plain product) and
 * check that they partition the rows without crossing an expert. */
static int check_tiles(const GgProblem *p, int bm, char *why, size_t len) {
    long count = gg_tile_count(p, bm, p->n);
    GgTile *tiles = malloc((size_t)(count ? count : 1) * sizeof *tiles);
    unsigned char *seen = calloc((size_t)(p->tokens ? p->tokens : 1), 1);
    if (!tiles || !seen) FAIL("out of memory");
    if (gg_build_tiles(p, bm, p->n, tiles) != count) FAIL("BM %d: built a different number of tiles than counted", bm);
    for (long t = 0; t < count; ++t) {
        const GgTile *x = &tiles[t];
        if (x->expert < 0 || x->expert >= p->experts) FAIL("BM %d tile %ld: expert %d out of range", bm, t, x->expert);
        if (x->rows < 1 || x->rows > bm) FAIL("BM %d tile %ld: %d rows", bm, t, x->rows);
        if (x->row0 < p->offsets[x->expert] || x->row0 + x->rows > p->offsets[x->expert + 1])
            FAIL("BM %d tile %ld: rows [%d, %d) cross expert %d", bm, t, x->row0, x->row0 + x->rows, x->expert);
        if (t > 0 && x->expert < tiles[t - 1].expert) FAIL("BM %d tile %ld: not expert-major", bm, t);
        if (x->col0 != 0) FAIL("BM %d tile %ld: col0 %d with one column block", bm, t, x->col0);
        for (int r = x->row0; r < x->row0 + x->rows; ++r)
            if (seen[r]++) FAIL("BM %d: row %d in two tiles", bm, r);
    }
    for (int r = 0; r < p->tokens; ++r)
        if (!seen[r]) FAIL("BM %d: row %d in no tile", bm, r);
    free(tiles);
    free(seen);
    return 0;
fail:
    free(tiles);
    free(seen);
    return 1;
}

int gg_model_props(const GgProblem *p, long max_tiles, char *why, size_t len) {
    long sum = 0;
    if (p->offsets[0] != 0) FAIL("offsets[0] = %d", p->offsets[0]);
    for (int e = 0; e < p->experts; ++e) {
        if (p->m[e] < 0) FAIL("expert %d has %d rows", e, p->m[e]);
        sum += p->m[e];
        if (p->offsets[e + 1] != sum) FAIL("offsets[%d] = %d, prefix sum %ld", e + 1, p->offsets[e + 1], sum);
        /* a power-law split never gives a later expert more rows (leftovers go to the first) */
        if (!isnan(p->skew) && e > 0 && p->m[e] > p->m[e - 1]) FAIL("power-law split grows at expert %d", e);
    }
    if (sum != p->tokens) FAIL("rows sum to %ld, tokens %d", sum, p->tokens);

    const int bms[] = {32, 64, 128, 0};
    for (int i = 0; i < 4; ++i) {
        long tiles = 0, rows = 0;
        for (int e = 0; e < p->experts; ++e) {
            tiles += ceil_div(p->m[e], bms[i] ? bms[i] : 128); /* adaptive: one tile per 128 rows or part */
            rows += bms[i] ? bms[i] * ceil_div(p->m[e], bms[i]) : adaptive_rows(p->m[e]);
        }
        if (gg_m_tiles(p, bms[i]) != tiles) FAIL("BM %d: %ld row tiles, closed form %ld", bms[i], gg_m_tiles(p, bms[i]), tiles);
        if (gg_scheduled_rows(p, bms[i]) != rows)
            FAIL("BM %d: %ld scheduled rows, closed form %ld", bms[i], gg_scheduled_rows(p, bms[i]), rows);
        const double eta = rows ? (double)p->tokens / (double)rows : 1.0;
        if (fabs(gg_eta(p, bms[i]) - eta) > 1e-12) FAIL("BM %d: eta %.17g, closed form %.17g", bms[i], gg_eta(p, bms[i]), eta);
        if (bms[i] && gg_tile_count(p, bms[i], 128) != tiles * ceil_div(p->n, 128))
            FAIL("BM %d: tile count is not row tiles x column tiles", bms[i]);
        if (bms[i] && tiles <= max_tiles && check_tiles(p, bms[i], why, len)) return 1;
    }
    return 0;
fail:
    return 1;
}
