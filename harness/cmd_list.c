/* ggemm list: every registered configuration with its constants; on a GPU also its resources
 * (registers, shared memory, spills, blocks per SM and what limits them) or why it cannot
 * launch. `--format csv` is what the README tables and figures are generated from. */
#include <stdio.h>
#include <string.h>

#include "gg_commands.h"

typedef struct {
    int ok;                   /* resources below are valid */
    char status[256];         /* "ok", or why not */
    int regs, spill, static_smem, blocks, clusters;
    const char *limiter;
} Resources;

/* What one configuration takes on this GPU, from the runtime's view of its compiled code. */
static void resources(const GgImpl *impl, const GgDeviceInfo *d, const struct cudaDeviceProp *prop, Resources *r) {
    memset(r, 0, sizeof *r);
    const GgKernelInfo *info = &impl->info;
    struct cudaFuncAttributes attr;
    if (!gg_impl_runs_here(impl, d->cc_major, d->cc_minor, r->status, sizeof r->status)) return;
    if (cudaFuncGetAttributes(&attr, info->kernel) != cudaSuccess) {
        snprintf(r->status, sizeof r->status, "cannot launch: %s", cudaGetErrorString(cudaGetLastError()));
        return;
    }
    if ((long)info->dynamic_smem > d->smem_optin) {
        snprintf(r->status, sizeof r->status, "cannot launch: needs %zu B shared memory, GPU allows %ld",
                 info->dynamic_smem, d->smem_optin);
        return;
    }
    cudaFuncSetAttribute(info->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)info->dynamic_smem);
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->blocks, info->kernel, info->threads, info->dynamic_smem) !=
        cudaSuccess) {
        snprintf(r->status, sizeof r->status, "cannot launch: %s", cudaGetErrorString(cudaGetLastError()));
        return;
    }
    /* Which resource sets the residency: the smallest of the four limits. */
    const int warps = (info->threads + 31) / 32;
    const int regs_per_warp = ((attr.numRegs * 32 + 255) / 256) * 256;
    const int by_regs = regs_per_warp ? prop->regsPerMultiprocessor / (regs_per_warp * warps) : 99;
    const size_t smem = attr.sharedSizeBytes + info->dynamic_smem + prop->reservedSharedMemPerBlock;
    const int by_smem = (int)(prop->sharedMemPerMultiprocessor / smem);
    const int by_warps = prop->maxThreadsPerMultiProcessor / 32 / warps;
    int lim = prop->maxBlocksPerMultiProcessor;
    r->limiter = "blocks";
    if (by_warps <= lim) lim = by_warps, r->limiter = "warps";
    if (by_smem <= lim) lim = by_smem, r->limiter = "shared memory";
    if (by_regs <= lim) lim = by_regs, r->limiter = "registers";
    if (info->cluster > 1) {
        /* Clusters must fit inside one GPC: fewer may be resident than SMs / size. */
        cudaLaunchAttribute cl = {.id = cudaLaunchAttributeClusterDimension,
                                  .val.clusterDim = {(unsigned)info->cluster, 1, 1}};
        cudaLaunchConfig_t cfg = {.gridDim = {(unsigned)(d->sms / info->cluster * info->cluster), 1, 1},
                                  .blockDim = {(unsigned)info->threads, 1, 1},
                                  .dynamicSmemBytes = info->dynamic_smem,
                                  .attrs = &cl,
                                  .numAttrs = 1};
        if (cudaOccupancyMaxActiveClusters(&r->clusters, info->kernel, &cfg) != cudaSuccess) r->clusters = 0;
        cudaGetLastError();
    }
    r->regs = attr.numRegs;
    r->spill = (int)attr.localSizeBytes;
    r->static_smem = (int)attr.sharedSizeBytes;
    r->ok = 1;
    snprintf(r->status, sizeof r->status, "ok");
}

static void tile_text(const GgKernelInfo *info, char *buf, size_t len) {
    if (info->block_m) snprintf(buf, len, "%dx%d", info->block_m, info->block_n);
    else snprintf(buf, len, "ad.x%d", info->block_n); /* adaptive 128/64 rows */
}

