/* The k3_wgmma cost model and its calibration (k3_wgmma_model.h says what each term is). */
#include "k3_wgmma_model.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gg_adaptive.h"
#include "gg_launch.h"
#include "gg_schedule.h"

const GgShape k3_calibration_shapes[K3_CAL_SHAPES] = {
    [K3_CAL_WAVES8] = {33792, 8, 1024, 768},
    [K3_CAL_WAVES8_K4096] = {33792, 8, 4096, 768},
    [K3_CAL_WAVES4] = {16896, 4, 1024, 768},
    [K3_CAL_SUSTAIN] = {33792, 8, 16384, 768},
    [K3_CAL_POWER] = {16384, 8, 6144, 21504},
    [K3_CAL_DRAM] = {16384, 256, 4096, 768},
};
const char *const k3_calibration_shape_names[K3_CAL_SHAPES] = {"waves8_k1024", "waves8_k4096", "waves4_k1024",
                                                               "sustain_k16384", "power", "dram_e256"};

static int k_blocks(int k) { return (k + 63) / 64; }

double k3_model_stream_share(long long active, long long col_blocks, long long row_tiles, double last_width,
                             int sms) {
    enum { MAX_CTAS = 1024 };
    const long long tiles = active * col_blocks * row_tiles, per_expert = col_blocks * row_tiles;
    if (active <= 0 || col_blocks <= 0 || row_tiles <= 0 || sms <= 0 || sms > MAX_CTAS) return 1;
    const long long ctas = tiles < sms ? tiles : sms; /* the persistent grid: no more CTAs than tiles */
    if (last_width >= 1) return (double)((tiles + ctas - 1) / ctas) * ctas / (double)tiles; /* only whole tiles */
    /* tiles of the last column block each CTA holds: expert a's are the row_tiles consecutive
     * tiles from a * per_expert + (col_blocks - 1) * row_tiles, dealt round the CTAs. Expert a's
     * run starts where expert a + period's does (period = ctas / gcd(per_expert, ctas)), so the
     * experts fall into at most `ctas` classes: O(ctas) whatever the expert count, as the entry
     * point predicts on every launch. */
    long long last[MAX_CTAS + 1] = {0};
    const long long every = active * (row_tiles / ctas), rest = row_tiles % ctas; /* whole rounds; the rest */
    if (rest > 0) {
        long long g = ctas, r = per_expert % ctas; /* gcd(per_expert, ctas) */
        while (r) {
            const long long t = g % r;
            g = r;
            r = t;
        }
        const long long period = ctas / g;
        for (long long a = 0; a < active && a < period; ++a) {
            const long long start = (a * per_expert + (col_blocks - 1) * row_tiles) % ctas;
            const long long experts = (active - 1 - a) / period + 1; /* a, a + period, ... */
            last[start] += experts; /* a run of `rest` CTAs from start, wrapping round */
            if (start + rest <= ctas) {
                last[start + rest] -= experts;
            } else {
                last[ctas] -= experts;
                last[0] += experts;
                last[start + rest - ctas] -= experts;
            }
        }
    }
    double most = 0, sum = 0;
    long long run = 0;
    for (long long c = 0; c < ctas; ++c) {
        run += last[c];
        const double stream = (double)((tiles - c + ctas - 1) / ctas) - (1 - last_width) * (double)(every + run);
        most = stream > most ? stream : most;
        sum += stream;
    }
    return sum > 0 ? most * ctas / sum : 1;
}

