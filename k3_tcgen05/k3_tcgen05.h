/* k3_tcgen05: the registered configuration of stage 3 for Blackwell (see k3_tcgen05.cu).
 * sm_100a only: tcgen05 + Tensor Memory, CTA pairs (cluster of 2). */
#ifndef K3_TCGEN05_H
#define K3_TCGEN05_H
#include "gg_kernel.h"
#ifdef __cplusplus
extern "C" {
#endif
GG_DECLARE_CONFIG(k3_tcgen05) /* pair tile 256 x 256 x 64 (128 rows per CTA), 6 stages, 2 TMEM buffers */
int k3_tcgen05_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
