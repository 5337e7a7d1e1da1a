/* The launch helpers (gg_launch.h). CUDA errors are returned, not printed: the launchers call
 * them through CUDA_TRY, which names the call that failed. */
#include "gg_launch.h"

#include <pthread.h>
#include <stdio.h>

/* What has been done for one kernel on one device. A full table only means asking again. */
typedef struct {
    const void *kernel;
    int device;
    size_t smem;   /* dynamic shared memory opted in to; 0: not yet */
    int clusters;  /* resident clusters; 0: not asked yet */
} Seen;

static Seen seen[64];
static int seen_count;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of (kernel, device), created if new; NULL if the table is full. Call with seen_lock
 * held. */
static Seen *seen_entry(const void *kernel, int device) {
    for (int i = 0; i < seen_count; ++i)
        if (seen[i].kernel == kernel && seen[i].device == device) return &seen[i];
    if (seen_count == (int)(sizeof seen / sizeof *seen)) return NULL;
    seen[seen_count] = (Seen){kernel, device, 0, 0};
    return &seen[seen_count++];
}

cudaError_t gg_launch_smem_opt_in(const void *kernel, size_t smem) {
    int device;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    pthread_mutex_lock(&seen_lock);
    Seen *s = seen_entry(kernel, device);
    if (!s || s->smem < smem) {
        err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (err == cudaSuccess && s) s->smem = smem;
    }
    pthread_mutex_unlock(&seen_lock);
    return err;
}

cudaError_t gg_launch_max_clusters(const void *kernel, const cudaLaunchConfig_t *cfg, int cluster,
                                   int *clusters) {
    int device;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    pthread_mutex_lock(&seen_lock);
    Seen *s = seen_entry(kernel, device);
    int n = s ? s->clusters : 0;
    if (n == 0) {
        cudaLaunchConfig_t one = *cfg;  /* the query is about a grid of one cluster */
        one.gridDim.x = (unsigned)cluster;
        one.gridDim.y = one.gridDim.z = 1;
        err = cudaOccupancyMaxActiveClusters(&n, kernel, &one);
        if (err == cudaSuccess && s) s->clusters = n;
    }
    pthread_mutex_unlock(&seen_lock);
    if (err != cudaSuccess) return err;
    if (n < 1) {
        fprintf(stderr, "gg_launch_max_clusters: not one %d-CTA cluster fits on this GPU\n", cluster);
        return cudaErrorInvalidConfiguration;
    }
    *clusters = n;
    return cudaSuccess;
}

cudaError_t gg_launch_persistent_ctas(const GgLaunch *p, const void *kernel,
                                      const cudaLaunchConfig_t *cfg, int cluster, int tile_m,
                                      int tile_n, int *ctas) {
    GgGpu gpu;
    cudaError_t err = gg_launch_gpu(p, &gpu);
    if (err != cudaSuccess) return err;
    long slots = gpu.sms / cluster;
    if (cluster > 1) {
        int resident;
        if ((err = gg_launch_max_clusters(kernel, cfg, cluster, &resident)) != cudaSuccess) return err;
        if (resident < slots) slots = resident;
    }
    *ctas = cluster * (int)gg_persistent_clusters(slots, p->tokens, p->experts, p->n, tile_m, tile_n);
    return cudaSuccess;
}

long gg_persistent_clusters(long slots, long tokens, long experts, long n, int tile_m, int tile_n) {
    long row_tiles = tokens / tile_m + experts;
    if (row_tiles > tokens) row_tiles = tokens;
    const long bound = row_tiles * ((n + tile_n - 1) / tile_n);
    const long clusters = bound < slots ? bound : slots;
    return clusters > 1 ? clusters : 1;
}

cudaError_t gg_launch_gpu(const GgLaunch *p, GgGpu *gpu) {
    enum { DEVICES = 64 };
    static GgGpu known[DEVICES];
    static char names[DEVICES][256];
    int device;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    if (device < 0 || device >= DEVICES) return cudaErrorInvalidDevice;
    pthread_mutex_lock(&seen_lock);
    GgGpu g = known[device];
    pthread_mutex_unlock(&seen_lock);
    if (g.sms == 0) { /* asked outside the lock; the first answer is kept, its name never rewritten */
        struct cudaDeviceProp prop;
        if ((err = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) return err;
        pthread_mutex_lock(&seen_lock);
        if (known[device].sms == 0) {
            snprintf(names[device], sizeof names[device], "%s", prop.name);
            known[device] = (GgGpu){prop.multiProcessorCount, names[device], prop.l2CacheSize};
        }
        g = known[device];
        pthread_mutex_unlock(&seen_lock);
    }
    if (p && p->num_sms > 0) g.sms = p->num_sms;
    *gpu = g;
    return cudaSuccess;
}