void k3_model_work(const GgShape *s, const GgKernelInfo *info, int sms, int exact, K3Work *w) {
    const int block_n = info->block_n, adaptive = info->block_m == 0;
    const double col_blocks = (s->n + block_n - 1) / block_n;
    /* a 64-row tile loads 64 + BLOCK_N operand rows per k-block, a full one 128 + BLOCK_N */
    const double half = (64.0 + block_n) / (128.0 + block_n);
    memset(w, 0, sizeof *w);
    if (s->experts <= 0 || s->tokens <= 0) return;
    w->active = s->experts < s->tokens ? s->experts : s->tokens; /* experts with rows */
    const double rows = (double)s->tokens / w->active;
    double row_tiles, p_half; /* per expert: row tiles; the chance its last one is 1..64 rows */
    if (exact) { /* an even split (the calibration shapes): every expert the same */
        int full, halves;
        gg_row_tiles(s->tokens / s->experts, 128, &full, &halves);
        row_tiles = full + halves;
        p_half = halves;
    } else { /* the last tile's rows are anyone's guess: half a tile of padding on average */
        row_tiles = rows / 128 + 0.5 > 1 ? rows / 128 + 0.5 : 1;
        p_half = rows <= 64 ? 1 : 0.5;
    }
    w->tiles = w->active * col_blocks * row_tiles;
    w->units = w->tiles - (adaptive ? w->active * col_blocks * p_half * (1 - half) : 0);
    w->waves = ceil(w->tiles / sms - 1e-9);
    /* on the kernel's grid (gg_persistent_clusters: fewer CTAs than SMs where the tiles are few); the
     * kernel splits on its real tile count, which skew moves, so the pieces are the even split's guess */
    if (info->tail_split) {
        const int grid = (int)gg_persistent_clusters(sms, s->tokens, s->experts, s->n, 128, block_n);
        w->pieces = gg_tail_splits((int)floor(w->tiles + 0.5), grid, k_blocks(s->k));
    } else {
        w->pieces = 1;
    }
    /* adaptive rows: the row tiles of a column block no longer run in step (a 64-row tile
     * finishes its k-loop early), so B's panel is read again for each of them (TRIALS.md) */
    w->b_reads = 1 + (adaptive ? p_half * (row_tiles - 1) : 0);
    const int last = s->n - (int)(col_blocks - 1) * block_n;
    w->b_share = k3_model_stream_share((long long)w->active, (long long)col_blocks, (long long)floor(row_tiles + 0.5),
                                       (double)last / block_n, sms); /* a deal needs whole row tiles */
}

K3Prediction k3_model_predict(const GgShape *s, const GgKernelInfo *info, const K3CalConfig *c, double copy_gbps,
                              int sms, int exact) {
    K3Prediction p = {0};
    K3Work w;
    k3_model_work(s, info, sms, exact, &w);
    p.tiles = w.tiles;
    p.units = w.units;
    p.waves = w.waves;
    p.b_share = w.b_share;
    p.pieces = w.pieces;
    const int kb = k_blocks(s->k);
    if (p.tiles > 0) {
        p.t_tiles_us = p.waves * (p.units / p.tiles) * (c->tile_us + c->kblock_us * kb);
        if (p.pieces > 1) {
            /* the last wave runs a piece's k-blocks, then writes its fp32 partial and the last
             * piece reads all of them (a 128-row tile's): bytes charged at one CTA's share of the
             * copy rate (k5_backward/TRIALS.md, "dgrad's last wave in pieces", compares) */
            const double partial_bytes = 4.0 * 128 * info->block_n;
            p.t_tiles_us -= (p.units / p.tiles) * c->kblock_us * kb * (1 - 1.0 / p.pieces);
            p.t_tiles_us += (1 + p.pieces) * partial_bytes / (copy_gbps * 1e3 / sms);
        }
        p.t_power_us = p.units / sms * c->power_kblock_us * kb;
        const double limited = p.t_tiles_us > c->sustain_us ? 1 - c->sustain_us / p.t_tiles_us : 0;
        p.t_run_us = p.t_tiles_us + limited * fmax(0, p.t_power_us - p.t_tiles_us);
        /* B's stream at the busiest CTA's share: A and C are each read or written once, by tiles
         * of every width alike */
        const double bytes = 2.0 * ((double)s->tokens * s->k + w.b_share * w.active * w.b_reads * s->k * s->n +
                                    (double)s->tokens * s->n);
        p.t_dram_us = bytes / (copy_gbps * c->dram_eff * 1e3);
    }
    const double t4 = pow(p.t_run_us, 4) + pow(p.t_dram_us, 4);
    p.time_us = c->overhead_us + pow(t4, 0.25);
    return p;
}

/* The fit inverts the model: the constants whose predicted times of the calibration shapes
 * (model and shapes as the entry point uses them, DRAM term and copy bandwidth included) are the
 * measured ones. Six constants, six shapes; Levenberg-Marquardt on the relative residuals with a
 * numeric Jacobian, from a start that ignores DRAM and the power limit where it can. */
