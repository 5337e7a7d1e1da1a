/* Where a role stands in a ring of STAGES shared-memory buffers: the stage it uses next and the
 * phase parity of that stage's barriers. Every role that walks the ring (the producer, each
 * consumer) keeps one; all of them advance once per k-block, so they agree on the position
 * without talking to each other.
 *
 * An mbarrier completes phases 0, 1, 2, ... and a wait asks for the parity of the phase it
 * needs. Use u of stage s (u = 0, 1, 2, ...) is phase u of full[s]: a consumer waits full[s]
 * with parity `phase`. Before use u the producer needs phase u - 1 of empty[s] (the consumers'
 * release of use u - 1), parity `phase ^ 1`; on the first pass (u = 0) that asks for the
 * phase before the barrier's first one, which a fresh barrier reports as complete, so the
 * producer does not wait. Shared by the kernels (k2, k3), the ring diagram and the labs. */
#ifndef GG_PIPELINE_H
#define GG_PIPELINE_H
#include "gg_hd.h"

typedef struct GgPipe {
    int stage;          /* ring slot used next: 0 .. stages - 1 */
    unsigned phase;     /* parity of the barrier phase that slot's next use completes */
} GgPipe;

/* The next slot; the parity flips each time the ring wraps around. */
GG_HD void gg_pipe_advance(GgPipe *p, int stages) {
    if (++p->stage == stages) {
        p->stage = 0;
        p->phase ^= 1u;
    }
}

/* Parity a consumer waits for on full[stage]; the producer's on empty[stage]. */
GG_HD unsigned gg_pipe_full_parity(GgPipe p) { return p.phase; }
GG_HD unsigned gg_pipe_empty_parity(GgPipe p) { return p.phase ^ 1u; }

#endif
