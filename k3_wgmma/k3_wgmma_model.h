/* The cost model behind the k3_wgmma entry point: a predicted time for each configuration it can
 * choose, from the problem's shape and a few numbers measured on the GPU (`ggemm calibrate`).
 * Host C only; tests/suite_entry.c runs it on the CPU.
 *
 * The shape is all the model sees (tokens, experts, K, N): the rows of each expert live on the
 * device and are never copied back, so a CUDA graph of the launch replays with new m_e. It
 * spreads the rows evenly over the experts and takes each expert's last row tile to hold a
 * random remainder (half a tile of padding on average; with adaptive rows, a 64-row tile half
 * the time). Skew it cannot see.
 *
 * For configuration c (rows: fixed 128 or adaptive 128/64; width BLOCK_N; consumers):
 *   tiles, units  row tiles x column blocks; a 64-row tile counts (64 + BLOCK_N) / (128 + BLOCK_N)
 *                 of a unit: its share of the operand rows a k-block loads
 *   B reads       1 per expert; with adaptive rows, once more per extra row tile where the
 *                 last one is a 64-row tile: the row tiles of a column block fall out of step
 *   waves         ceil(tiles / SMs): the static stride gives every CTA that many tiles at most
 *   t_tiles       waves x (units / tiles) x (tile_us + kblock_us x k-blocks)   every SM busy
 *   t_power       units / SMs x power_kblock_us x k-blocks   the rate held under the power cap
 *   t_run         t_tiles + f x max(0, t_power - t_tiles), f = max(0, 1 - sustain_us / t_tiles):
 *                 the clocks hold for about sustain_us of full load, then the power limit sets
 *                 the rate (short runs never reach it)
 *   B share       the busiest CTA's share of the B stream over the mean: the static stride deals
 *                 the tiles round the CTAs, and a CTA that holds more tiles, or fewer of the
 *                 narrow last column block (N not a multiple of BLOCK_N), streams more of B
 *   t_dram        (A + B share x B reads x B of the experts with rows + C) bytes /
 *                 (dram_eff x copy bandwidth): while every SM streams B, each gets about the same
 *                 share of DRAM (the same ring in flight), so the CTA with the most of B to read
 *                 ends the launch; dram_eff is the share of the copy rate this configuration's
 *                 pipeline keeps busy when DRAM is the bound (its own, measured)
 *   time          overhead_us + (t_run^4 + t_dram^4)^(1/4)
 * The soft maximum (a 4-norm) makes a bound that is nearly reached still cost a little.
 *
 * Calibration: each configuration runs six shapes with even splits (N = 768 is a whole number
 * of 128-, 192- and 256-wide blocks; 33 or 16 row tiles per expert but in DRAM):
 *   WAVES8  8 waves of n192 tiles at K = 1024, WAVES4 half of them: the difference is the tile
 *   time at K = 1024, the rest of WAVES4 the overhead; WAVES8_K4096: the tile time at K = 4096,
 *   and the two give tile_us and kblock_us; SUSTAIN: WAVES8 at K = 16384, about a millisecond,
 *   and POWER: ~4 TFLOP over several ms, long enough for the limit to hold the clocks down:
 *   together sustain_us and power_kblock_us. DRAM: 256 experts of 64 rows at K = 4096, each
 *   expert's B read once for its one row tile, the few-rows-per-expert case of the big MoE
 *   layers: 1.4 to 2.1 times as long in DRAM as in the tensor cores on the H200 (a 128-row tile
 *   computes as much for 64 rows as for 128), so its time gives dram_eff. The fit solves all
 *   six constants at once from the six times, with the whole model (k3_model_fit), so it
 *   predicts each shape as measured. A calibration without the DRAM time (an older file) keeps
 *   dram_eff = 1 and fits the other five. */
#ifndef K3_WGMMA_MODEL_H
#define K3_WGMMA_MODEL_H
#include <stddef.h>

#include "gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { K3_CAL_WAVES8, K3_CAL_WAVES8_K4096, K3_CAL_WAVES4, K3_CAL_SUSTAIN, K3_CAL_POWER, K3_CAL_DRAM,
       K3_CAL_SHAPES };
#define K3_DRAM_EFF_MAX 2.0 /* dram_eff's cap in the fit: reaching it means the DRAM shape was not DRAM-bound */
extern const GgShape k3_calibration_shapes[K3_CAL_SHAPES];
extern const char *const k3_calibration_shape_names[K3_CAL_SHAPES];

/* One configuration's measured constants (microseconds). */
typedef struct K3CalConfig {
    char name[64];
    double overhead_us;      /* launch, fill and drain: what does not scale with tiles */
    double tile_us;          /* a full tile's time beyond its k-blocks, every SM busy */
    double kblock_us;        /* per k-block of a full tile, every SM busy, clocks unthrottled */
    double power_kblock_us;  /* per k-block of a full tile under the power limit */
    double sustain_us;       /* full load the clocks hold before the power limit sets in */
    double measured_us[K3_CAL_SHAPES]; /* 0: not measured (DRAM, in an older file) */
    double sustain_capped_pct; /* of the SUSTAIN run: % of its time under the power limit; -1: no telemetry */
    double dram_eff;           /* share of the copy rate it reaches DRAM-bound (1 where not measured) */
} K3CalConfig;

