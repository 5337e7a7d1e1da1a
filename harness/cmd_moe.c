/* ggemm moe: the whole MoE layer (k4_moe) on named model shapes or explicit sizes, each path
 * checked (harness/moe.c) and timed, with the per-step breakdown; --backward adds the layer's
 * backward (k5_moe_backward, harness/moe_backward.c) after each case's forward rows; --out writes
 * moe.csv (its `pass` column: forward or backward), --list prints the cases (and their roofline
 * floors) for the PyTorch peers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_commands.h"
#include "gg_moe.h"

enum { MAX_CASES = GG_MAX_LIST * 8 }; /* every model of the table (7) at the most tokens a list holds */
static const int default_tokens[] = {256, 4096, 16384}; /* decode-sized, a prefill batch, a large one */

typedef struct {
    const char *model;
    GgMoeShape s;
} Case;

/* A comma-separated list: 1 if its item at p is `name`; the item after p's. */
static int item_is(const char *p, const char *name) {
    const size_t n = strcspn(p, ",");
    return n == strlen(name) && !strncmp(p, name, n);
}
static const char *next_item(const char *p) { return p + strcspn(p, ",") + (p[strcspn(p, ",")] == ','); }

/* The cases the options name: models x tokens. 0, or GG_EXIT_USAGE after one line. */
static int select_cases(const GgOptions *o, Case *c, int *count) {
    const int nt = o->given_tokens ? o->tokens.count : (int)(sizeof default_tokens / sizeof default_tokens[0]);
    const char *want = o->model ? o->model : (o->given_layer ? NULL : "all");
    *count = 0;
    if (!want && o->experts.count != 1) {
        fprintf(stderr, "ggemm: moe: --experts takes one value\n");
        return GG_EXIT_USAGE;
    }
    for (int m = 0; m < (want ? gg_moe_model_count : 1); ++m) {
        const GgMoeModel *md = &gg_moe_models[m];
        if (want && strcmp(want, "all") && !gg_in_list(want, md->name)) continue;
        for (int i = 0; i < nt; ++i) {
            if (*count == MAX_CASES) {
                fprintf(stderr, "ggemm: moe: more than %d cases (models x tokens)\n", MAX_CASES);
                return GG_EXIT_USAGE;
            }
            Case *k = &c[(*count)++];
            k->model = want ? md->name : "custom";
            k->s.tokens = o->given_tokens ? o->tokens.v[i] : default_tokens[i];
            k->s.d = want ? md->d : o->d;
            k->s.f = want ? md->f : o->f;
            k->s.experts = want ? md->experts : o->experts.v[0];
            k->s.topk = want ? md->topk : o->topk;
            k->s.renorm = o->no_renorm ? 0 : (want ? md->renorm : 1);
        }
    }
    int unknown = *count == 0;
    for (const char *p = want; p && strcmp(want, "all") && *p && !unknown; p = next_item(p)) {
        int found = 0; /* every name of a list is a model */
        for (int m = 0; m < gg_moe_model_count && !found; ++m) found = item_is(p, gg_moe_models[m].name);
        unknown = !found;
    }
    if (unknown) {
        char names[512] = "";
        for (int m = 0; m < gg_moe_model_count; ++m)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s, ", gg_moe_models[m].name);
        fprintf(stderr, "ggemm: moe: --model '%s' is not one of %sall\n", want, names);
        return GG_EXIT_USAGE;
    }
    for (int i = 0; i < *count; ++i) {
        char why[512];
        if (!(o->backward ? k5_moe_backward_can_implement : k4_moe_can_implement)(&c[i].s, why, sizeof why)) {
            fprintf(stderr, "ggemm: %s\n", why);
            return GG_EXIT_USAGE;
        }
    }
    return GG_EXIT_OK;
}

/* --gather NAME as a K4Gather (none given: the lesson's). 0, or GG_EXIT_USAGE after one line. */
static int select_gather(const GgOptions *o, K4Gather *gather) {
    *gather = K4_GATHER_DEFAULT;
    if (!o->gather) return GG_EXIT_OK;
    int found = -1;
    for (int g = 0; g < K4_GATHERS; ++g)
        if (!strcmp(o->gather, k4_gather_names[g])) found = g;
    if (found < 0) {
        char names[128] = "";
        for (int g = 0; g < K4_GATHERS; ++g)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", g ? ", " : "", k4_gather_names[g]);
        fprintf(stderr, "ggemm: moe: --gather: '%s' is not one of %s\n", o->gather, names);
        return GG_EXIT_USAGE;
    }
    if (!k4_gather_built((K4Gather)found)) {
        fprintf(stderr, "ggemm: moe: --gather %s: an ablation, not in this build (configure with -DGG_ABLATIONS=ON)\n",
                o->gather);
        return GG_EXIT_USAGE;
    }
    *gather = (K4Gather)found;
    return GG_EXIT_OK;
}

