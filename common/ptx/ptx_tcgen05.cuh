// Blackwell (sm_100a) tensor-core path: Tensor Memory, tcgen05.mma with CTA pairs, and the
// TMA form that lets both CTAs of a pair signal one barrier. Used by k3_tcgen05.
// Every tcgen05 wrapper here uses .cta_group::2: the PTX ISA requires all tcgen05
// instructions of one kernel to name the same cta_group.
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/
#pragma once
#include <stdint.h>
#include "ptx_ampere.cuh"  // smem_u32

namespace gg {

// ---- warp and cluster helpers ----

// One lane of the (fully active) warp gets true, the others false.
// #parallel-synchronization-and-communication-instructions-elect-sync
__device__ __forceinline__ bool elect_one_sync() {
    uint32_t elected;
    asm volatile(
        "{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(elected));
    return elected != 0;
}

// Address of the same shared-memory variable in CTA `cta` of the cluster, as a
// shared::cluster address (what TMA and tcgen05.commit take for a remote barrier).
// #data-movement-and-conversion-instructions-mapa
__device__ __forceinline__ uint32_t cluster_smem_addr(const void *local, uint32_t cta) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(local)), "r"(cta));
    return remote;
}

// ---- TMA into a CTA pair: #data-movement-and-conversion-instructions-cp-async-bulk-tensor ----
// .cta_group::2 lets the completion (complete_tx) land on a barrier in the peer CTA of the
// pair: both CTAs load their halves into their own shared memory and count the bytes on
// the leader's barrier. `bar` is a shared::cluster address (cluster_smem_addr).

__device__ __forceinline__ void tma_load_2d_pair(void *smem, const void *tmap, int x, int y, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(smem)),
        "l"(tmap), "r"(x), "r"(y), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void tma_load_3d_pair(void *smem, const void *tmap, int x, int y, int z,
                                                 uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(smem)),
        "l"(tmap), "r"(x), "r"(y), "r"(z), "r"(bar)
        : "memory");
}

// ---- Tensor Memory allocation: #tcgen05-instructions-tcgen05-alloc-dealloc-relinquish-alloc-permit ----
// Warp-wide (.sync.aligned); with cta_group::2 one warp in EACH CTA of the pair issues it and
// the two allocate the same columns in both CTAs together. ncols: power of 2 in [32, 512].
// The TMEM address (lane 0, first column) is written to the shared-memory word `slot`.

__device__ __forceinline__ void tmem_alloc_pair(uint32_t *slot, uint32_t ncols) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(smem_u32(slot)),
                 "r"(ncols)
                 : "memory");
}
// After this the CTA may not allocate again; lets a later CTA on this SM allocate at once.
__device__ __forceinline__ void tmem_relinquish_alloc_permit_pair() {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc_pair(uint32_t taddr, uint32_t ncols) {
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(ncols)
                 : "memory");
}

// ---- MMA: #tcgen05-mma-instructions-mma ----
// D[tmem] (+)= A[smem] * B[smem] for the whole pair (M = 256 with cta_group::2), issued by ONE
// thread of the leader CTA. Descriptors use the leader's local addresses; the hardware
// reads the peer's halves at the same offsets. accumulate = false overwrites D.
__device__ __forceinline__ void tcgen05_mma_f16_pair(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                                     uint32_t idesc, bool accumulate) {
    asm volatile(
        "{\n .reg .pred acc;\n setp.ne.u32 acc, %4, 0;\n"
        " tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, acc;\n}\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"((uint32_t)accumulate)
        : "memory");
}

// ---- commit: #tcgen-async-sync-operations-commit ----
// When every asynchronous tcgen05 operation this thread issued so far has completed, arrive
// (count 1) on the barrier at bar's offset in each CTA of cta_mask. Must be issued by the MMA
// thread. The PTX ISA describes only this tracking and arrival, no fence; the waiting threads
// order their own tcgen05 accesses after the wait with tcgen05.fence::after_thread_sync.
__device__ __forceinline__ void tcgen05_commit_pair_multicast(uint64_t *bar, uint16_t cta_mask) {
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
        " [%0], %1;\n" ::"r"(smem_u32(bar)),
        "h"(cta_mask)
        : "memory");
}

// ---- TMEM -> registers: #tcgen05-instructions-tcgen05-ld, #tcgen05-instructions-tcgen05-wait ----
// Warp-wide. Shape 32x32b, x32: lane L of the warp reads TMEM lane (taddr.lane + L), 32
// consecutive 32-bit columns starting at taddr.column, into r[0..31]. A warp may only touch
// lanes [32 (warp % 4), +32). The registers are valid only after tmem_wait_ld(r).
__device__ __forceinline__ void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t r[32]) {
    asm volatile(
        "tcgen05.ld.sync.aligned.32x32b.x32.b32"
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},"
        " [%32];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
          "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
          "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]),
          "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]),
          "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
        : "r"(taddr));
}
// Wait for this thread's earlier tcgen05.ld. The registers of the load are passed through
// ("+r") so that the compiler cannot move any use of them above the wait.
__device__ __forceinline__ void tmem_wait_ld(uint32_t r[32]) {
    asm volatile("tcgen05.wait::ld.sync.aligned;\n"
                 : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]), "+r"(r[4]), "+r"(r[5]), "+r"(r[6]),
                   "+r"(r[7]), "+r"(r[8]), "+r"(r[9]), "+r"(r[10]), "+r"(r[11]), "+r"(r[12]), "+r"(r[13]),
                   "+r"(r[14]), "+r"(r[15]), "+r"(r[16]), "+r"(r[17]), "+r"(r[18]), "+r"(r[19]), "+r"(r[20]),
                   "+r"(r[21]), "+r"(r[22]), "+r"(r[23]), "+r"(r[24]), "+r"(r[25]), "+r"(r[26]), "+r"(r[27]),
                   "+r"(r[28]), "+r"(r[29]), "+r"(r[30]), "+r"(r[31])
                 :
                 : "memory");
}

// ---- ordering around thread synchronisation: #tcgen05-special-sync-operations-fence ----
// before: order this thread's earlier tcgen05 operations before a following barrier arrive /
//         cluster barrier; after: order later tcgen05 operations after a preceding wait.
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

}  // namespace gg
