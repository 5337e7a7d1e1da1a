/* k3_wgmma, the entry point: one name that runs, for each problem, the registered configuration
 * with the least predicted time. The prediction is k3_wgmma_model.h's cost model: waves of
 * tiles at each configuration's measured tile rate, the rate the power limit holds, and the
 * DRAM bytes, from the problem's shape (tokens, experts, K, N) and the GPU's SMs, with constants
 * `ggemm calibrate` measured on this GPU (GG_CALIBRATION), or on the H200 of results/h200,
 * built in. It never reads the rows of each expert, so the choice needs no host copy of the
 * split and a CUDA graph of the launch replays correctly with new m_e (the device schedule
 * reads them at run time). k3_wgmma/README.md explains the model; TRIALS.md has the rule it
 * replaced and the grid it was judged on. */
#include <stdio.h>
#include <string.h>

#include "gg_launch.h"
#include "k3_wgmma.h"
#include "k3_wgmma_model.h"

/* The configurations it chooses among: every persistent one (step 1's host tile list is not
 * graph-safe; the ablations are not built by default and were slower where measured). */
typedef struct {
    const char *name;
    GgInfoFn info;
    GgLaunchFn launch;
    GgTraceLaunchFn trace_launch;
} Choice;
#define CHOICE(NAME) {#NAME, NAME##_info, NAME##_launch, NAME##_trace_launch}
static const Choice choices[] = {
    CHOICE(k3_wgmma_pingpong_m128_n192), CHOICE(k3_wgmma_pingpong_m64_n192), CHOICE(k3_wgmma_coop_m128_n192),
    CHOICE(k3_wgmma_coop_m64_n192),      CHOICE(k3_wgmma_coop_m128_n256),    CHOICE(k3_wgmma_coop_m64_n256),
    CHOICE(k3_wgmma_pingpong_m128_n128), CHOICE(k3_wgmma_pingpong_m64_n128), CHOICE(k3_wgmma_coop_m64_n128),
};
enum { CHOICES = (int)(sizeof choices / sizeof choices[0]) };

int k3_wgmma_choice_count(void) { return CHOICES; }
const char *k3_wgmma_choice_name(int i) { return i >= 0 && i < CHOICES ? choices[i].name : NULL; }
int k3_wgmma_choice_info(int i, GgKernelInfo *info) {
    return i >= 0 && i < CHOICES && choices[i].info(info) == cudaSuccess ? 0 : 1;
}

/* The calibration for GPU g and the SMs to predict for: g's own where it names one measured on a
 * GPU of its name, else the H200's, at g's SM count; g NULL (no GPU to ask, `ggemm problem` on a
 * laptop): the calibration GG_CALIBRATION names, else the H200's, at the SM count of the GPU it
 * was measured on. note: which, and why. */
static const K3Calibration *calibration(const GgGpu *g, int *sms, char *note, size_t len) {
    const K3Calibration *cal = k3_calibration_for(g ? g->name : NULL, note, len);
    *sms = g ? g->sms : cal->sms;
    if (!g && note) {
        const size_t used = strlen(note);
        snprintf(note + used, len - used, " (no GPU here: for the %d SMs of the %s it was measured on)", cal->sms,
                 cal->device);
    }
    return cal;
}

/* Every choice's prediction; the index of the least (-1 if the calibration lacks them all). */
static int predict_all(const GgShape *s, int sms, const K3Calibration *cal, K3Prediction *pred) {
    int best = -1;
    for (int i = 0; i < CHOICES; ++i) {
        GgKernelInfo info = {0};
        const K3CalConfig *c = k3_calibration_find(cal, choices[i].name);
        pred[i].time_us = -1;
        if (!c || choices[i].info(&info) != cudaSuccess) continue;
        pred[i] = k3_model_predict(s, &info, c, cal->copy_gbps, sms, 0);
        if (best < 0 || pred[i].time_us < pred[best].time_us) best = i;
    }
    return best;
}

static const char *short_name(const char *name) { return name + strlen("k3_wgmma_"); }