static void csv_header(FILE *f) {
    fputs("impl,path,model,tokens,d,f,experts,topk,renorm,routed_rows,active_experts,time_us_median,time_us_p10,"
          "time_us_p90,route_us,permute_us,gemm1_us,gemm2_us,combine_us,floor_us,roofline_pct,useful_tflops,check,"
          "max_abs_err,rel_err,seed,pass,power_capped_pct,thermal_capped_pct,sm_clock_mhz,steps_power_capped_pct,"
          "steps_sm_clock_mhz",
          f);
    /* Each step's spread after the columns older files have (readers go by column name). */
    for (int i = 0; i < GG_MOE_STEPS; ++i) fprintf(f, ",%s_us_p10,%s_us_p90", gg_moe_step_names[i], gg_moe_step_names[i]);
    fputs(",routing_digest\n", f);
}

_Static_assert(K4_MAX_EXPERTS == GG_MAX_EXPERTS, "k4_moe takes every expert count the harness parses");

static int active_experts(const GgMoeRun *r) {
    const GgMoeShape *s = &r->layer.s;
    int off[K4_MAX_EXPERTS + 1], n = 0;
    if (s->tokens == 0 || cudaStreamSynchronize(r->layer.stream) != cudaSuccess ||
        cudaMemcpy(off, r->layer.ws.row_offsets, sizeof(int) * (s->experts + 1), cudaMemcpyDeviceToHost))
        return 0;
    for (int e = 0; e < s->experts; ++e) n += off[e + 1] > off[e];
    return n;
}

/* The routing as 16 hex digits (FNV-1a, 64 bits, over the chosen experts [T x topk], int32, as
 * the layer left them), so that two runs, builds or GPUs can be seen to route alike; "" for an
 * empty layer, or after one line on stderr where the ids cannot be read. The experts alone decide
 * the rows' order and every GEMM's tile list. */
_Static_assert(sizeof(int) == 4, "the digest hashes the experts' int32 bytes, as the peers do");
static void routing_digest(const GgMoeRun *r, char out[17]) {
    const GgMoeShape *s = &r->layer.s;
    const size_t n = (size_t)s->tokens * s->topk;
    out[0] = '\0';
    if (!n) return;
    int *ids = malloc(sizeof(int) * n);
    if (ids && cudaStreamSynchronize(r->layer.stream) == cudaSuccess &&
        cudaMemcpy(ids, r->layer.ws.topk_expert, sizeof(int) * n, cudaMemcpyDeviceToHost) == cudaSuccess)
        snprintf(out, 17, "%016llx", (unsigned long long)gg_fnv1a64(ids, sizeof(int) * n));
    else
        fprintf(stderr, "ggemm: moe: the routing digest could not read the chosen experts\n");
    free(ids);
}

/* One moe.csv row (no file: none): the case, its times and step times, the roofline from the
 * pass's floor_us and GEMM FLOPs, the check's errors; `pass`: forward or backward; the board's
 * power state over the layer's series (tm) and over the steps' (steps_power), empty without NVML. */
static void csv_row(FILE *csv, const GgOptions *o, const Case *c, const GgMoeRun *r, const char *path,
                    const char *pass, const GgTiming *tm, const GgTiming steps[GG_MOE_STEPS],
                    const GgTelemetry *steps_power, double floor_us, double flops, double max_abs_err,
                    double rel_err, const char *digest) {
    if (!csv) return;
    const GgMoeShape *s = &c->s;
    const double t = tm->median_us;
    const double roof = t > 0 ? 100.0 * floor_us / t : 0, tflops = t > 0 ? flops / t * 1e-6 : 0;
    fprintf(csv, "k4_moe,%s,%s,%d,%d,%d,%d,%d,%d,%ld,%d,%.2f,%.2f,%.2f", path, c->model, s->tokens, s->d, s->f,
            s->experts, s->topk, s->renorm, (long)s->tokens * s->topk, active_experts(r), tm->median_us, tm->p10_us,
            tm->p90_us);
    for (int i = 0; i < GG_MOE_STEPS; ++i) fprintf(csv, ",%.2f", steps[i].median_us);
    fprintf(csv, ",%.2f,%.1f,%.1f,%s,%.4g,%.4g,%llu,%s", floor_us, roof, tflops, o->check ? "pass" : "unchecked",
            max_abs_err, rel_err, o->seed, pass);
    gg_csv_power(csv, &tm->telemetry);
    if (steps_power->valid) fprintf(csv, ",%.1f,%d", steps_power->power_capped_pct, steps_power->sm_clock_mhz);
    else fputs(",,", csv);
    for (int i = 0; i < GG_MOE_STEPS; ++i) fprintf(csv, ",%.2f,%.2f", steps[i].p10_us, steps[i].p90_us);
    fprintf(csv, ",%s\n", digest);
    fflush(csv);
}

