// Asynchronous copies and their barriers (sm_90+): mbarrier, TMA (cp.async.bulk.tensor),
// proxy fences, cluster helpers. Used by k2_tma_ws, k3_wgmma and k3_tcgen05.
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/
#pragma once
#include <stdint.h>
#include "ptx_ampere.cuh"  // smem_u32

namespace gg {

// ---- mbarrier: #parallel-synchronization-and-communication-instructions-mbarrier ----

// #parallel-synchronization-and-communication-instructions-mbarrier-init
__device__ __forceinline__ void mbarrier_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
// Make the initialised barriers visible to the async proxy (TMA) and the cluster.
// #parallel-synchronization-and-communication-instructions-membar (fence.mbarrier_init)
__device__ __forceinline__ void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrive and announce how many bytes the async copies will deliver to this phase.
// #parallel-synchronization-and-communication-instructions-mbarrier-expect-tx
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
}
// #parallel-synchronization-and-communication-instructions-mbarrier-arrive
__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// Arrive on the barrier at the same offset in CTA `cta` of the cluster, with the default
// semantics (.release at .cta scope), as CUTLASS's ClusterBarrier does. Our remote arrives
// only say "done with this stage / this TMEM buffer": the reads they cover were retired
// by wgmma.wait_group or ordered by tcgen05 fences; they publish no data. In the SASS
// (nvcc 13.0, sm_90a and sm_100a) this is one SYNCS.ARRIVE.TRANS64.RED.A1T0 on a cluster
// shared address (mapa folds into the address arithmetic) and no MEMBAR. Written with
// .release.cluster, the same arrive gets MEMBAR.ALL.CTA, MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR
// in front of it, on every stage. The MEMBAR.ALL.GPU that the paired kernels do contain
// belong to cluster_sync below.
// #data-movement-and-conversion-instructions-mapa
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t *bar, uint32_t cta) {
    asm volatile(
        "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
        " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
        "r"(cta)
        : "memory");
}
// Spin until the phase with the given parity has completed.
// #parallel-synchronization-and-communication-instructions-mbarrier-test-wait-try-wait
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t *bar, uint32_t parity) {
    asm volatile(
        "{\n .reg .pred done;\n"
        "wait_%=:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        " @!done bra wait_%=;\n}\n" ::"r"(smem_u32(bar)),
        "r"(parity)
        : "memory");
}

// Named CTA barrier `id` (1..15; 0 is __syncthreads) for `threads` threads (a multiple of 32):
// sync waits until `threads` have arrived (sleeping in hardware, no polling); arrive counts this
// warp and goes on. #parallel-synchronization-and-communication-instructions-bar-barrier
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
    asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
    asm volatile("barrier.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// cp.async completion as an mbarrier arrival (k4's gathering producer): once every cp.async
// this thread issued before it has landed, the barrier gets one arrival. .noinc: that arrival
// is one of the count the barrier was initialised with (the thread does not add to it).
// #parallel-synchronization-and-communication-instructions-cp-async-mbarrier-arrive
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint64_t *bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar))
                 : "memory");
}

// ---- TMA: #data-movement-and-conversion-instructions-cp-async-bulk-tensor ----
// One thread issues; completion is counted in bytes on `bar`. Out-of-bounds box
// elements are filled with zeros, so a box may hang off the tensor's edge.

__device__ __forceinline__ void tma_load_2d(void *smem, const void *tmap, int x, int y, uint64_t *bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(smem)),
        "l"(tmap), "r"(x), "r"(y), "r"(smem_u32(bar))
        : "memory");
}
__device__ __forceinline__ void tma_load_3d(void *smem, const void *tmap, int x, int y, int z,
                                            uint64_t *bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(smem)),
        "l"(tmap), "r"(x), "r"(y), "r"(z), "r"(smem_u32(bar))
        : "memory");
}
// Same box delivered to every CTA in cta_mask, at the same smem offset, each
// completing on its own barrier at bar's offset.
__device__ __forceinline__ void tma_load_2d_multicast(void *smem, const void *tmap, int x, int y, uint64_t *bar,
                                                      uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(smem)),
        "l"(tmap), "r"(x), "r"(y), "r"(smem_u32(bar)), "h"(cta_mask)
        : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(void *smem, const void *tmap, int x, int y, int z,
                                                      uint64_t *bar, uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(smem_u32(smem)),
        "l"(tmap), "r"(x), "r"(y), "r"(z), "r"(smem_u32(bar)), "h"(cta_mask)
        : "memory");
}

// TMA store, shared -> global, tracked in this thread's bulk async-group (not an mbarrier).
// Box elements past the tensor's edges are not written: the map clips the store. smem must
// not be written again until the group has read it (bulk_wait_group_read), and the generic
// writes that filled it must be ordered before by fence_proxy_async_smem.
__device__ __forceinline__ void tma_store_3d(const void *tmap, const void *smem, int x, int y, int z) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(tmap),
                 "r"(smem_u32(smem)), "r"(x), "r"(y), "r"(z)
                 : "memory");
}
// #data-movement-and-conversion-instructions-cp-async-bulk-commit-group
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// #data-movement-and-conversion-instructions-cp-async-bulk-wait-group: at most N of this
// thread's bulk groups still pending; .read: pending only in writing, their sources read.
template <int N> __device__ __forceinline__ void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void bulk_wait_group() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

// Orders this thread's generic-proxy shared-memory accesses against its later async-proxy
// accesses (TMA, wgmma, tcgen05), both ways:
//  - generic writes (st.shared, stmatrix) that a later TMA store, wgmma or tcgen05 must read;
//  - generic reads (ldmatrix) that must be complete before a later async-proxy write lands
//    on the same bytes. k2 releases a stage with this fence before its mbarrier arrive: the
//    producer's next TMA into that stage must not overwrite what ldmatrix is still reading.
// #parallel-synchronization-and-communication-instructions-membar (fence.proxy.async)
__device__ __forceinline__ void fence_proxy_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- clusters: #parallel-synchronization-and-communication-instructions-barrier-cluster ----
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Every thread of every CTA of the cluster; warps converged (.aligned). The .release arrive
// is where the paired kernels' MEMBAR.ALL.GPU comes from (SASS: MEMBAR.ALL.CTA,
// MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR, UCGABAR_ARV); the kernels call it only at start and end.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
}

}  // namespace gg