enum { FIT_O, FIT_TILE, FIT_KBLOCK, FIT_POWER, FIT_DRAM, FIT_SUSTAIN, FIT_N };

static void unpack(const double *x, K3CalConfig *c) {
    c->overhead_us = x[FIT_O];
    c->tile_us = x[FIT_TILE];
    c->kblock_us = x[FIT_KBLOCK];
    c->power_kblock_us = x[FIT_POWER];
    c->dram_eff = x[FIT_DRAM];
    c->sustain_us = x[FIT_SUSTAIN];
}

/* Relative residuals of the shapes (the DRAM one 0 unless use_dram); the sum of their squares. */
static double residuals(const double *x, const K3CalConfig *c, const GgKernelInfo *info, int sms, double copy_gbps,
                        int use_dram, double *r) {
    K3CalConfig m = *c;
    unpack(x, &m);
    double sum = 0;
    for (int i = 0; i < K3_CAL_SHAPES; ++i) {
        const double t = k3_model_predict(&k3_calibration_shapes[i], info, &m, copy_gbps, sms, 1).time_us;
        r[i] = i == K3_CAL_DRAM && !use_dram ? 0 : t / c->measured_us[i] - 1;
        sum += r[i] * r[i];
    }
    return sum;
}

/* Solve a x = b (n <= FIT_N) by elimination with partial pivoting: 0, or 1 if singular. */
static int solve(int n, double a[FIT_N][FIT_N], double *b, double *x) {
    for (int col = 0; col < n; ++col) {
        int p = col;
        for (int r = col + 1; r < n; ++r)
            if (fabs(a[r][col]) > fabs(a[p][col])) p = r;
        if (!(fabs(a[p][col]) > 1e-300)) return 1;
        for (int j = 0; j < n; ++j) {
            const double t = a[col][j];
            a[col][j] = a[p][j];
            a[p][j] = t;
        }
        const double t = b[col];
        b[col] = b[p];
        b[p] = t;
        for (int r = col + 1; r < n; ++r) {
            const double f = a[r][col] / a[col][col];
            for (int j = col; j < n; ++j) a[r][j] -= f * a[col][j];
            b[r] -= f * b[col];
        }
    }
    for (int r = n - 1; r >= 0; --r) {
        double s = b[r];
        for (int j = r + 1; j < n; ++j) s -= a[r][j] * x[j];
        x[r] = s / a[r][r];
    }
    return 0;
}

