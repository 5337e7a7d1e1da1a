/* k0_fma: the registered configurations of stage 0 (see k0_fma.cu). */
#ifndef K0_FMA_H
#define K0_FMA_H
#include "gg_kernel.h"
#ifdef __cplusplus
extern "C" {
#endif
GG_DECLARE_CONFIG(k0_fma)
int k0_fma_can_implement(const GgShape *s, char *why, size_t len);
#ifdef __cplusplus
}
#endif
#endif
