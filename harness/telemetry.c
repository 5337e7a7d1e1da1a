/* The GPU's power state over a timed series, from NVML: the share of the time the driver held the
 * clocks down for power or for heat (NVML's violation counters), and the SM clock at the end.
 * A sweep row carries these next to its time, so a row measured while the board sat at its
 * power cap says so (README, How we measure: Clocks). The board's mean power is not among them:
 * NVML's energy counter moves in steps far coarser than most series. The violation counters are
 * coarse too, and are divided by the host's clock, so a series capped throughout can read a
 * little above 100%.
 *
 * NVML ships with the driver, not the toolkit: it is opened at run time (dlopen) and kept open
 * for the process's life, so ggemm builds and runs where there is no driver, and a machine
 * without NVML simply records nothing (the row's fields stay empty). The few NVML types used are
 * declared here (NVML API reference: nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2,
 * nvmlDeviceGetViolationStatus, nvmlDeviceGetClockInfo); nothing is ever set, only read. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <string.h>
#include <time.h>

#include "gg_harness.h"

typedef struct NvmlDeviceOpaque *NvmlDevice;
typedef struct {
    unsigned long long reference_time; /* microseconds, host clock */
    unsigned long long violation_time; /* nanoseconds spent under the policy since the driver loaded */
} NvmlViolationTime;
/* nvmlReturn_t and NVML's other enums, as the C ABI passes them. */
typedef unsigned NvmlReturn;
enum { NVML_OK = 0, NVML_POLICY_POWER = 0, NVML_POLICY_THERMAL = 1, NVML_CLOCK_SM = 1 };
typedef NvmlReturn (*NvmlInit)(void);
typedef NvmlReturn (*NvmlByBusId)(const char *bus_id, NvmlDevice *dev);
typedef NvmlReturn (*NvmlViolation)(NvmlDevice dev, unsigned policy, NvmlViolationTime *time);
typedef NvmlReturn (*NvmlClock)(NvmlDevice dev, unsigned clock, unsigned *mhz);

static struct {
    int tried, ok;
    NvmlDevice dev;
    NvmlViolation violation;
    NvmlClock clock;
} nvml;

/* dlsym returns an object pointer; POSIX guarantees it converts to the function's type, ISO C
 * does not, hence the copy through memcpy. */
static int symbol(void *lib, const char *name, void *fn, size_t size) {
    void *p = dlsym(lib, name);
    if (p) memcpy(fn, &p, size);
    return p != NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The NVML handle of the current CUDA device, found by its PCI bus id; 0 if there is none. */
static int open_nvml(void) {
    if (nvml.tried) return nvml.ok;
    nvml.tried = 1;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    NvmlInit init;
    NvmlByBusId by_bus;
    if (!lib || !symbol(lib, "nvmlInit_v2", &init, sizeof init) ||
        !symbol(lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_bus, sizeof by_bus) ||
        !symbol(lib, "nvmlDeviceGetViolationStatus", &nvml.violation, sizeof nvml.violation) ||
        !symbol(lib, "nvmlDeviceGetClockInfo", &nvml.clock, sizeof nvml.clock) || init() != NVML_OK)
        return 0;
    char bus[32];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev) != cudaSuccess) {
        cudaGetLastError(); /* our own failed query, not an error of the caller's */
        return 0;
    }
    if (by_bus(bus, &nvml.dev) != NVML_OK) return 0;
    nvml.ok = 1;
    return 1;
}

void gg_telemetry_mark(GgTelemetryMark *m) {
    memset(m, 0, sizeof *m);
    if (!open_nvml()) return;
    NvmlViolationTime power, thermal;
    if (nvml.violation(nvml.dev, NVML_POLICY_POWER, &power) != NVML_OK ||
        nvml.violation(nvml.dev, NVML_POLICY_THERMAL, &thermal) != NVML_OK)
        return;
    m->power_capped_ns = power.violation_time;
    m->thermal_capped_ns = thermal.violation_time;
    m->seconds = now_s();
    m->valid = 1;
}

void gg_telemetry_since(const GgTelemetryMark *start, GgTelemetry *t) {
    memset(t, 0, sizeof *t);
    GgTelemetryMark end;
    gg_telemetry_mark(&end);
    const double span = end.seconds - start->seconds;
    unsigned mhz = 0;
    if (!start->valid || !end.valid || span <= 0 || nvml.clock(nvml.dev, NVML_CLOCK_SM, &mhz) != NVML_OK) return;
    t->power_capped_pct = 100.0 * 1e-9 * (double)(end.power_capped_ns - start->power_capped_ns) / span;
    t->thermal_capped_pct = 100.0 * 1e-9 * (double)(end.thermal_capped_ns - start->thermal_capped_ns) / span;
    t->sm_clock_mhz = (int)mhz;
    t->valid = 1;
}