static void fit_constants(K3CalConfig *c, const GgKernelInfo *info, int sms, double copy_gbps, double sustain_us,
                          int use_dram) {
    /* the start: the short shapes without DRAM, below the power limit (t = overhead + span x
     * tile time), then POWER past a guess of sustain_us */
    double span[K3_CAL_SHAPES], units[K3_CAL_SHAPES]; /* full-tile times per SM: waves x units/tile */
    for (int i = 0; i < K3_CAL_SHAPES; ++i) {
        K3Work w;
        k3_model_work(&k3_calibration_shapes[i], info, sms, 1, &w);
        span[i] = w.tiles > 0 ? w.waves * w.units / w.tiles : 0;
        units[i] = w.units;
    }
    const double *t = c->measured_us;
    double x[FIT_N];
    const double t1024 = (t[K3_CAL_WAVES8] - t[K3_CAL_WAVES4]) / (span[K3_CAL_WAVES8] - span[K3_CAL_WAVES4]);
    x[FIT_O] = t[K3_CAL_WAVES4] - span[K3_CAL_WAVES4] * t1024;
    const double t4096 = (t[K3_CAL_WAVES8_K4096] - x[FIT_O]) / span[K3_CAL_WAVES8_K4096];
    const int kb1 = k_blocks(k3_calibration_shapes[K3_CAL_WAVES8].k);
    const int kb4 = k_blocks(k3_calibration_shapes[K3_CAL_WAVES8_K4096].k);
    x[FIT_KBLOCK] = (t4096 - t1024) / (kb4 - kb1);
    x[FIT_TILE] = t1024 - x[FIT_KBLOCK] * kb1;
    /* the telemetry's capped share of SUSTAIN where there is one (-1: none), else half of it */
    const double pct = c->sustain_capped_pct >= 0 && c->sustain_capped_pct <= 100 ? c->sustain_capped_pct : 50;
    x[FIT_SUSTAIN] = sustain_us >= 0 ? sustain_us : fmax(0, (t[K3_CAL_SUSTAIN] - x[FIT_O]) * (1 - pct / 100));
    const int kbp = k_blocks(k3_calibration_shapes[K3_CAL_POWER].k);
    const double tiles = span[K3_CAL_POWER] * (x[FIT_TILE] + x[FIT_KBLOCK] * kbp);
    const double f = tiles > x[FIT_SUSTAIN] ? 1 - x[FIT_SUSTAIN] / tiles : 0;
    const double power = f > 0 ? tiles + fmax(0, t[K3_CAL_POWER] - x[FIT_O] - tiles) / f : tiles;
    x[FIT_POWER] = power / (units[K3_CAL_POWER] / sms) / kbp;
    x[FIT_DRAM] = 1; /* the copy rate; the solve moves it only with use_dram */

    /* Levenberg-Marquardt: six unknowns, one fewer with sustain_us given (then a least-squares
     * fit of the six shapes), one fewer again without the DRAM shape (dram_eff stays 1) */
    int order[FIT_N], n = 0; /* which constants are unknowns: unknown j is x[order[j]] */
    for (int j = 0; j < FIT_N; ++j)
        if (!(j == FIT_SUSTAIN && sustain_us >= 0) && !(j == FIT_DRAM && !use_dram)) order[n++] = j;
    double r[K3_CAL_SHAPES], cost = residuals(x, c, info, sms, copy_gbps, use_dram, r), lambda = 1e-3;
    for (int iter = 0; iter < 200 && cost > 1e-28 && lambda < 1e12; ++iter) {
        double jac[K3_CAL_SHAPES][FIT_N];
        for (int j = 0; j < n; ++j) {
            double xh[FIT_N], rh[K3_CAL_SHAPES];
            memcpy(xh, x, sizeof xh);
            const double h = 1e-7 * fmax(fabs(x[order[j]]), 1e-2);
            xh[order[j]] += h;
            residuals(xh, c, info, sms, copy_gbps, use_dram, rh);
            for (int i = 0; i < K3_CAL_SHAPES; ++i) jac[i][j] = (rh[i] - r[i]) / h;
        }
        double jtj[FIT_N][FIT_N] = {{0}}, jtr[FIT_N] = {0};
        for (int a = 0; a < n; ++a) {
            for (int i = 0; i < K3_CAL_SHAPES; ++i) jtr[a] -= jac[i][a] * r[i];
            for (int b = 0; b < n; ++b)
                for (int i = 0; i < K3_CAL_SHAPES; ++i) jtj[a][b] += jac[i][a] * jac[i][b];
        }
        for (; lambda < 1e12; lambda *= 10) {
            double a[FIT_N][FIT_N], b[FIT_N], dx[FIT_N] = {0}, xn[FIT_N], rn[K3_CAL_SHAPES];
            memcpy(a, jtj, sizeof a);
            memcpy(b, jtr, sizeof b);
            for (int j = 0; j < n; ++j) a[j][j] += lambda * (jtj[j][j] > 0 ? jtj[j][j] : 1e-12);
            if (solve(n, a, b, dx)) continue;
            memcpy(xn, x, sizeof xn);
            for (int j = 0; j < n; ++j) xn[order[j]] += dx[j];
            /* rates stay positive, the sustain time not negative */
            xn[FIT_KBLOCK] = fmax(xn[FIT_KBLOCK], 0.5 * x[FIT_KBLOCK]);
            xn[FIT_POWER] = fmax(xn[FIT_POWER], 0.5 * x[FIT_POWER]);
            xn[FIT_DRAM] = fmin(fmax(xn[FIT_DRAM], 0.5 * x[FIT_DRAM]), K3_DRAM_EFF_MAX);
            xn[FIT_SUSTAIN] = fmax(xn[FIT_SUSTAIN], 0);
            const double cn = residuals(xn, c, info, sms, copy_gbps, use_dram, rn);
            if (cn < cost) {
                memcpy(x, xn, sizeof xn);
                memcpy(r, rn, sizeof rn);
                cost = cn;
                lambda = fmax(lambda / 100, 1e-9);
                break;
            }
        }
    }
    unpack(x, c);
}

