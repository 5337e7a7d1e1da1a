/* k1_mmasync: the registered configurations of stage 1 (see k1_mmasync.cu). */
#ifndef K1_MMASYNC_H
#define K1_MMASYNC_H
#include "gg_kernel.h"
#ifdef __cplusplus
extern "C" {
#endif
GG_DECLARE_CONFIG(k1_mmasync_bm128)        /* 128 x 128 x 32, warps 2 x 4 of 64 x 32 */
GG_DECLARE_CONFIG(k1_mmasync_bm64)         /*  64 x 128 x 32, warps 2 x 4 of 32 x 32 */
GG_DECLARE_CONFIG(k1_mmasync_bm32)         /*  32 x 128 x 32, warps 2 x 4 of 16 x 32 */
GG_DECLARE_CONFIG(k1_mmasync_bm64_fragdb)  /* bm64 with two register fragment sets */
int k1_mmasync_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
