#!/usr/bin/env python3
"""The MoE peers' layers run on the CPU, where torch, Triton and liger_kernel are installed (a skip,
exit 77 with one line, otherwise): torch_moe's eager steps (torch._grouped_mm on CPU tensors) and
Liger's fused MoE under Triton's interpreter (TRITON_INTERPRET=1), each on small layers (empty and
one-row experts, top-1, top-k = 8, T not a multiple of Liger's 64-row tiles) against
peer_common's fp32 reference, and Liger's step marks (liger_moe.liger_steps) in order, its output
the same with them and its module left as it was. The interpreter computes bf16 wrongly (numpy has
no bf16), so Liger runs in fp16 here; its kernels read the dtype from their pointers. The GPU run
checks both in bf16. usage: python3 tests/peers_torch_cpu.py"""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
os.environ["LIGER_FUSED_MOE_AUTOTUNE"] = "0"  # one configuration: the interpreter cannot time any
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness", "peers"))
try:
    import torch
    import triton
    import triton.runtime.autotuner
except ImportError as e:
    print(f"peers_torch_cpu: skip: {e} (pip install torch liger-kernel)")
    sys.exit(77)
import liger_moe  # noqa: E402
import peer_common  # noqa: E402
import torch_moe  # noqa: E402

why = liger_moe.load()
if why:
    print(f"peers_torch_cpu: skip: {why}")
    sys.exit(77)

# (tokens, d, F, experts, top-k, renorm): more routed rows than a tile; experts left empty and
# with one row; top-1; top-k = 8 without renormalisation.
LAYERS = [(37, 64, 96, 8, 3, 1), (5, 32, 64, 16, 8, 0), (70, 64, 64, 4, 1, 1), (3, 64, 128, 64, 2, 1)]
failed = 0
for T, d, F, E, k, renorm in LAYERS:
    case = {"model": "cpu", "tokens": T, "d": d, "f": F, "experts": E, "topk": k, "renorm": renorm, "seed": 3}
    x, wr, w1, w2 = peer_common.moe_inputs(torch, case, torch.device("cpu"))
    name = f"T={T} d={d} F={F} E={E} top-{k}"

    idx, w = peer_common.moe_route(torch, x, wr, k, renorm)
    forward, _ = torch_moe.layer(torch, case, x, w1, w2)
    marks = []
    passed, bad, err, _ = peer_common.moe_check(forward(idx, w, marks.append),
                                                peer_common.moe_reference(torch, x, w1, w2, idx, w, True))
    ok = passed and marks == [2, 3, 4]
    print(f"torch_moe {name}: {'pass' if ok else 'FAIL'} (bad {bad}, max abs err {err:.3g}, marks {marks})")
    failed += not ok

    idx, w = peer_common.moe_route(torch, x, wr, k, renorm, torch.int32)
    x16, w1_16, w2_16 = x.half(), w1.half(), w2.half()
    forward, _ = liger_moe.layer(torch, case, x16, w1_16, w2_16)
    module = dict(vars(liger_moe.fused_moe))
    out = forward(idx, w, None)
    marks = []
    marked = forward(idx, w, marks.append)
    passed, bad, err, _ = peer_common.moe_check(out, peer_common.moe_reference(torch, x16, w1_16, w2_16, idx, w, False))
    ok = passed and marks == [2, 3, 4] and torch.equal(out, marked) and vars(liger_moe.fused_moe) == module
    print(f"liger_moe {name}: {'pass' if ok else 'FAIL'} (bad {bad}, max abs err {err:.3g}, marks {marks})")
    failed += not ok
# Every autotuner of Liger's fused MoE is cleared before a case: the forward's three kernels and
# the backward's four, each cache emptied (filled here by hand: with one configuration pinned,
# Triton's autotuner records no choice).
tuners = [v for v in vars(liger_moe.fused_moe).values() if isinstance(v, triton.runtime.autotuner.Autotuner)]
for tuner in tuners:
    tuner.cache[("stand-in key",)] = tuner.configs[0]
count = liger_moe.clear_autotuners()
ok = count >= 7 and len(tuners) == count and not any(t.cache for t in tuners)
print(f"liger_moe clear_autotuners: {'pass' if ok else 'FAIL'} ({count} autotuners)")
failed += not ok
sys.exit(1 if failed else 0)
