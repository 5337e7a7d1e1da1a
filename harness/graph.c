/* A device-scheduled kernel inside a CUDA graph: capture once, change the split in device
 * memory, replay, and check the replay exactly as gg_run_case checks a launch. */
#include <string.h>

#include "gg_harness.h"

int gg_graph_replay_check(const GgImpl *entry, const GgProblem *p, const GgProblem *changed,
                          unsigned long long seed, GgCheck *chk, char *why, size_t why_len) {
    GgImpl copy; /* an entry point's choice reads the shape only: the changed split keeps it */
    const GgImpl *impl = gg_impl_for(entry, p, &copy);
    memset(chk, 0, sizeof *chk);
    gg_error_clear();
    GgDeviceInfo d;
    if (gg_device_open(&d, why, why_len)) return GG_EXIT_NO_GPU;
    if (impl->kernel && impl->info.host_tiles) {
        snprintf(why, why_len, "%s reads a host-built tile list: a replay cannot change its split", impl->name);
        return GG_EXIT_USAGE;
    }
    GgLaunch l;
    int rc = gg_prepare(impl, p, &d, &l, why, why_len);
    if (rc != GG_EXIT_OK) return rc;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (cudaStreamBeginCapture(gg_stream(), cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        snprintf(why, why_len, "stream capture: %s", cudaGetErrorString(cudaGetLastError()));
        return GG_EXIT_CHECK;
    }
    const cudaError_t err = gg_launch(impl, &l);
    const cudaError_t end = cudaStreamEndCapture(gg_stream(), &graph);
    if (err != cudaSuccess || end != cudaSuccess) {
        if (graph) cudaGraphDestroy(graph);
        snprintf(why, why_len, "launch failed during capture: %s", cudaGetErrorString(err != cudaSuccess ? err : end));
        return GG_EXIT_CHECK;
    }
    rc = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess ? GG_EXIT_OK : GG_EXIT_CHECK;
    cudaGraphDestroy(graph);
    if (rc) {
        snprintf(why, why_len, "graph instantiation failed: %s", cudaGetErrorString(cudaGetLastError()));
        return rc;
    }
    /* New split, same buffers: only the device-side row offsets change. */
    if (cudaMemcpyAsync((void *)l.row_offsets, changed->offsets, sizeof(int) * (size_t)(changed->experts + 1),
                        cudaMemcpyHostToDevice, gg_stream()) != cudaSuccess ||
        gg_check_prepare(&l, changed, seed) || cudaGraphLaunch(exec, gg_stream()) != cudaSuccess ||
        gg_check_output(&l, changed, 0, chk)) {
        gg_error_set("%s", cudaGetErrorString(cudaGetLastError()));
        snprintf(why, why_len, "graph replay: %s", gg_error());
        rc = GG_EXIT_CHECK;
    } else if (!chk->pass) {
        char what[400];
        gg_check_describe(chk, what, sizeof what);
        snprintf(why, why_len, "graph replay with a new split: %s", what);
        rc = GG_EXIT_CHECK;
    }
    cudaGraphExecDestroy(exec);
    return rc;
}
