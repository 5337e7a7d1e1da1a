/* k3_wgmma: stage 3 on Hopper (sm_90a only), a ladder of four lesson steps and the entry point.
 *
 * Configuration names follow one grammar, k3_wgmma_<schedule>_<rows>_<width>[_<ablation>]:
 *   schedule  tile      one CTA per tile of the host-built list (k1/k2's launch)
 *             coop      persistent grid over the device-side schedule; both consumer
 *                       warpgroups share each tile (CUTLASS calls this "cooperative")
 *             pingpong  persistent; the two consumer warpgroups own whole tiles in turn
 *   rows      m128      every tile 128 rows
 *             m64       adaptive: an expert's remainder of 1..64 rows gets a 64-row tile
 *   width     n128, n192, n256: BLOCK_N
 *   ablation  solo (the 64-row tile on one consumer), mcb / mca (2-CTA clusters, B / A
 *             multicast to a row-tile / column-block pair): built with -DGG_ABLATIONS=ON only.
 * All: 384 threads (producer warpgroup + two consumer warpgroups), BLOCK_K = 64, wgmma from
 * shared-memory descriptors. Every configuration has a traced twin (NAME_trace_launch). */
#ifndef K3_WGMMA_H
#define K3_WGMMA_H
#include "gg_kernel.h"
#include "k3_wgmma_model.h"

/* The preconditions every configuration shares (k3_wgmma_can_implement): K % 8 == 0 (a k tail
 * is zero-filled by TMA), and 1..4096 experts, the most the device schedule's two-level index
 * covers (256 groups of at most 16 experts, common/gg_schedule.h) and the harness's GG_MAX_EXPERTS. */
#define K3_BLOCK_K 64
#define K3_MAX_EXPERTS 4096

#ifdef __cplusplus
extern "C" {
#endif
/* Step 1 (step1_tile.cu): wgmma, producer/consumer warpgroups, one CTA per host-list tile. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_tile_m128_n192)
/* Step 2 (step2_persistent.cu): + persistent grid over the device-side schedule. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m128_n192)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m128_n256)
/* Step 3 (step3_adaptive.cu): + 64-row remainder tiles, split by columns over both consumers. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n192)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n128)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n256)
/* Step 4 (step4_pingpong.cu): ping-pong consumers, fixed or adaptive rows. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong_m128_n192)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong_m64_n192)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong_m128_n128)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_pingpong_m64_n128)
#ifdef GG_ABLATIONS
/* k3_wgmma_ablations.cu: step 3's kernel with one choice changed. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n192_solo)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n192_mcb)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n256_mcb)
GG_DECLARE_TRACED_CONFIG(k3_wgmma_coop_m64_n192_mca)
#endif
/* The entry point: NAME_info / _launch / _trace_launch of the configuration k3_wgmma_choose names. */
GG_DECLARE_TRACED_CONFIG(k3_wgmma)
/* On the current GPU; without one, for the GPU the calibration in use was measured on (its SM
 * count; GG_CALIBRATION's file, else the H200 of results/h200). why says so: the predicted time
 * of the choice and of every runner-up, and the calibration used. NULL (why says so) if the GPU
 * is there but cannot be asked. */
const char *k3_wgmma_choose(const GgShape *s, char *why, size_t len);
/* On the GPU given: its name picks the calibration (GG_CALIBRATION's file if measured on a GPU
 * of that name, else the H200's), its SMs are predicted for. gpu NULL: as k3_wgmma_choose
 * without a GPU. The same for the two below. */
const char *k3_wgmma_choose_on(const GgShape *s, const GgGpu *gpu, char *why, size_t len);
/* 1 if 64-row remainder tiles pay for this shape on this GPU at column width block_n, by the
 * model (k4's fused GEMM1 asks at its own width). */
int k3_wgmma_adaptive_rows(const GgShape *s, const GgGpu *gpu, int block_n);
/* The configurations the entry point chooses among (ggemm calibrate measures them). */
int k3_wgmma_choice_count(void);
const char *k3_wgmma_choice_name(int i);
int k3_wgmma_choice_info(int i, GgKernelInfo *info); /* 0, or 1 if i is out of range */
/* The GPU a choice without one given is made for (k3_wgmma_choose, k5_dgrad_choose): 0 with *use
 * the current GPU (filled into *g), or NULL where there is none (the calibration's own GPU); 1,
 * why saying so, if a GPU is there but cannot be asked. */
int k3_wgmma_gpu_here(GgGpu *g, const GgGpu **use, char *why, size_t len);
/* The model's time for configuration `name` (0), or 1 if it is not a choice. */
int k3_wgmma_predict(const GgShape *s, const GgGpu *gpu, const char *name, double *time_us);
/* The same with `name`'s constants for a variant of its kernel described by `info` (k5's dgrad
 * with a split last wave: info->tail_split), into *p. */
int k3_wgmma_predict_as(const GgShape *s, const GgGpu *gpu, const char *name, const GgKernelInfo *info,
                        K3Prediction *p);
int k3_wgmma_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
