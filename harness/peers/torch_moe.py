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
rep, CUDA events, median with p10/p90), and once more with events between the steps for the
per-step medians; rows are appended to moe.csv in its own column order (impl torch_moe, path eager).

usage: torch_moe.py --csv results/h200/moe.csv --cases CASES.csv [--reps 30] [--warmup 5]
Exit codes: 0 ok, 1 check failed, 2 bad usage, 77 no GPU, no torch or no torch._grouped_mm.
"""
import csv
import math
import sys

import peer_common
from peer_common import median_p10_p90

STEPS = ("route", "permute", "gemm1", "gemm2", "combine")


def read_header(path):
    """moe.csv's column names: its first line that is not a `#` metadata line."""
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                return line.strip().split(",")
    return None


def read_cases(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def run_case(torch, case, args, flush):
    """One case: build the inputs, check the layer once, time it; returns moe.csv's fields."""
    import torch.nn.functional as fn
    T, d, F, E, k = (case[x] for x in ("tokens", "d", "f", "experts", "topk"))
    dev = flush.device
    g = torch.Generator(device=dev).manual_seed(case["seed"])

    def uniform(*shape, fan_in=None):
        # U[-1, 1] times a power of two (bf16 stays exact) that keeps X·W near unit size, as the
        # C side: 2^(2 - round(log2 sqrt(fan_in))), rounding half up.
        scale = 2.0 ** (2 - math.floor(0.5 * math.log2(fan_in) + 0.5)) if fan_in else 1.0
        # In place: one fp32 copy at a time (Kimi-K2's W1 is 42 GiB in fp32; out of place, two).
        return torch.rand(*shape, generator=g, device=dev).mul_(2).sub_(1).mul_(scale).to(torch.bfloat16)

    x = uniform(T, d)
    wr = uniform(d, E, fan_in=d)
    w1 = uniform(E, d, 2 * F, fan_in=d)
    w2 = uniform(E, F, d, fan_in=F)

    def route():
        # The gate in fp32 (k4_router's too): bf16 inputs, fp32 products and sums (TF32 is off,
        # main()). A user would write the same: cast and matmul.
        probs = torch.softmax(x.float() @ wr.float(), dim=1)
        # Ties go to the lower expert, as in k4_route. topk leaves their order undocumented; a
        # stable sort keeps it, and measured no slower than topk on these shapes (bf16 logits).
        idx = torch.sort(probs, dim=1, descending=True, stable=True).indices[:, :k]
        w = probs.gather(1, idx)
        return idx, (w / w.sum(dim=1, keepdim=True) if case["renorm"] else w)

    def permute(idx):
        experts, order = torch.sort(idx.flatten(), stable=True)  # stable: token order within an expert
        # End offsets by binary search, not bincount: bincount syncs with the host.
        offs = torch.searchsorted(experts, torch.arange(E, device=dev), right=True, out_int32=True)
        inv = torch.empty_like(order)  # where each (token, choice) landed, for the combine
        inv[order] = torch.arange(order.numel(), device=dev)
        return x[order // k], offs, inv

    def gemm1(xg, offs):
        u = torch._grouped_mm(xg, w1, offs=offs, out_dtype=torch.bfloat16)
        return fn.silu(u[:, :F]) * u[:, F:]

    def gemm2(h, offs):
        return torch._grouped_mm(h, w2, offs=offs, out_dtype=torch.bfloat16)

    def combine(y, inv, w):
        # Gather each token's k rows back and sum them weighted, in fp32. (index_add_ into an fp32
        # output does the same with atomics: on the H200, 1.7-2x slower from 4096 tokens up.)
        return (y[inv].view(T, k, d) * w[:, :, None]).sum(dim=1).to(torch.bfloat16)

    def layer(ev=None):
        # ev: six events, recorded between the steps when the per-step times are wanted.
        mark = (lambda i: ev[i].record()) if ev else (lambda i: None)
        mark(0)
        idx, w = route()
        mark(1)
        xg, offs, inv = permute(idx)
        mark(2)
        h = gemm1(xg, offs)
        mark(3)
        y = gemm2(h, offs)
        mark(4)
        out = combine(y, inv, w)
        mark(5)
        return out, idx, w, offs

    # Poison: the blocks the allocator hands back next are first filled with NaN, so a row that
    # GEMM1 or GEMM2 does not write reaches the output and fails the check.
    poison = [torch.full((T * k, cols), float("nan"), dtype=torch.bfloat16, device=dev) for cols in (2 * F, d)]
    del poison
    out, idx, w, offs = layer()
    out = out.float()
    active = int((torch.diff(offs, prepend=offs.new_zeros(1)) > 0).sum())
    # fp32 reference of the same routing, expert by expert from idx (so the permute is checked too).
    # U and H are rounded to bf16 where the layer rounds them (GEMM1's output, silu's, the product's):
    # from an fp32 U, H differs by a bf16 ulp often enough that a few elements in a million fail.
    ref = torch.zeros(T, d, dtype=torch.float32, device=dev)
    for e in range(E):
        t, j = (idx == e).nonzero(as_tuple=True)
        if t.numel():
            u = (x[t].float() @ w1[e].float()).to(torch.bfloat16)
            h = (fn.silu(u[:, :F]) * u[:, F:]).float()
            ref.index_add_(0, t, (h @ w2[e].float()) * w[t, j][:, None])
    err = (out - ref).abs()
    tol = 2.0 ** -4 * ref.square().mean().sqrt() + 2.0 ** -7 * ref.abs()  # harness/moe.c's tolerance
    passed = bool((err <= tol).all())  # NaN compares false: an unwritten row fails
    max_err = float(err.max())
    rel = max_err / max(float(ref.abs().max()), 1e-30)
    if not passed:
        print(f"torch_moe: FAILED {case['model']} T={T}: {int((~(err <= tol)).sum())} bad elements", file=sys.stderr)
    del out, ref, err, tol

    # The whole layer: events around it only.
    median, p10, p90 = median_p10_p90(peer_common.time_us(torch, layer, flush, args.warmup, args.reps))
    # The steps: separate reps, events between the steps.
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(len(STEPS) + 1)] for _ in range(args.reps)]
    for i in range(args.reps):
        peer_common.flush_l2(torch, flush)
        layer(ev[i])
    torch.cuda.synchronize()
    steps = {s: median_p10_p90([e[i].elapsed_time(e[i + 1]) * 1e3 for e in ev])[0] for i, s in enumerate(STEPS)}
    tflops = case["gemm_flops"] / (median * 1e-6) * 1e-12
    print(f"torch_moe: {case['model']} T={T}: {median:.2f} us ({', '.join(f'{s} {v:.1f}' for s, v in steps.items())}), "
          f"{tflops:.1f} TFLOP/s, check {'pass' if passed else 'FAIL'} (torch {torch.__version__})", file=sys.stderr)
    return {
        "impl": "torch_moe", "path": "eager", "model": case["model"], "tokens": T, "d": d, "f": F,
        "experts": E, "topk": k, "renorm": case["renorm"], "routed_rows": T * k, "active_experts": active,
        "time_us_median": f"{median:.2f}", "time_us_p10": f"{p10:.2f}", "time_us_p90": f"{p90:.2f}",
        **{f"{s}_us": f"{v:.2f}" for s, v in steps.items()},
        "floor_us": f"{case['floor_us']:.2f}", "roofline_pct": f"{100.0 * case['floor_us'] / median:.1f}",
        "useful_tflops": f"{tflops:.2f}", "check": "pass" if passed else "fail",
        "max_abs_err": f"{max_err:.4g}", "rel_err": f"{rel:.4g}", "seed": case["seed"],
    }