enum { K3_CAL_MAX_CONFIGS = 16 };
typedef struct K3Calibration {
    char device[256];  /* the GPU it was measured on */
    char source[160];  /* where it came from: a file, or the built-in H200 one */
    char commit[64], date[64]; /* of the run that measured it ("# commit=", "# date=") */
    int sms;
    double copy_gbps;  /* the copy ceiling measured in the same run */
    int configs;
    K3CalConfig c[K3_CAL_MAX_CONFIGS];
} K3Calibration;

/* What the configuration does with this shape, and its predicted time. */
typedef struct K3Prediction {
    double tiles, units, waves, b_share;
    int pieces; /* a tail_split configuration: pieces per tile of the last wave (1: none) */
    double t_tiles_us, t_power_us, t_run_us, t_dram_us, time_us;
} K3Prediction;

/* info: the configuration's constants (block_n; block_m 0 = adaptive rows); exact: as
 * k3_model_work (the entry point predicts with 0). */
K3Prediction k3_model_predict(const GgShape *s, const GgKernelInfo *info, const K3CalConfig *c, double copy_gbps,
                              int sms, int exact);
/* What a configuration's schedule does with a shape: experts with rows (the rows spread evenly
 * over min(experts, tokens) of them), row tiles x column blocks, units, waves, and how many
 * times each expert's B is read from DRAM, and the B share. exact: the shape is an even split
 * whose rows are known (the calibration shapes); else each expert's last row tile holds a random
 * remainder. */
typedef struct K3Work {
    double active, tiles, units, waves, b_reads, b_share;
    int pieces; /* GgKernelInfo.tail_split: gg_tail_splits of the tiles on sms CTAs; else 1 */
} K3Work;
void k3_model_work(const GgShape *s, const GgKernelInfo *info, int sms, int exact, K3Work *w);
/* The B share: `active` experts alike, each col_blocks column blocks of row_tiles row tiles
 * (rows inner, as the schedule orders them), the last block last_width of a whole one wide,
 * dealt tile t to CTA t mod min(sms, tiles): the largest CTA's sum of tile widths over the mean
 * (>= 1; 1 where sms is out of range, 1..1024). O(sms): the entry point asks on every launch. */
double k3_model_stream_share(long long active, long long col_blocks, long long row_tiles, double last_width,
                             int sms);
/* The constants of one configuration from its measured times: the ones whose model times of
 * the calibration shapes (this model, DRAM term at copy_gbps included) are the measured ones,
 * solved together. sustain_us < 0: all from the timings (the SUSTAIN run's capped %, where
 * telemetry gave one, only seeds the solve); else sustain_us is fixed and the others are the
 * least-squares fit. Without a DRAM time (measured_us[K3_CAL_DRAM] 0), or where the fitted model
 * finds the DRAM shape not DRAM-bound after all, dram_eff is 1 and the other shapes give the
 * other constants. */
void k3_model_fit(K3CalConfig *c, const GgKernelInfo *info, int sms, double copy_gbps, double sustain_us);
/* Every configuration (infos[i] describes cal->c[i]): sustain_us is a property of the board, so
 * each gets the median of their estimates, and its other constants are fit again with it. */
void k3_model_fit_all(K3Calibration *cal, const GgKernelInfo *infos);

/* Whether c's constants are usable: all finite, kblock_us, power_kblock_us and dram_eff > 0,
 * sustain_us >= 0 (what the fit must give and the file reader accepts). */
int k3_cal_config_valid(const K3CalConfig *c);
/* Parse a calibration CSV (the file `ggemm calibrate` writes; its columns found by the header's
 * names, every number finite, lines up to 1023 characters): 0, or 1 with one line in why. */
int k3_calibration_parse(const char *text, const char *source, K3Calibration *cal, char *why, size_t len);
/* Read and parse the file at path (at most K3_CAL_MAX_BYTES): 0, or 1 with one line in why. */
enum { K3_CAL_MAX_BYTES = 1 << 16 };
int k3_calibration_load(const char *path, K3Calibration *cal, char *why, size_t len);
/* Write it (header lines, then one row per configuration). */
void k3_calibration_write(const K3Calibration *cal, const char *commit, const char *date, void *file);
/* The calibration to use: GG_CALIBRATION (a file) where it names one measured on a GPU of this
 * name (device; NULL: no GPU to ask), else the built-in one of the H200 (results/h200/
 * calibration.csv, compiled in); note says which, and why not the file. */
const K3Calibration *k3_calibration_for(const char *device, char *note, size_t len);
/* The built-in one. */
const K3Calibration *k3_calibration_h200(void);
const K3CalConfig *k3_calibration_find(const K3Calibration *cal, const char *name);

#ifdef __cplusplus
}
#endif
#endif
