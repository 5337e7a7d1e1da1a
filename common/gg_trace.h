/* In-kernel tracing: what a traced kernel records and where (the C side of gg_trace.cuh).
 *
 * A traced instance is the same kernel source compiled with its trace switch on. It records one
 * event per role per tile it walks, and one per CTA for the set-up, into a device buffer: the
 * slot is an atomic counter's old value, and an event past the capacity is counted but not
 * written, so the host sees count > capacity and reports the overflow. Times are %globaltimer
 * nanoseconds, one clock for every SM. harness/trace.c decodes and summarises the events. */
#ifndef GG_TRACE_H
#define GG_TRACE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Who recorded an event. A role's event is recorded by its first warp (lane 0); the other
 * warps of the role wait on the same barriers, so their spans differ only by their own stores. */
enum {
    GG_TRACE_SETUP = -1,   /* the CTA: entry -> barriers (and schedule) ready */
    GG_TRACE_PRODUCER = 0, /* the thread that issues the TMA loads */
    GG_TRACE_CONSUMER = 1  /* consumer c (warpgroup in k3, the 8 mma.sync warps in k2) is 1 + c */
};
/* Roles per CTA of any traced kernel (k3: a producer and two consumers): sizes the buffer. */
#define GG_TRACE_ROLES 3

typedef struct GgTraceEvent {
    uint64_t start; /* tile: the role starts on it (producer: before waiting for a free stage;
                       consumer: before waiting for the first full stage). setup: kernel entry */
    uint64_t mark;  /* producer: its first TMA load of the tile issued; consumer: its first full-
                       barrier wait of the tile done; setup: = end */
    uint64_t end;   /* producer: last TMA load issued; consumer: tile stored; setup: ready */
    int32_t sm;     /* %smid */
    int32_t cta;    /* blockIdx.x */
    int32_t role;   /* GG_TRACE_SETUP, GG_TRACE_PRODUCER or GG_TRACE_CONSUMER + c */
    int32_t tile;   /* index in the tile list (host list or device schedule entry); -1: setup.
                       k5_wgrad: its work item's index (gg_wgrad_at), row0 and rows its
                       reduction rows (0: an empty expert's), col0 its first column of n */
    int32_t expert, row0, rows, col0; /* the tile; rows 0: the idle half of a row pair */
    int32_t computed; /* consumer: 1 if it computed the tile, 0 if it only followed the ring (an
                         idle pair half, or the consumer a 64-row tile leaves out); producer: 1
                         unless the tile is an idle pair half; setup: 0 */
    int32_t reserved; /* 0; keeps the event 64 bytes */
} GgTraceEvent;

/* The device buffer a traced launch records into. */
typedef struct GgTraceBuffer {
    GgTraceEvent *events;   /* capacity events */
    unsigned *count;        /* zeroed before the launch; afterwards the events attempted */
    unsigned capacity;
} GgTraceBuffer;

#ifdef __cplusplus
}
#endif
#endif