/* One path of one case: forward, check, time. Returns 0, GG_EXIT_CHECK (wrong or a CUDA error). */
static int run_path(const GgOptions *o, const GgDeviceInfo *d, const Case *c, GgMoeRun *r, int fused, FILE *csv) {
    const GgMoeShape *s = &c->s;
    const int ablation = fused && r->layer.gather != K4_GATHER_DEFAULT;
    char path[64]; /* an ablation's gather is named in the path: its rows are not the lesson's */
    snprintf(path, sizeof path, "%s%s%s", fused ? "fused" : "unfused", ablation ? "_" : "",
             ablation ? k4_gather_names[r->layer.gather] : "");
    GgMoeCheck chk = {.pass = 1};
    GgTiming tm = {0};
    GgTelemetry steps_power = {0};
    GgTiming steps[GG_MOE_STEPS] = {0};
    int rc = gg_moe_poison(r);
    if (!rc && k4_moe_forward(&r->layer, fused, NULL) != cudaSuccess) {
        gg_error_set("the %s forward failed to launch", path);
        rc = GG_EXIT_CHECK;
    }
    cudaError_t err;
    if (!rc && (err = cudaStreamSynchronize(r->layer.stream)) != cudaSuccess) {
        gg_error_set("the %s forward failed: %s", path, cudaGetErrorString(err));
        rc = GG_EXIT_CHECK;
    }
    if (!rc && o->check) rc = gg_moe_check(r, 1, &chk);
    if (rc) {
        fprintf(stderr, "ggemm: moe %s T=%d %s: %s\n", c->model, s->tokens, path, gg_error());
        return rc;
    }
    if (!chk.pass) {
        fprintf(stderr, "ggemm: moe %s T=%d %s: check failed: %s\n", c->model, s->tokens, path, chk.why);
        return GG_EXIT_CHECK;
    }
    if (gg_moe_time(r, fused, o->warmup, o->reps, &tm, steps, &steps_power)) {
        fprintf(stderr, "ggemm: moe %s T=%d %s: %s\n", c->model, s->tokens, path, gg_error());
        return GG_EXIT_CHECK;
    }
    char digest[17];
    routing_digest(r, digest);
    csv_row(csv, o, c, r, path, "forward", &tm, steps, &steps_power, k4_moe_floor_us(s, d->gemm_tflops, d->bw_gbps),
            k4_moe_gemm_flops(s), chk.max_abs_err, chk.rel_err, digest);
    const char *verdict = o->check ? "pass" : "unchecked";
    printf("%-8s T=%-6d %-8s %9.1f us [%.1f, %.1f]  ", c->model, s->tokens, path, tm.median_us, tm.p10_us, tm.p90_us);
    for (int i = 0; i < GG_MOE_STEPS; ++i) printf("%s %.1f ", gg_moe_step_names[i], steps[i].median_us);
    printf(" check %s%s (max abs err %.3g) routing %s\n", verdict, chk.cpu_ref ? " +CPU fp64" : "", chk.max_abs_err,
           digest[0] ? digest : "-");
    fflush(stdout);
    return GG_EXIT_OK;
}

/* The backward of one case: an unfused forward (it keeps Xg, U, H and Y), a fresh dOut, the
 * backward, its check (the forward's first), then the backward alone timed. One moe.csv row,
 * path "unfused", pass "backward": the step columns hold the backward of each step. */
