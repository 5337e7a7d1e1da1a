/* One case: resolve what cannot run, upload the split (and a host tile list), check, time. */
#include <stdlib.h>
#include <string.h>

#include "gg_harness.h"

int gg_prepare(const GgImpl *impl, const GgProblem *p, const GgDeviceInfo *d, GgLaunch *l, char *why,
               size_t len) {
    memset(l, 0, sizeof *l);
    if (impl->peer && impl->peer->script) {
        snprintf(why, len, "%s runs from Python: %s", impl->name, impl->peer->script);
        return GG_EXIT_USAGE;
    }
    if (impl->kernel) {
        if (!gg_impl_runs_here(impl, d->cc_major, d->cc_minor, why, len)) return GG_EXIT_NO_GPU;
        const GgShape shape = {p->tokens, p->experts, p->k, p->n};
        if (!impl->kernel->can_implement(&shape, why, len)) return GG_EXIT_USAGE;
        if ((long)impl->info.dynamic_smem > d->smem_optin) {
            snprintf(why, len, "%s needs %zu bytes of shared memory per block; this GPU allows %ld", impl->name,
                     impl->info.dynamic_smem, d->smem_optin);
            return GG_EXIT_NO_GPU;
        }
    }
    l->tokens = p->tokens;
    l->experts = p->experts;
    l->k = p->k;
    l->n = p->n;
    l->num_sms = d->sms;
    l->stream = gg_stream();
    l->pass = impl->info.pass;
    const GgPassShape ps = gg_pass_shape(p, l->pass);
    void *a, *b, *c, *offsets;
    if (gg_buf(GG_BUF_A, ps.a * 2, &a) || gg_buf(GG_BUF_B, ps.b * 2, &b) || gg_buf(GG_BUF_C, ps.c * 2, &c) ||
        gg_buf(GG_BUF_OFFSETS, sizeof(int) * (size_t)(p->experts + 1), &offsets))
        goto cuda_error;
    l->a = a;
    l->b = b;
    l->c = c;
    l->row_offsets = offsets;
    if (cudaMemcpyAsync(offsets, p->offsets, sizeof(int) * (size_t)(p->experts + 1), cudaMemcpyHostToDevice, gg_stream())) {
        gg_error_set("uploading the row offsets: %s", cudaGetErrorString(cudaGetLastError()));
        goto cuda_error;
    }
    if (impl->info.workspace_bytes) { /* zeroed here, once: the kernel's launches keep it so */
        const size_t bytes = impl->info.workspace_bytes(l);
        if (bytes > 0 && (gg_buf(GG_BUF_WORKSPACE, bytes, &l->workspace) ||
                          cudaMemsetAsync(l->workspace, 0, bytes, gg_stream()) != cudaSuccess)) {
            gg_error_set("the %zu-byte workspace: %s", bytes, cudaGetErrorString(cudaGetLastError()));
            goto cuda_error;
        }
    }
    if (impl->peer) {
        if (gg_peer_prepare(impl->peer, l, p)) goto cuda_error;
        return GG_EXIT_OK;
    }
    if (impl->info.host_tiles) {
        const long count = gg_tile_count(p, impl->info.block_m, impl->info.block_n);
        GgTile *tiles = malloc(sizeof(GgTile) * (size_t)(count > 0 ? count : 1));
        void *tiles_d = NULL;
        if (!tiles) {
            gg_error_set("out of host memory for %ld tiles", count);
            goto cuda_error;
        }
        gg_build_tiles(p, impl->info.block_m, impl->info.block_n, tiles);
        int rc = gg_buf(GG_BUF_TILES, sizeof(GgTile) * (size_t)(count > 0 ? count : 1), &tiles_d);
        if (!rc && cudaMemcpyAsync(tiles_d, tiles, sizeof(GgTile) * (size_t)count, cudaMemcpyHostToDevice, gg_stream())) {
            gg_error_set("uploading the tile list: %s", cudaGetErrorString(cudaGetLastError()));
            rc = GG_EXIT_CHECK;
        }
        free(tiles);
        if (rc) goto cuda_error;
        l->tiles = tiles_d;
        l->num_tiles = (int)count;
    }
    return GG_EXIT_OK;
cuda_error:
    snprintf(why, len, "%s", gg_error());
    return GG_EXIT_CHECK;
}

cudaError_t gg_launch(const GgImpl *impl, const GgLaunch *l) {
    return impl->kernel ? impl->kernel->launch(l) : gg_peer_launch(impl->peer, l);
}