static const Choice *choose(const GgShape *s, const GgGpu *g, char *why, size_t len) {
    char note[448];
    int sms;
    const K3Calibration *cal = calibration(g, &sms, why ? note : NULL, sizeof note); /* a launch asks no why */
    K3Prediction pred[CHOICES];
    const int best = predict_all(s, sms, cal, pred);
    if (best < 0) {
        if (why) snprintf(why, len, "(%s has none of the configurations)", cal->source);
        return NULL;
    }
    if (why) {
        const K3Prediction *p = &pred[best];
        int used = snprintf(why, len,
                            "%s: predicted %.1f us (%.0f tiles in %.0f waves; t_tiles %.1f, t_power %.1f, "
                            "t_run %.1f, t_dram %.1f us at B share %.3f); next",
                            choices[best].name, p->time_us, p->tiles, p->waves, p->t_tiles_us, p->t_power_us,
                            p->t_run_us, p->t_dram_us, p->b_share);
        int order[CHOICES], n = 0; /* the runners-up, fastest first */
        for (int i = 0; i < CHOICES; ++i)
            if (i != best && pred[i].time_us >= 0) order[n++] = i;
        for (int a = 1; a < n; ++a)
            for (int b = a; b > 0 && pred[order[b]].time_us < pred[order[b - 1]].time_us; --b) {
                const int t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        for (int i = 0; i < n && used > 0 && (size_t)used < len; ++i)
            used += snprintf(why + used, len - used, "%s %s %.1f", i ? "," : "", short_name(choices[order[i]].name),
                             pred[order[i]].time_us);
        if (used > 0 && (size_t)used < len) snprintf(why + used, len - used, "; %s", note);
    }
    return &choices[best];
}

const char *k3_wgmma_choose_on(const GgShape *s, const GgGpu *g, char *why, size_t len) {
    const Choice *c = choose(s, g, why, len);
    return c ? c->name : NULL;
}

int k3_wgmma_predict_as(const GgShape *s, const GgGpu *g, const char *name, const GgKernelInfo *as,
                        K3Prediction *p) {
    int sms;
    const K3Calibration *cal = calibration(g, &sms, NULL, 0);
    for (int i = 0; i < CHOICES; ++i) {
        GgKernelInfo info = {0};
        const K3CalConfig *c = k3_calibration_find(cal, choices[i].name);
        if (strcmp(choices[i].name, name) || !c || choices[i].info(&info) != cudaSuccess) continue;
        *p = k3_model_predict(s, as ? as : &info, c, cal->copy_gbps, sms, 0);
        return 0;
    }
    return 1;
}

int k3_wgmma_predict(const GgShape *s, const GgGpu *g, const char *name, double *time_us) {
    K3Prediction p;
    if (k3_wgmma_predict_as(s, g, name, NULL, &p)) return 1;
    *time_us = p.time_us;
    return 0;
}

/* k4's fused GEMM1 at its own width: adaptive rows where the model's best adaptive
 * configuration of that width (all widths, if none has it) beats its best fixed-row one. */
int k3_wgmma_adaptive_rows(const GgShape *s, const GgGpu *g, int block_n) {
    int sms;
    const K3Calibration *cal = calibration(g, &sms, NULL, 0);
    K3Prediction pred[CHOICES];
    predict_all(s, sms, cal, pred);
    int any_width = 1;
    for (int i = 0; i < CHOICES; ++i) {
        GgKernelInfo info = {0};
        if (choices[i].info(&info) == cudaSuccess && info.block_n == block_n) any_width = 0;
    }
    double best[2] = {-1, -1}; /* fixed, adaptive */
    for (int i = 0; i < CHOICES; ++i) {
        GgKernelInfo info = {0};
        if (pred[i].time_us < 0 || choices[i].info(&info) != cudaSuccess) continue;
        if (!any_width && info.block_n != block_n) continue;
        const int a = info.block_m == 0;
        if (best[a] < 0 || pred[i].time_us < best[a]) best[a] = pred[i].time_us;
    }
    return best[1] >= 0 && (best[0] < 0 || best[1] < best[0]);
}

int k3_wgmma_gpu_here(GgGpu *g, const GgGpu **use, char *why, size_t len) {
    const cudaError_t err = gg_launch_gpu(NULL, g);
    if (err == cudaSuccess) {
        *use = g;
        return 0;
    }
    if (err != cudaErrorNoDevice && err != cudaErrorInsufficientDriver) { /* a GPU that failed */
        if (why) snprintf(why, len, "(cannot ask the GPU: %s)", cudaGetErrorString(err));
        return 1;
    }
    cudaGetLastError(); /* the failed query's own error, not one of the caller's */
    *use = NULL;        /* no GPU here: the calibration's own */
    return 0;
}

/* The current GPU, or none (the calibration's own, said in why) where there is none; NULL (why
 * says so) if the GPU is there but cannot be asked. */
static const Choice *choose_here(const GgShape *s, char *why, size_t len) {
    GgGpu g;
    const GgGpu *use;
    return k3_wgmma_gpu_here(&g, &use, why, len) ? NULL : choose(s, use, why, len);
}

const char *k3_wgmma_choose(const GgShape *s, char *why, size_t len) {
    const Choice *c = choose_here(s, why, len);
    return c ? c->name : NULL;
}

/* A launch: the GPU it runs on. */
static cudaError_t choose_for(const GgLaunch *p, const Choice **c) {
    const GgShape s = {p->tokens, p->experts, p->k, p->n};
    GgGpu g;
    const cudaError_t err = gg_launch_gpu(p, &g);
    if (err != cudaSuccess) return err;
    *c = choose(&s, &g, NULL, 0);
    return *c ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t k3_wgmma_launch(const GgLaunch *p) {
    const Choice *c;
    const cudaError_t err = choose_for(p, &c);
    return err != cudaSuccess ? err : c->launch(p);
}

cudaError_t k3_wgmma_trace_launch(const GgLaunch *p, const GgTraceBuffer *trace) {
    const Choice *c;
    const cudaError_t err = choose_for(p, &c);
    return err != cudaSuccess ? err : c->trace_launch(p, trace);
}

/* Without a shape (listings): the configuration it runs on ggemm's default shape, the worklog's
 * 16k case, for the GPU of the calibration in use (host-side only: a listing asks no GPU). */
cudaError_t k3_wgmma_info(GgKernelInfo *info) {
    const GgShape worklog = {16384, 64, 1024, 2688};
    const Choice *c = choose(&worklog, NULL, NULL, 0);
    return c ? c->info(info) : cudaErrorInvalidValue;
}
