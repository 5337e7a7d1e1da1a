/* What the TMA stages' launchers do before a launch, in one place: the dynamic shared-memory
 * opt-in, the cluster occupancy query and the size of a persistent grid. Plain C; a launcher
 * (.cu) passes its __global__ function's address.
 *
 * Both the attribute and the occupancy belong to the function as loaded on one device (each
 * device has its own context and module), so they are set and asked once per (kernel, device),
 * not once per process: a process that launches on two GPUs opts in on both. */
#ifndef GG_LAUNCH_H
#define GG_LAUNCH_H
#include <stddef.h>
#include <cuda_runtime_api.h>

#include "gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Let `kernel` use `smem` bytes of dynamic shared memory on the current device (more than the
 * 48 KiB a launch gets without asking). */
cudaError_t gg_launch_smem_opt_in(const void *kernel, size_t smem);

/* How many clusters of `cluster` CTAs of `kernel`, launched as `cfg` describes (block, dynamic
 * shared memory, and the cluster shape from a launch attribute or __cluster_dims__), are
 * resident at once on the current device. cudaErrorInvalidConfiguration if not one fits. */
cudaError_t gg_launch_max_clusters(const void *kernel, const cudaLaunchConfig_t *cfg, int cluster,
                                   int *clusters);

/* CTAs for a persistent grid of clusters of `cluster` CTAs (1: no cluster), one per slot that is
 * resident at once: #SMs / cluster, and for real clusters no more than gg_launch_max_clusters
 * (a pair needs two SMs of one GPC), since a persistent CTA must never wait for a free slot.
 * The tile count is known only on the device, so the grid is also bounded from host-known sizes:
 * sum_e ceil(m_e / tile_m) <= min(tokens, tokens / tile_m + experts) row tiles (every tile has a
 * row), times ceil(n / tile_n) column blocks. *ctas is a multiple of `cluster`, >= cluster. */
cudaError_t gg_launch_persistent_ctas(const GgLaunch *p, const void *kernel,
                                      const cudaLaunchConfig_t *cfg, int cluster, int tile_m,
                                      int tile_n, int *ctas);
/* The same grid from the slots alone (#SMs / cluster, or fewer resident clusters), no GPU asked:
 * clusters = min(slots, that bound on tiles), at least 1; what `ggemm tiles` deals the tiles to. */
long gg_persistent_clusters(long slots, long tokens, long experts, long n, int tile_m, int tile_n);

/* The GgGpu (gg_kernel.h) a launch runs on: the current device's SMs, name and L2, asked once per
 * device (up to 64; thread-safe), with the launch's own SM count (p->num_sms, the persistent
 * grid's) where it gives one. p may be NULL: the device as it is. */
cudaError_t gg_launch_gpu(const GgLaunch *p, GgGpu *gpu);

#ifdef __cplusplus
}
#endif
#endif