static int run_backward(const GgOptions *o, const GgDeviceInfo *d, const Case *c, GgMoeRun *r, FILE *csv) {
    const GgMoeShape *s = &c->s;
    GgMoeBwdRun b;
    GgMoeBwdCheck chk = {.pass = 1};
    GgTiming tm = {0};
    GgTelemetry steps_power = {0};
    GgTiming steps[GG_MOE_STEPS] = {0};
    int rc = gg_moe_bwd_open(&b, r);
    if (!rc) rc = gg_moe_bwd_fill(&b, o->seed + 1);
    if (!rc) rc = gg_moe_poison(r);
    cudaError_t err = cudaSuccess;
    if (!rc && ((err = k4_moe_forward(&r->layer, 0, NULL)) != cudaSuccess ||
                (err = k5_moe_backward(&b.b, NULL)) != cudaSuccess ||
                (err = cudaStreamSynchronize(r->layer.stream)) != cudaSuccess)) {
        gg_error_set("the backward failed: %s", cudaGetErrorString(err));
        rc = GG_EXIT_CHECK;
    }
    if (!rc && o->check) rc = gg_moe_bwd_check(r, &b, 1, &chk);
    if (!rc && !chk.pass) {
        char m[128] = "- (the forward failed first)";
        if (chk.forward_ok) gg_moe_bwd_margins(&chk, m, sizeof m);
        fprintf(stderr, "ggemm: moe %s T=%d backward: check failed: %s (worst error / bound, fp32/fp64 reference: %s)\n",
                c->model, s->tokens, chk.why, m);
        gg_moe_bwd_close(&b);
        return GG_EXIT_CHECK;
    }
    if (!rc) rc = gg_moe_bwd_time(&b, o->warmup, o->reps, &tm, steps, &steps_power);
    gg_moe_bwd_close(&b);
    if (rc) {
        fprintf(stderr, "ggemm: moe %s T=%d backward: %s\n", c->model, s->tokens, gg_error());
        return rc;
    }
    char digest[17];
    routing_digest(r, digest);
    csv_row(csv, o, c, r, "unfused", "backward", &tm, steps, &steps_power,
            k5_moe_backward_floor_us(s, d->gemm_tflops, d->bw_gbps), k5_moe_backward_gemm_flops(s), chk.max_abs_err,
            chk.rel_err, digest);
    const char *verdict = o->check ? "pass" : "unchecked";
    printf("%-8s T=%-6d backward %9.1f us [%.1f, %.1f]  ", c->model, s->tokens, tm.median_us, tm.p10_us, tm.p90_us);
    for (int i = 0; i < K5_MOE_BWD_STEPS; ++i)
        printf("%s %.1f ", gg_moe_step_names[k5_moe_bwd_step_of[i]], steps[k5_moe_bwd_step_of[i]].median_us);
    char m[128] = "-", rel[32] = "-";
    if (o->check) {
        gg_moe_bwd_margins(&chk, m, sizeof m);
        snprintf(rel, sizeof rel, "%.3g", chk.rel_err);
    }
    printf(" check %s%s (worst error / bound, fp32/fp64 reference: %s; worst rel err %s) routing %s\n", verdict,
           chk.cpu_ref ? " +CPU fp64" : "", m, rel, digest[0] ? digest : "-");
    fflush(stdout);
    return GG_EXIT_OK;
}

/* --list runs nothing: the cases print on any machine. Their roofline floors need this GPU's
 * ceilings (any GPU: the microbenchmarks are not k4_moe's kernels); without one, floor_us is
 * left empty and one line says why. */
static int list_cases(const GgOptions *o, const Case *cases, int count) {
    GgDeviceInfo d;
    char why[512];
    const int gpu = gg_device_open(&d, why, sizeof why) == GG_EXIT_OK;
    if (gpu && gg_measure_ceilings(&d)) {
        fprintf(stderr, "ggemm: ceilings: %s\n", gg_error());
        return GG_EXIT_CHECK;
    }
    if (!gpu) fprintf(stderr, "ggemm: moe --list: floor_us left empty (it needs a GPU's ceilings): %s\n", why);
    puts("model,tokens,d,f,experts,topk,renorm,seed,floor_us,gemm_flops,pass");
    for (int bwd = 0; bwd <= o->backward; ++bwd) /* --backward: the backward's cases after the forward's */
        for (int i = 0; i < count; ++i) {
            const GgMoeShape *s = &cases[i].s;
            printf("%s,%d,%d,%d,%d,%d,%d,%llu,", cases[i].model, s->tokens, s->d, s->f, s->experts, s->topk,
                   s->renorm, o->seed);
            if (gpu)
                printf("%.2f", bwd ? k5_moe_backward_floor_us(s, d.gemm_tflops, d.bw_gbps)
                                   : k4_moe_floor_us(s, d.gemm_tflops, d.bw_gbps));
            printf(",%.6g,%s\n", bwd ? k5_moe_backward_gemm_flops(s) : k4_moe_gemm_flops(s), bwd ? "backward" : "forward");
        }
    if (gpu) gg_release_buffers();
    return GG_EXIT_OK;
}

