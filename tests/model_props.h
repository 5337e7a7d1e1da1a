/* Properties the problem model must have on ANY row list, checked against closed forms that
 * are written here independently of common/problem.c. Shared by the property test (random row
 * lists, tests/test_cpu.c) and the fuzz target (tests/fuzz/fuzz_cli.c). */
#ifndef GG_MODEL_PROPS_H
#define GG_MODEL_PROPS_H
#include <stddef.h>

#include "gg_problem.h"

/* The split's invariants (rows sum to tokens, offsets are the prefix sums, m_e non-increasing
 * for a power-law split) and, for each block_m in {32, 64, 128, adaptive}, the row-tile count,
 * scheduled rows and eta against their closed forms. When the row-block list has at most
 * max_tiles entries it is built too: every row lands in exactly one tile, no tile crosses an
 * expert, tiles are expert-major. 0 = all hold; otherwise why says which one failed. */
int gg_model_props(const GgProblem *p, long max_tiles, char *why, size_t len);
#endif
