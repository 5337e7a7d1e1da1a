#!/usr/bin/env python3
"""Peer: Liger-Kernel's fused MoE (`liger_kernel.ops.fused_moe`, Triton) on k4_moe's layer.

Liger's op takes the router's output, top-k expert ids [T, k] int32 and weights [T, k], and runs
the rest of the layer in its own kernels: routing metadata (a histogram, a prefix sum and a
scatter: the permutation, with one wait for the host to size its tile list; from there on the GPU
runs as fast as Python launches, and the steps' times include that), GEMM1 with the row
gather and SwiGLU fused in (H = silu(gate) * up from the fp32 accumulators, stored in bf16; it also
stores the pre-activation U for its backward), GEMM2, and a weighted gather-sum over each token's k
rows in fp32. It has no router: it is given the one torch_moe.py uses (peer_common.moe_route, same
inputs from the same seed, so the two peers' rows have the same routing), and its route column is
that router's time. Its weights are the Hugging Face layout, K contiguous: gate_up_proj
[E, 2F, d] (rows [0, F) gate, [F, 2F) up) and down_proj [E, d, F]; ours are N contiguous, so they
are transposed once per case, before anything is timed (as k4_moe packs W1 once in its setup).

Checked against the same fp32 reference and tolerance as torch_moe.py (U not rounded before
SwiGLU, as Liger computes it), timed with the same protocol; the steps are timed inside Liger's own
forward, with events recorded where it passes from one step to the next (liger_steps). Triton's
autotuner picks the kernels' tile configurations at their first call for a (d, F); every choice
(the forward's and the backward's kernels) is cleared before each case, so that every (model, T)
runs with configurations tuned for its own size.
The first call for a (d, F) also compiles every configuration it tries, minutes in all; Liger's
switch LIGER_FUSED_MOE_AUTOTUNE=0 (set in the environment) pins one configuration per kernel, for
a quick check that is not a fair timing.

Backward (--backward): LigerFusedMoEFunction is an autograd Function with its own backward (dX,
the two weight gradients in its layout and the gradient of the top-k weights, which flows on
through the torch router's softmax by autograd into dWr and dX); the peer times that backward and
checks dX, dWr, dW1, dW2 against peer_common.moe_reference_grads, as torch_moe.py --backward.

usage: liger_moe.py --csv results/h200/moe.csv --cases CASES.csv [--reps 30] [--warmup 5] [--backward]
Exit codes: 0 ok, 1 a case failed its check or ended in an error, 2 bad usage, 77 no GPU, no torch
or no liger_kernel. Each case's row is appended as soon as it is checked and timed; a case that
runs out of GPU memory or that the op refuses is one line and no row, not a failure
(peer_common.each_case).
"""
import contextlib
import warnings

import peer_common

fused_moe = None  # liger_kernel.ops.fused_moe, imported by load()


def load():
    """Import Liger's op; None, or the one-line reason to skip."""
    global fused_moe
    try:
        with warnings.catch_warnings():  # one line or none on stderr (peer_common.parse)
            warnings.simplefilter("ignore")
            import liger_kernel.ops.fused_moe as module
    except ImportError as e:
        return f"liger_kernel is not importable ({e}; pip install liger-kernel)"
    fused_moe = module
    return None


def version(torch):
    import importlib.metadata
    import triton
    return f"liger-kernel {importlib.metadata.version('liger-kernel')}, triton {triton.__version__}, torch {torch.__version__}"


@contextlib.contextmanager
def liger_steps(mark):
    """Events at Liger's step boundaries inside its own forward: mark(2) when its routing metadata
    returns, mark(3) as GEMM2 launches, mark(4) as the gather-sum starts. The forward looks these
    three names up in its module at each call, so they are wrapped there for the duration."""
    names = ("compute_routing_metadata", "_fused_down_proj_kernel", "_token_aggregation")
    saved = [getattr(fused_moe, n) for n in names]
    metadata, down_proj, aggregation = saved

    def routing_metadata(*args, **kwargs):
        result = metadata(*args, **kwargs)
        mark(2)
        return result

    class DownProj:  # kernel[grid](...): mark, then launch
        def __getitem__(self, grid):
            launch = down_proj[grid]

            def run(*args, **kwargs):
                mark(3)
                return launch(*args, **kwargs)
            return run

    def token_aggregation(*args, **kwargs):
        mark(4)
        return aggregation(*args, **kwargs)

    for n, f in zip(names, (routing_metadata, DownProj(), token_aggregation)):
        setattr(fused_moe, n, f)
    try:
        yield
    finally:
        for n, f in zip(names, saved):
            setattr(fused_moe, n, f)


def clear_autotuners():
    """Forget the configurations Triton's autotuners chose for every kernel of Liger's fused MoE,
    the forward's and the backward's (an Autotuner keeps its choice per key in .cache), found in
    its op module and in its kernels module; returns how many autotuners there are."""
    import importlib
    from triton.runtime.autotuner import Autotuner
    modules = [fused_moe]
    with contextlib.suppress(ImportError):
        modules.append(importlib.import_module("liger_kernel.ops.fused_moe_kernels"))
    tuners = {id(v): v for m in modules for v in vars(m).values() if isinstance(v, Autotuner)}
    for tuner in tuners.values():
        tuner.cache.clear()
    return len(tuners)


def liger_weights(w1, w2):
    """Our W1 [E, d, 2F] and W2 [E, F, d] (N contiguous) in Liger's layout, contiguous (its op
    would otherwise copy them at every call): gate_up_proj[e, n, c] = W1[e, c, n] and
    down_proj[e, c, i] = W2[e, i, c]. The gate/up split is the same on both sides: first F gate."""
    return w1.transpose(1, 2).contiguous(), w2.transpose(1, 2).contiguous()


def layer(torch, case, x, w1, w2):
    """Liger's forward after the router, and the shapes of the buffers it allocates."""
    T, d, F, k = (case[c] for c in ("tokens", "d", "f", "topk"))
    # Leaves of their own in Liger's layout (the backward's weight gradients are Liger's, turned
    # back into ours after timing), so that no transpose of ours enters the timed backward.
    gate_up_proj, down_proj = (t.detach().requires_grad_(w1.requires_grad) for t in liger_weights(w1, w2))
    clear_autotuners()

    def forward(idx, w, mark):
        if mark is None:
            return fused_moe.LigerFusedMoEFunction.apply(x, gate_up_proj, down_proj, idx, w)
        with liger_steps(mark):
            return fused_moe.LigerFusedMoEFunction.apply(x, gate_up_proj, down_proj, idx, w)

    forward.leaves = (gate_up_proj, down_proj)
    forward.grads = lambda: (gate_up_proj.grad.transpose(1, 2), down_proj.grad.transpose(1, 2))
    # pre-activation U, H, Y (routed rows) and out (tokens)
    return forward, [(T * k, 2 * F), (T * k, F), (T * k, d), (T, d)]


if __name__ == "__main__":
    peer_common.moe_main(__doc__, "liger_moe", "fused", layer, round_u=False, ids_dtype="int32", grouped_mm=False,
                         load=load, version=version)