int gg_cmd_moe(const GgOptions *o) {
    static Case cases[MAX_CASES];
    K4Gather gather;
    int count = 0, rc = select_cases(o, cases, &count);
    if (!rc) rc = select_gather(o, &gather);
    if (rc) return rc;
    if (o->list) return list_cases(o, cases, count);
    GgDeviceInfo d;
    rc = gg_open_gpu(&d);
    if (rc) return rc;
    if (d.cc_major != 9 || d.cc_minor != 0) {
        fprintf(stderr, "ggemm: k4_moe needs an sm_90 GPU (Hopper): its kernels are built for sm_90a only (this is sm_%d%d)\n",
                d.cc_major, d.cc_minor);
        return GG_EXIT_NO_GPU;
    }
    /* The roofline needs the ceilings (seconds of microbenchmarks): measured for the CSV only,
     * so that a quick run, or one under compute-sanitizer, skips them. */
    if (o->out && gg_measure_ceilings(&d)) {
        fprintf(stderr, "ggemm: ceilings: %s\n", gg_error());
        return GG_EXIT_CHECK;
    }
    FILE *csv = NULL;
    if (o->out) {
        if (!(csv = fopen(o->out, "w"))) {
            fprintf(stderr, "ggemm: cannot write %s\n", o->out);
            return GG_EXIT_USAGE;
        }
        char date[64];
        gg_utc_now(date, sizeof date);
        gg_csv_metadata(csv, &d, gg_commit(), date);
        fputs("# check=routing (fp32 logits within gamma_d(2^-22) sum|x w| of fp64, harness/gg_moe_bound.h; the chosen "
              "experts exactly the top-k of those logits; softmax weights), permutation (exact), output vs cuBLAS fp32 "
              "layer: |out-ref| <= 2^-4 rms(ref) + 2^-7 |ref|\n",
              csv);
        if (o->backward)
            fputs("# check (pass=backward)=the forward's, then dX, dWr, dW1, dW2 each vs the cuBLAS fp32 layer "
                  "backward (harness/moe_backward.c): |g-ref| <= 2^-4 rms(ref) + 2^-7 |ref|, dW1's and dW2's rms over "
                  "the experts with rows\n",
                  csv);
        csv_header(csv);
    }
    int failed = 0;
    for (int i = 0; i < count && !rc; ++i) {
        GgMoeRun r;
        /* --unfused: no packed W1 (kimi-k2's is 22.5 GB) */
        if ((o->path == GG_PATH_UNFUSED ? gg_moe_open_unfused : gg_moe_open)(&r, &cases[i].s, d.sms)) {
            fprintf(stderr, "ggemm: moe %s T=%d: %s\n", cases[i].model, cases[i].s.tokens, gg_error());
            rc = GG_EXIT_CHECK;
            break;
        }
        if (gg_moe_fill(&r, o->seed)) {
            fprintf(stderr, "ggemm: moe %s T=%d: %s\n", cases[i].model, cases[i].s.tokens, gg_error());
            gg_moe_close(&r);
            rc = GG_EXIT_CHECK;
            break;
        }
        r.layer.gather = gather;
        for (int fused = 1; fused >= 0; --fused) {
            if ((fused && o->path == GG_PATH_UNFUSED) || (!fused && o->path == GG_PATH_FUSED)) continue;
            if (csv) fprintf(stderr, "moe %s T=%d %s\n", cases[i].model, cases[i].s.tokens, fused ? "fused" : "unfused");
            failed |= run_path(o, &d, &cases[i], &r, fused, csv) != GG_EXIT_OK;
        }
        if (o->backward) {
            if (csv) fprintf(stderr, "moe %s T=%d backward\n", cases[i].model, cases[i].s.tokens);
            failed |= run_backward(o, &d, &cases[i], &r, csv) != GG_EXIT_OK;
        }
        gg_moe_close(&r);
    }
    if (csv) fclose(csv);
    return rc ? rc : failed ? GG_EXIT_CHECK : GG_EXIT_OK;
}
