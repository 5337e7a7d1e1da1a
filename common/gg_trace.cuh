// The device side of the tracer (gg_trace.h): gg::Trace<ON>, the compile-time switch a kernel
// template takes. Trace<false> is empty and every member does nothing, so an untraced instance
// compiles to the kernel without any trace code; Trace<true> reads %globaltimer and records.
//
// Per role and tile:
//   gg::Trace<TRACE> span;                        // start: now
//   ... span.mark();                              // once: the tile's first TMA issued / its
//                                                 //   first full stage arrived
//   if (recorder) span.end(sink, role, t, expert, row0, rows, col0, computed);
//                 (or span.end(sink, role, t, tile, computed) for a tile of the schedule)
// and once per CTA, by one thread, when barriers and schedule are ready:
//   gg::Trace<TRACE>::setup(sink, entry);         // entry = Trace<TRACE>::now() at the top
#pragma once
#include <stdint.h>

#include "gg_trace.h"
#include "ptx/ptx_special.cuh"

namespace gg {

template <bool ON>
struct Trace;

template <>
struct Trace<false> {
    struct Sink {};  // the kernel parameter: nothing
    __device__ static uint64_t now() { return 0; }
    __device__ static void setup(const Sink &, uint64_t) {}
    __device__ void mark() {}
    __device__ void end(const Sink &, int, int, int, int, int, int, bool) {}
    template <class TILE>
    __device__ void end(const Sink &, int, int, const TILE &, bool) {}
};

template <>
struct Trace<true> {
    using Sink = GgTraceBuffer;
    // Low halves of %globaltimer: a span is far shorter than 2^32 ns, and two registers fewer
    // live across the main loop keep the traced consumers from spilling.
    uint32_t start = (uint32_t)globaltimer(), marked = start;

    __device__ static uint64_t now() { return globaltimer(); }
    // One slot per event; past the capacity the count still grows (the host reports it).
    __device__ static void record(const Sink &s, const GgTraceEvent &e) {
        const unsigned slot = atomicAdd(s.count, 1u);
        if (slot < s.capacity) s.events[slot] = e;
    }
    __device__ static void setup(const Sink &s, uint64_t entry) {
        const uint64_t t = globaltimer();
        record(s, GgTraceEvent{entry, t, t, (int32_t)smid(), (int32_t)blockIdx.x, GG_TRACE_SETUP,
                               -1, -1, 0, 0, 0, 0, 0});
    }
    __device__ void mark() { marked = (uint32_t)globaltimer(); }
    __device__ void end(const Sink &s, int role, int tile, int expert, int row0, int rows, int col0,
                        bool computed) {
        const uint64_t t = globaltimer();
        const uint64_t t0 = t - (uint32_t)((uint32_t)t - start), t1 = t - (uint32_t)((uint32_t)t - marked);
        record(s, GgTraceEvent{t0, t1, t, (int32_t)smid(), (int32_t)blockIdx.x, role, tile, expert,
                               row0, rows, col0, computed ? 1 : 0, 0});
    }
    // The same for a tile of the schedule (expert, row0, rows, col0).
    template <class TILE>
    __device__ void end(const Sink &s, int role, int t, const TILE &tile, bool computed) {
        end(s, role, t, tile.expert, tile.row0, tile.rows, tile.col0, computed);
    }
};

}  // namespace gg
