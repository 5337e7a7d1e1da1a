#!/usr/bin/env python3
"""Peer: the MoE FFN layer in eager PyTorch (torch._grouped_mm for the two expert GEMMs).

The cases come from `ggemm moe --model all --tokens ... --list` (model, tokens, d, F, experts,
top-k, renorm, seed, the roofline floor and the GEMM FLOPs, computed by the C harness), so this
script re-implements neither the case list nor the floor. Same layer as k4_moe: route (X·Wr in
fp32 from the bf16 X and Wr, as DeepSeek-V3, Qwen3 and Mixtral compute their gate; softmax in
fp32, top-k with ties to the lower expert, optional renormalisation), permute (routed rows
grouped by expert, token order within an expert), GEMM1 (X·W1[e], W1 [E, d, 2F] with
gate columns [0, F) and up columns [F, 2F), then H = silu(gate) * up in bf16), GEMM2 (H·W2[e]),
combine (out[t] = sum over its k experts of weight · row, in fp32, then bf16). Checked against an
fp32 reference of the same routing, timed with the same protocol (warm-up, L2 flush before every
rep, CUDA events, median with p10/p90), and once more with events between the steps for each
step's median and p10/p90; rows are appended to moe.csv in its own column order (impl torch_moe, path eager).
The inputs, the router, the check and the timing are peer_common.py's, shared with liger_moe.py.

Backward (--backward, on the cases of `ggemm moe --backward --list`): torch autograd of the same
eager layer on the same inputs and routing (X, Wr, W1, W2 leaves; a dOut from the case's seed + 1),
the backward alone timed with the same protocol (the forward's graph kept, gradients cleared
before each rep), dX, dWr, dW1, dW2 checked against the fp32 layer's autograd gradients
(peer_common.moe_reference_grads) with the same tolerance; rows with pass = backward and no
per-step times.

usage: torch_moe.py --csv results/h200/moe.csv --cases CASES.csv [--reps 30] [--warmup 5] [--backward]
Exit codes: 0 ok, 1 a case failed its check or ended in an error, 2 bad usage, 77 no GPU, no torch
or no torch._grouped_mm. Each case's row is appended as soon as it is checked and timed; a case
that runs out of GPU memory or that the op refuses is one line and no row, not a failure
(peer_common.each_case).
"""
import peer_common


def layer(torch, case, x, w1, w2):
    """The eager steps after the router, and the shapes of the routed-row buffers they allocate."""
    import torch.nn.functional as fn
    T, d, F, E, k = (case[c] for c in ("tokens", "d", "f", "experts", "topk"))
    dev = x.device

    def forward(idx, w, mark):
        mark = mark or (lambda i: None)
        experts, order = torch.sort(idx.flatten(), stable=True)  # stable: token order within an expert
        # End offsets by binary search, not bincount: bincount syncs with the host.
        offs = torch.searchsorted(experts, torch.arange(E, device=dev), right=True, out_int32=True)
        inv = torch.empty_like(order)  # where each (token, choice) landed, for the combine
        inv[order] = torch.arange(order.numel(), device=dev)
        xg = x[order // k]
        mark(2)
        u = torch._grouped_mm(xg, w1, offs=offs, out_dtype=torch.bfloat16)
        h = fn.silu(u[:, :F]) * u[:, F:]
        mark(3)
        y = torch._grouped_mm(h, w2, offs=offs, out_dtype=torch.bfloat16)
        mark(4)
        # Gather each token's k rows back and sum them weighted, in fp32. (index_add_ into an fp32
        # output does the same with atomics: on the H200, 1.7-2x slower from 4096 tokens up.)
        return (y[inv].view(T, k, d) * w[:, :, None]).sum(dim=1).to(torch.bfloat16)

    return forward, [(T * k, 2 * F), (T * k, d)]


def refuse(case):
    if case["d"] % 8 or case["f"] % 8:  # torch._grouped_mm wants 16-byte aligned row strides
        return "d and F must be multiples of 8 for torch._grouped_mm"
    return None


if __name__ == "__main__":
    peer_common.moe_main(__doc__, "torch_moe", "eager", layer, round_u=True, refuse=refuse)
