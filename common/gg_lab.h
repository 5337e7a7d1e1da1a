/* The student slot: one line registers a kernel file under labs/<folder>/ with ggemm.
 *
 *   GG_LAB(NAME, STAGE, "what it is")
 *
 * at file scope, on a line of its own. CMake reads that line from every labs/<folder>/<file>.cu,
 * compiles the file with STAGE's -gencode list (the stage it is graded against, and whose
 * architecture rules it follows), and lists NAME in a second registry table (gg_labs) that
 * `ggemm list`, `run` and `grade` search after the stages. The file defines, as the stages do
 * (common/gg_kernel.h), NAME_info, NAME_launch and NAME_can_implement; the macro declares them
 * extern "C", so a missing one is a link error naming it. */
#ifndef GG_LAB_H
#define GG_LAB_H
#include "gg_kernel.h"

#define GG_LAB(NAME, STAGE, DESCRIPTION)                                          \
    extern "C" int NAME##_can_implement(const GgShape *s, char *why, size_t len); \
    extern "C" cudaError_t NAME##_info(GgKernelInfo *info);                       \
    extern "C" cudaError_t NAME##_launch(const GgLaunch *p);

#endif