int gg_cmd_list(const GgOptions *o) {
    GgDeviceInfo d;
    struct cudaDeviceProp prop;
    char why[512];
    const int gpu = gg_device_open(&d, why, sizeof why) == GG_EXIT_OK && cudaGetDeviceProperties(&prop, 0) == 0;
    if (o->csv) {
        puts("kernel,stage,arch,block_m,block_n,block_k,stages,threads,cluster,host_tiles,dynamic_smem,static_smem,"
             "registers,spill_bytes,blocks_per_sm,limiter,status,config,clusters_resident,lesson_step,pass");
    } else {
        if (gpu)
            printf("GPU: %s, sm_%d%d, %d SMs, %ld bytes shared memory per block (opt-in)\n", d.name, d.cc_major,
                   d.cc_minor, d.sms, d.smem_optin);
        else
            printf("no GPU (%s): resources are shown on a GPU only\n", why);
        printf("%-28s %-15s %-8s %-3s %s\n", "kernel", "arch", "tile", "stg",
               gpu ? "resources on this GPU | config" : "config");
    }
    const char *group = "";
    for (int i = 0; i < gg_kernel_count + gg_lab_count + gg_peer_count; ++i) {
        GgImpl impl;
        gg_impl_find(gg_impl_name(i), &impl);
        const int step = impl.kernel ? impl.kernel->step : 0;
        /* Text: a heading per stage (labs and peers apart), in the registry's order. */
        const char *g = i >= gg_kernel_count + gg_lab_count ? "peers" : i >= gg_kernel_count ? "labs" : impl.stage;
        if (!o->csv && strcmp(g, group)) {
            printf("-- %s%s\n", g, step && !strcmp(impl.stage, "k3_wgmma") ? " (lesson steps marked; k3_wgmma.h explains the names)" : "");
            group = g;
        }
        const GgKernelInfo *info = &impl.info;
        char arch[64], tile[32];
        gg_impl_arch(&impl, arch, sizeof arch);
        Resources r = {.status = "no GPU"};
        if (impl.peer) snprintf(r.status, sizeof r.status, "%s", impl.peer->script ? impl.peer->script : "in-process");
        else if (gpu) resources(&impl, &d, &prop, &r);
        if (o->csv) {
            printf("%s,%s,%s,", impl.name, impl.stage, arch);
            if (impl.kernel)
                printf("%d,%d,%d,%d,%d,%d,%d,%zu,", info->block_m, info->block_n, info->block_k, info->stages,
                       info->threads, info->cluster, info->host_tiles, info->dynamic_smem);
            else
                printf(",,,,,,,,");
            if (r.ok) printf("%d,%d,%d,%d,%s,", r.static_smem, r.regs, r.spill, r.blocks, r.limiter);
            else printf(",,,,,");
            gg_csv_text(stdout, r.status);
            putchar(',');
            gg_csv_text(stdout, impl.config);
            if (r.ok && info->cluster > 1) printf(",%d,", r.clusters);
            else printf(",,");
            if (step) printf("%d", step);
            printf(",%s\n", gg_pass_name(impl.info.pass));
            continue;
        }
        if (!impl.kernel) {
            printf("%-28s %-15s %-8s %-3s %s%s%s\n", impl.name, "peer", "-", "-", gpu ? r.status : "",
                   gpu ? " | " : "", impl.config);
            continue;
        }
        tile_text(info, tile, sizeof tile);
        char res[512] = "";
        if (gpu && r.ok) {
            int n = snprintf(res, sizeof res, "%d regs, %d+%zu B smem, %d spill B, %d threads, %d block(s)/SM (%s)",
                             r.regs, r.static_smem, info->dynamic_smem, r.spill, info->threads, r.blocks, r.limiter);
            if (info->cluster > 1)
                snprintf(res + n, sizeof res - (size_t)n, ", clusters of %d: %d resident", info->cluster, r.clusters);
        } else if (gpu) {
            snprintf(res, sizeof res, "%s", r.status);
        }
        char config[320];
        if (step) snprintf(config, sizeof config, "step %d: %s", step, impl.config);
        else snprintf(config, sizeof config, "%s", impl.config);
        printf("%-28s %-15s %-8s %-3d %s%s%s\n", impl.name, arch, tile, info->stages, res, gpu ? " | " : "", config);
    }
    gg_release_buffers();
    return GG_EXIT_OK;
}