typedef struct {
    const GgImpl *impl;
    const GgLaunch *launch;
} RunCtx;

static cudaError_t run_fn(void *p) {
    const RunCtx *r = p;
    return gg_launch(r->impl, r->launch);
}

int gg_run_case(const GgImpl *entry, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro, GgCheck *chk,
                GgTiming *tm, char *why, size_t why_len) {
    GgImpl copy;
    const GgImpl *impl = gg_impl_for(entry, p, &copy);
    memset(chk, 0, sizeof *chk);
    memset(tm, 0, sizeof *tm);
    why[0] = '\0';
    gg_error_clear();
    GgLaunch l;
    int rc = gg_prepare(impl, p, d, &l, why, why_len);
    if (rc != GG_EXIT_OK) return rc;
    if (ro->check) {
        if (gg_check_prepare(&l, p, ro->seed)) goto cuda_error;
        const cudaError_t err = gg_launch(impl, &l);
        if (err != cudaSuccess) {
            snprintf(why, why_len, "launch failed: %s", cudaGetErrorString(err));
            return GG_EXIT_CHECK;
        }
        if (gg_check_output(&l, p, ro->cpu_ref, chk)) goto cuda_error;
        if (!chk->pass) {
            gg_check_describe(chk, why, why_len);
            return GG_EXIT_CHECK; /* a failed check is never timed */
        }
    }
    RunCtx ctx = {impl, &l};
    if (ro->reps > 0 && gg_time(run_fn, &ctx, ro->warmup, ro->reps, 1, tm)) goto cuda_error;
    return GG_EXIT_OK;
cuda_error:
    snprintf(why, why_len, "%s", gg_error());
    return GG_EXIT_CHECK;
}

/* ---------------- the traced twin ---------------- */

/* A device buffer of `capacity` events and its counter. */
static int trace_buffer(long capacity, GgTraceBuffer *buf) {
    void *events, *count;
    if (capacity < 1 || capacity > (long)UINT32_MAX) {
        gg_error_set("a trace buffer of %ld events", capacity);
        return GG_EXIT_CHECK;
    }
    if (gg_buf(GG_BUF_TRACE, sizeof(GgTraceEvent) * (size_t)capacity, &events) ||
        gg_buf(GG_BUF_TRACE_COUNT, sizeof(unsigned), &count))
        return GG_EXIT_CHECK;
    *buf = (GgTraceBuffer){events, count, (unsigned)capacity};
    GG_CUDA(cudaMemsetAsync(count, 0, sizeof(unsigned), gg_stream()));
    return GG_EXIT_OK;
}

/* What both tracing runs start with: an entry point resolved to its choice for p (into copy),
 * the twin checked, the launch prepared. GG_EXIT_OK and *impl set, or an exit code and why. */
static int trace_start(const GgImpl *entry, const GgProblem *p, const GgDeviceInfo *d, GgImpl *copy,
                       const GgImpl **impl, GgLaunch *l, char *why, size_t why_len) {
    *impl = gg_impl_for(entry, p, copy);
    why[0] = '\0';
    gg_error_clear();
    if (!(*impl)->kernel || !(*impl)->kernel->trace_launch) {
        snprintf(why, why_len, "%s has no traced twin", (*impl)->name);
        return GG_EXIT_USAGE;
    }
    return gg_prepare(*impl, p, d, l, why, why_len);
}

