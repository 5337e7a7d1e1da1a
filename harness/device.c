/* The GPU: is there one this binary can use, and if not, why not, in one line. */
#include <string.h>

#include "gg_harness.h"

int gg_driver_version(void) {
    int v = 0;
    if (cudaDriverGetVersion(&v) != cudaSuccess) v = 0; /* 0: no driver library at all */
    return v;
}

int gg_runtime_version_built(void) { return CUDART_VERSION; }

static void version(int v, char *buf, size_t len) { snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10); }

int gg_device_open(GgDeviceInfo *d, char *why, size_t len) {
    memset(d, 0, sizeof *d);
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        /* cudaGetDeviceCount says "driver version is insufficient" both when there is no
         * driver and when it is too old: the driver's own version tells them apart. */
        const int drv = gg_driver_version(), rt = gg_runtime_version_built();
        char dv[16], rv[16];
        version(drv, dv, sizeof dv);
        version(rt, rv, sizeof rv);
        if (drv == 0)
            snprintf(why, len, "no NVIDIA driver found (no libcuda): no GPU to run on (built with CUDA runtime %s)", rv);
        else if (drv < rt)
            snprintf(why, len, "the NVIDIA driver supports CUDA %s, older than the CUDA runtime %s this was built with",
                     dv, rv);
        else if (err == cudaSuccess || err == cudaErrorNoDevice)
            snprintf(why, len, "no CUDA GPU visible (driver for CUDA %s found, device count 0)", dv);
        else
            snprintf(why, len, "no usable CUDA GPU: %s", cudaGetErrorString(err));
        return GG_EXIT_NO_GPU;
    }
    struct cudaDeviceProp prop;
    int khz = 0;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        cudaDriverGetVersion(&d->driver_version) != cudaSuccess ||
        cudaRuntimeGetVersion(&d->runtime_version) != cudaSuccess) {
        snprintf(why, len, "cannot read the GPU's properties: %s", cudaGetErrorString(cudaGetLastError()));
        return GG_EXIT_NO_GPU;
    }
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    d->cc_major = prop.major;
    d->cc_minor = prop.minor;
    d->sms = prop.multiProcessorCount;
    d->l2_bytes = prop.l2CacheSize;
    d->smem_optin = (long)prop.sharedMemPerBlockOptin;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess) d->sm_clock_mhz = khz / 1000;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess) d->mem_clock_mhz = khz / 1000;
    if (gg_pool_open()) {
        snprintf(why, len, "%s", gg_error());
        return GG_EXIT_NO_GPU;
    }
    return GG_EXIT_OK;
}
