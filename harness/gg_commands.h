/* The ggemm commands, one function each (harness/cmd_*.c); main.c dispatches. Each returns
 * an exit code and prints its own one-line errors. */
#ifndef GG_COMMANDS_H
#define GG_COMMANDS_H
#include "gg_harness.h"

int gg_cmd_problem(const GgOptions *o);
int gg_cmd_list(const GgOptions *o);
int gg_cmd_run(const GgOptions *o);
int gg_cmd_trace(const GgOptions *o);
int gg_cmd_sweep(const GgOptions *o);
int gg_cmd_cases(const GgOptions *o);
int gg_cmd_ceilings(const GgOptions *o);
int gg_cmd_calibrate(const GgOptions *o);
int gg_cmd_device(const GgOptions *o);
int gg_cmd_version(const GgOptions *o);
int gg_cmd_fuzz(const GgOptions *o);
int gg_cmd_grade(const GgOptions *o);
int gg_cmd_moe(const GgOptions *o);
int gg_cmd_tiles(const GgOptions *o);

/* The GPU, or one line on stderr saying why not (exit code 77). */
int gg_open_gpu(GgDeviceInfo *d);
/* --sms N: the persistent kernels launched after it size their grids for N SMs (at most N CTAs); an
 * entry point has already chosen its configuration for the whole GPU. 0 leaves the GPU whole.
 * GG_EXIT_USAGE, after one line, when N is more than the GPU has. */
int gg_limit_sms(GgDeviceInfo *d, int sms);
#endif
