// Programmatic dependent launch (sm_90+): a kernel launched with the
// cudaLaunchAttributeProgrammaticStreamSerialization attribute may start while the kernel before
// it in the stream is still running; these two instructions fence that overlap.
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/
#pragma once

namespace gg {

// #parallel-synchronization-and-communication-instructions-griddepcontrol
// griddepcontrol.wait: block until every grid this one depends on has completed and its memory
// operations are visible. Nothing this kernel reads that an earlier kernel wrote may be read
// before it. Without a programmatic launch it returns at once.
__device__ __forceinline__ void griddep_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// griddepcontrol.launch_dependents: this CTA lets the next kernel's CTAs be scheduled (once every
// CTA of this grid has said so or exited). It publishes nothing: the dependent still waits.
__device__ __forceinline__ void griddep_launch_dependents() {
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

}  // namespace gg