/* The DRAM shape pins dram_eff only if the fitted model finds it DRAM-bound: where it ran at
 * the tensor cores' pace instead, its time says nothing about DRAM, and dram_eff would run off to
 * its cap to make the DRAM term vanish. Then the fit is done again without it (dram_eff 1); the
 * measured time stays in the calibration for the record. */
void k3_model_fit(K3CalConfig *c, const GgKernelInfo *info, int sms, double copy_gbps, double sustain_us) {
    const int use_dram = c->measured_us[K3_CAL_DRAM] > 0;
    fit_constants(c, info, sms, copy_gbps, sustain_us, use_dram);
    if (!use_dram) return;
    const K3Prediction p = k3_model_predict(&k3_calibration_shapes[K3_CAL_DRAM], info, c, copy_gbps, sms, 1);
    if (p.t_dram_us < p.t_run_us || c->dram_eff >= K3_DRAM_EFF_MAX)
        fit_constants(c, info, sms, copy_gbps, sustain_us, 0);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void k3_model_fit_all(K3Calibration *cal, const GgKernelInfo *infos) {
    double sustain[K3_CAL_MAX_CONFIGS];
    for (int i = 0; i < cal->configs; ++i) {
        k3_model_fit(&cal->c[i], &infos[i], cal->sms, cal->copy_gbps, -1);
        sustain[i] = cal->c[i].sustain_us;
    }
    qsort(sustain, (size_t)cal->configs, sizeof sustain[0], cmp_double);
    const double median = cal->configs % 2 ? sustain[cal->configs / 2]
                                           : 0.5 * (sustain[cal->configs / 2 - 1] + sustain[cal->configs / 2]);
    for (int i = 0; i < cal->configs; ++i) k3_model_fit(&cal->c[i], &infos[i], cal->sms, cal->copy_gbps, median);
}

int k3_cal_config_valid(const K3CalConfig *c) {
    return c->kblock_us > 0 && c->power_kblock_us > 0 && c->dram_eff > 0 && isfinite(c->dram_eff) &&
           c->sustain_us >= 0 && isfinite(c->overhead_us) &&
           isfinite(c->tile_us) && isfinite(c->kblock_us) && isfinite(c->power_kblock_us) && isfinite(c->sustain_us);
}

/* ---- the calibration file ---- */

/* Its columns: the constants, then each calibration shape's measured time, then the SUSTAIN
 * run's capped %, then dram_eff. Read by name, in any order; the name and the first five
 * constants must be there (a file from before the DRAM shape has neither its time nor dram_eff). */
enum { COL_CONFIG, COL_OVERHEAD, COL_TILE, COL_KBLOCK, COL_POWER, COL_SUSTAIN, COL_MEASURED,
       COL_CAPPED = COL_MEASURED + K3_CAL_SHAPES, COL_DRAM_EFF, COLS, COLS_REQUIRED = COL_MEASURED };
static const char *const column_names[COLS] = {
    "config", "overhead_us", "tile_us", "kblock_us", "power_kblock_us", "sustain_us",
    "waves8_k1024_us", "waves8_k4096_us", "waves4_k1024_us", "sustain_k16384_us", "power_us", "dram_e256_us",
    "sustain_capped_pct", "dram_eff"};
static double *column_value(K3CalConfig *c, int col) {
    switch (col) {
    case COL_OVERHEAD: return &c->overhead_us;
    case COL_TILE: return &c->tile_us;
    case COL_KBLOCK: return &c->kblock_us;
    case COL_POWER: return &c->power_kblock_us;
    case COL_SUSTAIN: return &c->sustain_us;
    case COL_CAPPED: return &c->sustain_capped_pct;
    case COL_DRAM_EFF: return &c->dram_eff;
    default: return &c->measured_us[col - COL_MEASURED];
    }
}

/* Split line (in place) at its commas: how many fields, or -1 if more than max. */
static int split(char *line, char **field, int max) {
    int n = 0;
    for (char *p = line;; ++p) {
        if (n == max) return -1;
        field[n++] = p;
        p += strcspn(p, ",");
        if (!*p) return n;
        *p = '\0';
    }
}

int k3_calibration_parse(const char *text, const char *source, K3Calibration *cal, char *why, size_t len) {
    enum { FIELDS = 32 };
    memset(cal, 0, sizeof *cal);
    snprintf(cal->source, sizeof cal->source, "%s", source);
    int line_no = 0, fields = 0, col_of[FIELDS]; /* field i of a row is column col_of[i] (-1: ignored) */
    for (const char *p = text; *p;) {
        const size_t n = strcspn(p, "\n");
        char line[1024], *field[FIELDS];
        ++line_no;
        if (n >= sizeof line) {
            snprintf(why, len, "%s:%d: a line longer than %zu characters", source, line_no, sizeof line - 1);
            return 1;
        }
        memcpy(line, p, n);
        line[n - (n && p[n - 1] == '\r')] = '\0';
        p += n + (p[n] == '\n');
        if (!line[0]) continue;
        if (line[0] == '#') {
            sscanf(line, "# device=%255[^\n]", cal->device);
            sscanf(line, "# sms=%d", &cal->sms);
            sscanf(line, "# copy_gbps=%lf", &cal->copy_gbps);
            sscanf(line, "# commit=%63s", cal->commit);
            sscanf(line, "# date=%63s", cal->date);
            continue;
        }
        const int got = split(line, field, FIELDS);
        if (got < 0) {
            snprintf(why, len, "%s:%d: more than %d fields", source, line_no, FIELDS);
            return 1;
        }
        if (!fields) { /* the header */
            int seen[COLS] = {0};
            for (int i = 0; i < got; ++i) {
                col_of[i] = -1;
                for (int c = 0; c < COLS; ++c)
                    if (!strcmp(field[i], column_names[c])) {
                        if (seen[c]++) {
                            snprintf(why, len, "%s:%d: column %s twice", source, line_no, column_names[c]);
                            return 1;
                        }
                        col_of[i] = c;
                    }
            }
            for (int c = 0; c < COLS_REQUIRED; ++c)
                if (!seen[c]) {
                    snprintf(why, len, "%s:%d: the header has no column %s", source, line_no, column_names[c]);
                    return 1;
                }
            fields = got;
            continue;
        }
        if (got != fields) {
            snprintf(why, len, "%s:%d: %d fields, the header has %d", source, line_no, got, fields);
            return 1;
        }
        if (cal->configs == K3_CAL_MAX_CONFIGS) {
            snprintf(why, len, "%s: more than %d configurations", source, K3_CAL_MAX_CONFIGS);
            return 1;
        }
        K3CalConfig *c = &cal->c[cal->configs];
        c->sustain_capped_pct = -1; /* unknown unless a column says */
        c->dram_eff = 1;            /* the copy rate unless a column says */
        for (int i = 0; i < got; ++i) {
            const int col = col_of[i];
            if (col == COL_CONFIG) {
                if (!field[i][0] || strlen(field[i]) >= sizeof c->name) {
                    snprintf(why, len, "%s:%d: a configuration name of 1 to %zu characters", source, line_no,
                             sizeof c->name - 1);
                    return 1;
                }
                strcpy(c->name, field[i]);
            } else if (col >= 0) {
                char *end;
                const double v = strtod(field[i], &end);
                if (end == field[i] || *end || !isfinite(v)) {
                    snprintf(why, len, "%s:%d: %s '%s' is not a finite number", source, line_no, column_names[col],
                             field[i]);
                    return 1;
                }
                *column_value(c, col) = v;
            }
        }
        if (!k3_cal_config_valid(c)) {
            snprintf(why, len, "%s:%d: kblock_us, power_kblock_us and dram_eff must be > 0, sustain_us >= 0", source,
                     line_no);
            return 1;
        }
        cal->configs++;
    }
    if (!cal->device[0] || cal->sms <= 0 || !(cal->copy_gbps > 0) || !isfinite(cal->copy_gbps) || !cal->configs) {
        snprintf(why, len, "%s: needs # device=, # sms=, # copy_gbps= and at least one configuration", source);
        return 1;
    }
    return 0;
}

int k3_calibration_load(const char *path, K3Calibration *cal, char *why, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, len, "cannot read %s", path);
        return 1;
    }
    char *text = malloc(K3_CAL_MAX_BYTES + 1);
    const size_t n = text ? fread(text, 1, K3_CAL_MAX_BYTES + 1, f) : 0;
    const int failed = ferror(f);
    fclose(f);
    int rc = 1;
    if (!text)
        snprintf(why, len, "%s: out of memory", path);
    else if (failed)
        snprintf(why, len, "cannot read %s", path);
    else if (n > K3_CAL_MAX_BYTES)
        snprintf(why, len, "%s: larger than %d bytes, not a calibration", path, K3_CAL_MAX_BYTES);
    else if (memchr(text, '\0', n))
        snprintf(why, len, "%s: a NUL byte, not a calibration", path);
    else {
        text[n] = '\0';
        rc = k3_calibration_parse(text, path, cal, why, len);
    }
    free(text);
    return rc;
}