def main():
    args, torch = peer_common.parse("torch_moe", __doc__, "moe.csv written by ggemm moe, to append to",
                                  "output of ggemm moe --model all --tokens ... --list")
    try:
        columns = read_header(args.csv)
        cases = read_cases(args.cases)
        for c in cases:
            c.update({x: int(c[x]) for x in ("tokens", "d", "f", "experts", "topk", "renorm", "seed")})
            c.update({x: float(c[x]) for x in ("floor_us", "gemm_flops")})
    except (OSError, KeyError, ValueError, TypeError) as e:
        print(f"torch_moe: cannot read moe.csv or the case list: {e}", file=sys.stderr)
        sys.exit(2)
    # The floor from the k4_moe rows of the same run where there are some (the ceilings that
    # ggemm moe --out measured), so that every row of the file divides by the same floor.
    with open(args.csv) as f:
        same_run = {(r["model"], r["tokens"]): r["floor_us"] for r in csv.DictReader(l for l in f if not l.startswith("#"))}
    for c in cases:
        c["floor_us"] = float(same_run.get((c["model"], str(c["tokens"])), c["floor_us"]))
    if not columns or "impl" not in columns:
        print(f"torch_moe: {args.csv} has no column header", file=sys.stderr)
        sys.exit(2)
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is fp32, not TF32
    dev = torch.device("cuda")
    flush = torch.empty(2 * torch.cuda.get_device_properties(dev).L2_cache_size, dtype=torch.uint8, device=dev)
    failures, rows = 0, []
    for n, case in enumerate(cases):
        name = f"{case['model']} T={case['tokens']}"
        if case["d"] % 8 or case["f"] % 8:  # torch._grouped_mm wants 16-byte aligned row strides
            print(f"torch_moe: skip {name}: d and F must be multiples of 8 for torch._grouped_mm", file=sys.stderr)
            continue
        print(f"[{n + 1}/{len(cases)}] torch_moe, {name}", file=sys.stderr)
        values = run_case(torch, case, args, flush)
        torch.cuda.empty_cache()  # Mixtral's W1 alone is ~1.9 GB: give it back before the next case
        if values["check"] != "pass":
            failures += 1
        rows.append(",".join(str(values.get(c, "")) for c in columns))
    peer_common.finish(args.csv, rows, failures)


if __name__ == "__main__":
    main()
