/* k2_tma_ws: the registered configurations of stage 2 (see k2_tma_ws.cu), each with a traced
 * twin. sm_90a only. */
#ifndef K2_TMA_WS_H
#define K2_TMA_WS_H
#include "gg_kernel.h"
#ifdef __cplusplus
extern "C" {
#endif
GG_DECLARE_TRACED_CONFIG(k2_tma_ws_s2)       /* 128 x 128 x 64, 2 stages, warps 2 x 4 of 64 x 32 + producer */
GG_DECLARE_TRACED_CONFIG(k2_tma_ws_s3)       /* 128 x 128 x 64, 3 stages */
GG_DECLARE_TRACED_CONFIG(k2_tma_ws_s3_1blk)  /* 3 stages, registers uncapped: one block per SM */
GG_DECLARE_TRACED_CONFIG(k2_tma_ws_bm64)     /*  64 x 128 x 64, 4 stages, warps 2 x 4 of 32 x 32 + producer */
int k2_tma_ws_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