void k3_calibration_write(const K3Calibration *cal, const char *commit, const char *date, void *file) {
    FILE *f = file;
    fprintf(f,
            "# k3_wgmma's cost model constants (k3_wgmma/k3_wgmma_model.h), measured by ggemm calibrate\n"
            "# device=%s\n# sms=%d\n# copy_gbps=%.1f\n# commit=%s\n# date=%s\n",
            cal->device, cal->sms, cal->copy_gbps, commit, date);
    for (int i = 0; i < COLS; ++i) fprintf(f, "%s%s", i ? "," : "", column_names[i]);
    fputc('\n', f);
    for (int i = 0; i < cal->configs; ++i) {
        const K3CalConfig *c = &cal->c[i];
        fprintf(f, "%s,%.3f,%.4f,%.5f,%.5f,%.1f", c->name, c->overhead_us, c->tile_us, c->kblock_us,
                c->power_kblock_us, c->sustain_us);
        for (int j = 0; j < K3_CAL_SHAPES; ++j) fprintf(f, ",%.2f", c->measured_us[j]);
        fprintf(f, ",%.1f,%.5f\n", c->sustain_capped_pct, c->dram_eff);
    }
}

const K3CalConfig *k3_calibration_find(const K3Calibration *cal, const char *name) {
    for (int i = 0; i < cal->configs; ++i)
        if (!strcmp(cal->c[i].name, name)) return &cal->c[i];
    return NULL;
}