static long attempted(const GgTraceBuffer *buf) {
    unsigned n = 0;
    if (cudaMemcpy(&n, buf->count, sizeof n, cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
    return (long)n;
}

int gg_trace_case(const GgImpl *entry, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro,
                  long capacity, GgCheck *chk, GgTrace *tr, char *why, size_t why_len) {
    memset(chk, 0, sizeof *chk);
    memset(tr, 0, sizeof *tr);
    GgImpl copy;
    const GgImpl *impl;
    GgLaunch l;
    const int rc = trace_start(entry, p, d, &copy, &impl, &l, why, why_len);
    if (rc != GG_EXIT_OK) return rc;
    if (capacity <= 0) capacity = gg_trace_capacity(&impl->info, &l);
    GgTraceBuffer buf;
    cudaError_t err = cudaSuccess;
    if (trace_buffer(capacity, &buf) || gg_check_prepare(&l, p, ro->seed)) goto cuda_error;
    for (int i = 0; i < ro->warmup && err == cudaSuccess; ++i) {
        err = cudaMemsetAsync(buf.count, 0, sizeof(unsigned), gg_stream());
        if (err == cudaSuccess) err = impl->kernel->trace_launch(&l, &buf);
    }
    /* The recorded launch starts, like a timed one, from a flushed L2 and a NaN output. */
    if (err == cudaSuccess) err = cudaMemsetAsync(l.c, 0xff, gg_pass_shape(p, l.pass).c * 2, gg_stream());
    if (err == cudaSuccess && gg_flush_l2()) goto cuda_error;
    if (err == cudaSuccess) err = cudaMemsetAsync(buf.count, 0, sizeof(unsigned), gg_stream());
    if (err == cudaSuccess) err = impl->kernel->trace_launch(&l, &buf);
    if (err != cudaSuccess) {
        snprintf(why, why_len, "traced launch failed: %s", cudaGetErrorString(err));
        return GG_EXIT_CHECK;
    }
    if (gg_check_output(&l, p, ro->cpu_ref, chk)) goto cuda_error;
    tr->capacity = capacity;
    if ((tr->attempted = attempted(&buf)) < 0) {
        gg_error_set("reading the trace count back: %s", cudaGetErrorString(cudaGetLastError()));
        goto cuda_error;
    }
    tr->count = tr->attempted < capacity ? tr->attempted : capacity;
    if (!(tr->events = malloc(sizeof(GgTraceEvent) * (size_t)(tr->count + 1)))) {
        gg_error_set("out of host memory for %ld trace events", tr->count);
        goto cuda_error;
    }
    GG_CUDA(cudaMemcpy(tr->events, buf.events, sizeof(GgTraceEvent) * (size_t)tr->count, cudaMemcpyDeviceToHost));
    if (!chk->pass) {
        gg_check_describe(chk, why, why_len);
        return GG_EXIT_CHECK;
    }
    if (tr->attempted > capacity) {
        snprintf(why, why_len, "trace buffer overflow: the kernel recorded %ld events into room for %ld",
                 tr->attempted, capacity);
        return GG_EXIT_CHECK;
    }
    return GG_EXIT_OK;
cuda_error:
    snprintf(why, why_len, "%s", gg_error());
    return GG_EXIT_CHECK;
}

void gg_trace_free(GgTrace *tr) {
    free(tr->events);
    memset(tr, 0, sizeof *tr);
}

typedef struct {
    const GgImpl *impl;
    const GgLaunch *launch;
    const GgTraceBuffer *buf;
} TraceCtx;

static cudaError_t traced_fn(void *p) {
    const TraceCtx *t = p;
    return t->impl->kernel->trace_launch(t->launch, t->buf);
}

int gg_trace_time(const GgImpl *entry, const GgProblem *p, const GgDeviceInfo *d, const GgRunOpts *ro,
                  GgTiming *untraced, GgTiming *traced, char *why, size_t why_len) {
    memset(untraced, 0, sizeof *untraced);
    memset(traced, 0, sizeof *traced);
    GgImpl copy;
    const GgImpl *impl;
    GgLaunch l;
    const int rc = trace_start(entry, p, d, &copy, &impl, &l, why, why_len);
    if (rc != GG_EXIT_OK) return rc;
    const long capacity = gg_trace_capacity(&impl->info, &l) * (ro->warmup + ro->reps);
    GgTraceBuffer buf;
    RunCtx plain = {impl, &l};
    TraceCtx twin = {impl, &l, &buf};
    if (trace_buffer(capacity, &buf) || gg_check_prepare(&l, p, ro->seed) ||
        gg_time(run_fn, &plain, ro->warmup, ro->reps, 1, untraced) ||
        gg_time(traced_fn, &twin, ro->warmup, ro->reps, 1, traced))
        goto cuda_error;
    const long n = attempted(&buf);
    if (n < 0) {
        snprintf(why, why_len, "reading the trace's event count: %s", cudaGetErrorString(cudaGetLastError()));
        return GG_EXIT_CHECK;
    }
    if (n > capacity) {
        snprintf(why, why_len, "trace buffer overflow while timing: %ld events into room for %ld", n, capacity);
        return GG_EXIT_CHECK;
    }
    return GG_EXIT_OK;
cuda_error:
    snprintf(why, why_len, "%s", gg_error());
    return GG_EXIT_CHECK;
}
