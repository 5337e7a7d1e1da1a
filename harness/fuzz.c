/* Random problems for `ggemm fuzz`: the shapes that break tile arithmetic (empty experts,
 * 1-row experts, remainders of every size, the minimum K and N), drawn reproducibly. */
#include <stdint.h>
#include <stdlib.h>

#include "gg_harness.h"

static uint64_t next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A multiple of 8: half the time small (8..256: minimum sizes, partial tiles), else a
 * multiple of 64 up to 4096 (the sizes the TMA stages want). */
static int dim(uint64_t *s) {
    return next(s) % 2 ? 8 * (1 + (int)(next(s) % 32)) : 64 * (1 + (int)(next(s) % 64));
}

int gg_fuzz_problem(unsigned long long seed, int index, GgProblem *p, double *skew_drawn) {
    uint64_t s = seed * 0x100000001B3ull + (uint64_t)index;
    int experts = 1 + (int)(next(&s) % 256);
    uint64_t wide = s ^ 0x5851F42D4C957F2Dull; /* a side stream: the other draws stay as before */
    if (next(&wide) % 8 == 0) /* one problem in eight: 257..4096 experts (k3's two-level index) */
        experts = 257 + (int)(next(&wide) % (GG_MAX_EXPERTS - 256));
    const int tokens = (int)(next(&s) % 16385);
    const double skew = (double)(next(&s) % 301) / 100.0;
    int *m = malloc(sizeof(int) * (size_t)experts);
    if (!m) return GG_EXIT_USAGE;
    gg_split_rows(tokens, experts, skew, m);
    for (int e = 0; e < experts; ++e) { /* one expert in eight emptied, one in eight cut to a row */
        const uint64_t r = next(&s) % 8;
        if (r == 0) m[e] = 0;
        else if (r == 1 && m[e] > 1) m[e] = 1;
    }
    const int rc = gg_problem_from_counts(p, m, experts, dim(&s), dim(&s));
    free(m);
    *skew_drawn = skew; /* the split's origin; p->skew stays NAN: the rows are an explicit list */
    return rc ? GG_EXIT_USAGE : GG_EXIT_OK;
}