/* results/h200/calibration.csv, compiled in (CMakeLists.txt generates the string). */
extern const char k3_wgmma_h200_calibration_csv[];

static K3Calibration h200;
static pthread_once_t h200_once = PTHREAD_ONCE_INIT;
static void parse_h200(void) {
    char why[256];
    if (k3_calibration_parse(k3_wgmma_h200_calibration_csv, "results/h200/calibration.csv (built in)", &h200, why,
                             sizeof why))
        fprintf(stderr, "k3_wgmma: the built-in calibration does not parse: %s\n", why); /* a build error */
}
const K3Calibration *k3_calibration_h200(void) {
    pthread_once(&h200_once, parse_h200);
    return &h200;
}

/* GG_CALIBRATION, read once. */
static K3Calibration from_file;
static int file_state; /* 0 none, 1 read, -1 unreadable */
static char file_why[256];
static pthread_once_t file_once = PTHREAD_ONCE_INIT;
static void read_file(void) {
    const char *path = getenv("GG_CALIBRATION");
    if (!path || !*path) return;
    char why[sizeof file_why - 32];
    file_state = k3_calibration_load(path, &from_file, why, sizeof why) ? -1 : 1;
    if (file_state < 0) snprintf(file_why, sizeof file_why, "GG_CALIBRATION: %s", why);
}

const K3Calibration *k3_calibration_for(const char *device, char *note, size_t len) {
    pthread_once(&file_once, read_file);
    const K3Calibration *h = k3_calibration_h200();
    if (file_state == 1 && (!device || !strcmp(device, from_file.device))) {
        if (note) snprintf(note, len, "calibration: %s", from_file.source);
        return &from_file;
    }
    if (note) {
        if (file_state == 1)
            snprintf(note, len, "calibration: the H200's (%s measured a %s, this is a %s)", from_file.source,
                     from_file.device, device);
        else if (file_state == -1)
            snprintf(note, len, "calibration: the H200's (%s)", file_why);
        else if (device && strcmp(device, h->device))
            snprintf(note, len, "calibration: the H200's, not this %s's (run ggemm calibrate, set GG_CALIBRATION)",
                     device);
        else
            snprintf(note, len, "calibration: %s", h->source);
    }
    return h;
}
