/* k5_dgrad, the entry point: dgrad runs on k3's kernels (k5_dgrad.cu), so which of them is
 * fastest is k3's question about dgrad's GEMM: tokens rows of dC, n wide, the reduction, into dA,
 * k wide. This asks k3_wgmma's cost model (k3_wgmma_model.h, constants from `ggemm calibrate`)
 * for that shape, k and n swapped, and runs the dgrad twin of the configuration it names. The
 * model's constants were measured on the forward's kernels: that a twin's tile costs what the
 * forward's tile of the same width and depth costs is the assumption, and the sweeps that run
 * the twins side by side (k5_backward/TRIALS.md) are what test it. Host-side shape only, as k3's:
 * a CUDA graph of the launch replays with new m_e. */
#include <stdio.h>
#include <string.h>

#include "gg_launch.h"
#include "k3_wgmma/k3_wgmma.h"
#include "k5_backward.h"

typedef struct {
    const char *name, *forward; /* the dgrad configuration, and k3's that it computes with */
    GgInfoFn info;
    GgLaunchFn launch;
    GgTraceLaunchFn trace_launch;
} Twin;
#define TWIN(CONFIG)                                                                            \
    {"k5_dgrad_" #CONFIG, "k3_wgmma_" #CONFIG, k5_dgrad_##CONFIG##_info, k5_dgrad_##CONFIG##_launch, \
     k5_dgrad_##CONFIG##_trace_launch}
static const Twin twins[] = {
    TWIN(pingpong_m128_n192), TWIN(pingpong_m64_n192), TWIN(coop_m128_n192),
    TWIN(coop_m64_n192),      TWIN(coop_m128_n256),    TWIN(coop_m64_n256),
    TWIN(pingpong_m128_n128), TWIN(pingpong_m64_n128), TWIN(coop_m64_n128),
};
enum { TWINS = (int)(sizeof twins / sizeof twins[0]) };
/* The split-tail kernels (k5_dgrad_tail.cu), each step 2's tile with its last wave in pieces: k3's
 * constants for that tile, the model told of the pieces (GgKernelInfo.tail_split). */
#define TAIL(N)                                                                                           \
    {"k5_dgrad_tail_m128_" #N, "k3_wgmma_coop_m128_" #N, k5_dgrad_tail_m128_##N##_info,                  \
     k5_dgrad_tail_m128_##N##_launch, k5_dgrad_tail_m128_##N##_trace_launch}
static const Twin tails[] = {TAIL(n192), TAIL(n256)};
enum { TAILS = (int)(sizeof tails / sizeof tails[0]) };

static GgShape gemm_of(const GgShape *s) {
    GgShape g = *s;
    g.k = s->n;
    g.n = s->k;
    return g;
}

/* The twin of k3's configuration `forward`, or NULL (k3 chose one dgrad has no twin of). */
static const Twin *twin_of(const char *forward, char *why, size_t len) {
    if (!forward) return NULL;
    for (int i = 0; i < TWINS; ++i)
        if (!strcmp(twins[i].forward, forward)) return &twins[i];
    if (why) snprintf(why, len, "k3_wgmma chose %s, which k5_dgrad has no twin of", forward);
    return NULL;
}

/* why: "k5_dgrad_<config>: k3_wgmma_<config> on dgrad's GEMM (K = n, N = k): " and k3's reasons
 * after its own "name: " (the predicted times, the runners-up under k3's names, the calibration). */
static const Twin *choose(const GgShape *s, const GgGpu *gpu, int on_gpu, char *why, size_t len) {
    const GgShape g = gemm_of(s);
    char k3_why[1024];
    GgGpu here;
    /* without a GPU given, the one k3_wgmma_choose would ask: the tails are predicted for it too */
    const char *forward = !on_gpu && k3_wgmma_gpu_here(&here, &gpu, why ? k3_why : NULL, sizeof k3_why)
                              ? NULL
                              : k3_wgmma_choose_on(&g, gpu, why ? k3_why : NULL, sizeof k3_why);
    if (!forward) {
        if (why) snprintf(why, len, "dgrad's GEMM (K = n = %d, N = k = %d): %s", g.k, g.n, k3_why);
        return NULL;
    }
    const Twin *t = twin_of(forward, why, len);
    if (!t) return NULL;
    /* A split-tail kernel where the model puts it ahead of k3's pick (the pick's own time: the
     * same model and constants) */
    double best;
    K3Prediction tail = {0};
    const Twin *split = NULL;
    if (k3_wgmma_predict(&g, gpu, forward, &best) == 0)
        for (int i = 0; i < TAILS; ++i) {
            GgKernelInfo info = {0};
            K3Prediction p;
            if (tails[i].info(&info) != cudaSuccess || k3_wgmma_predict_as(&g, gpu, tails[i].forward, &info, &p) ||
                p.pieces < 2 || p.time_us >= best)
                continue;
            best = p.time_us, tail = p, split = &tails[i];
        }
    if (why) {
        const char *reasons = strstr(k3_why, ": ");
        int used = 0;
        if (split)
            used = snprintf(why, len, "%s: predicted %.1f us (%.0f tiles in %.0f waves, the last wave's in %d pieces; %s's "
                            "constants), ahead of ", split->name, tail.time_us, tail.tiles, tail.waves, tail.pieces,
                            split->forward);
        if (used >= 0 && (size_t)used < len)
            snprintf(why + used, len - used, "%s: %s on dgrad's GEMM (K = n = %d, N = k = %d): %s", t->name, forward,
                     g.k, g.n, reasons ? reasons + 2 : k3_why);
    }
    return split ? split : t;
}

const char *k5_dgrad_choose(const GgShape *s, char *why, size_t len) {
    const Twin *t = choose(s, NULL, 0, why, len);
    return t ? t->name : NULL;
}

const char *k5_dgrad_choose_on(const GgShape *s, const GgGpu *gpu, char *why, size_t len) {
    const Twin *t = choose(s, gpu, 1, why, len);
    return t ? t->name : NULL;
}

/* A launch: the GPU it runs on. */
static cudaError_t choose_for(const GgLaunch *p, const Twin **t) {
    const GgShape s = {p->tokens, p->experts, p->k, p->n};
    GgGpu g;
    const cudaError_t err = gg_launch_gpu(p, &g);
    if (err != cudaSuccess) return err;
    *t = choose(&s, &g, 1, NULL, 0);
    return *t ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t k5_dgrad_launch(const GgLaunch *p) {
    const Twin *t;
    const cudaError_t err = choose_for(p, &t);
    return err != cudaSuccess ? err : t->launch(p);
}

cudaError_t k5_dgrad_trace_launch(const GgLaunch *p, const GgTraceBuffer *trace) {
    const Twin *t;
    const cudaError_t err = choose_for(p, &t);
    return err != cudaSuccess ? err : t->trace_launch(p, trace);
}

/* Without a shape (listings): the configuration it runs on ggemm's default shape, the worklog's
 * 16k case, for the GPU of the calibration in use (host-side only: a listing asks no GPU). */
cudaError_t k5_dgrad_info(GgKernelInfo *info) {
    const GgShape worklog = {16384, 64, 1024, 2688};
    const Twin *t = choose(&worklog, NULL, 1, NULL, 0);
    const cudaError_t err = t ? t->info(info) : cudaErrorInvalidValue;
    info->workspace_bytes = k5_dgrad_workspace_bytes; /* whichever it runs: the tails' need */
    return err;
}

/* The workspace any configuration it may run needs: the widest split-tail kernel's. */
size_t k5_dgrad_workspace_bytes(const GgLaunch *l) {
    size_t most = 0;
    for (int i = 0; i < TAILS; ++i) {
        GgKernelInfo info = {0};
        if (tails[i].info(&info) == cudaSuccess && info.workspace_bytes) {
            const size_t b = info.workspace_bytes(l);
            most = b > most ? b : most;
        }
    }
    return most;
}
