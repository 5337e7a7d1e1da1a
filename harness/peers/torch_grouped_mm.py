#!/usr/bin/env python3
"""Peer: torch._grouped_mm (PyTorch's CUTLASS grouped GEMM, no host sync) on the sweep's cases.

The cases come from `ggemm cases --kernels torch_grouped_mm --format csv` (the one case list,
harness/cases.csv, expanded by the C harness: shape, seed and the rows of every expert), so
this script re-implements neither the list nor the split. Same layouts as the kernels (A
[tokens, k] row-major, B [experts, k, n] n-contiguous, C [tokens, n]), checked against an fp32
reference with the same tolerance, timed with the same protocol (warm-up, L2 flush before every
rep, CUDA events, median with p10/p90); rows are appended to the sweep's CSV in its own column
order, and its metadata lines give the ceilings for the roofline column.

The case list's kernel column says which product each case times: torch_grouped_mm the forward,
torch_grouped_mm_dgrad and _wgrad the backward's two (k5_backward's kernels; registered as peers
of those passes in harness/registry.c), with transposed views, no copies: dgrad
dA = _grouped_mm(dC, B^T, offs), B^T a view of B as [experts, n, k]; wgrad
dB = _grouped_mm(A^T, dC, offs), the 2D x 2D form whose offs run along the reduction, one [k, n]
per expert (an empty expert's is checked to be zeros, as every kernel's is). A pass draws only
the two operands it reads (A, B, dC in that order, from the case's seed), and the check builds
the reference expert by expert, so that the largest wgrad (DeepSeek-V3's layer, an output of
7.5e9 elements) needs no fp32 copy of its output. Each row carries its case's kernel name. A case
torch refuses (a RuntimeError from the op, e.g. offsets its 2D x 2D form does not take), or that
runs out of GPU memory, gets one line and no row.

usage: torch_grouped_mm.py --csv results/h200/sweep.csv --cases CASES.csv [--reps 30] [--warmup 5]
Exit codes: 0 ok, 1 a case failed its check or ended in an error, 2 bad usage, 77 no GPU or no
torch._grouped_mm. Each case's row is appended as soon as it is checked and timed; a case that runs
out of GPU memory or that the op refuses is one line and no row, not a failure
(peer_common.each_case).
"""
import csv
import math
import sys

import peer_common


PASSES = {"torch_grouped_mm": "forward", "torch_grouped_mm_dgrad": "dgrad", "torch_grouped_mm_wgrad": "wgrad"}


def read_sweep(path):
    """The sweep CSV's metadata (# key=value lines) and its column names."""
    meta, columns = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("# ") and "=" in line:
                key, value = line[2:].strip().split("=", 1)
                meta[key] = value
            elif not line.startswith("#"):
                columns = line.strip().split(",")
                break
    return meta, columns


def read_cases(path):
    """The case list, each case's m_list as ints; a ValueError names a case that is not one of ours."""
    with open(path) as f:
        cases = [dict(r, m_list=[int(x) for x in r["m_list"].split()]) for r in csv.DictReader(f)]
    for c in cases:
        if c["kernel"] not in PASSES:
            raise ValueError(f"case {c['case']}: kernel {c['kernel']} is none of {', '.join(PASSES)}")
        if len(c["m_list"]) != int(c["experts"]) or sum(c["m_list"]) != int(c["tokens"]):
            raise ValueError(f"case {c['case']}: m_list does not match tokens/experts")
    return cases


def main():
    args, torch = peer_common.parse("torch_grouped_mm", __doc__, "sweep CSV to append to (its metadata gives the ceilings)",
                                  "output of ggemm cases --kernels torch_grouped_mm[_dgrad,_wgrad] --format csv")
    try:
        meta, columns = read_sweep(args.csv)
        cases = read_cases(args.cases)
    except (OSError, KeyError, ValueError) as e:
        print(f"torch_grouped_mm: cannot read the sweep CSV or the case list: {e}", file=sys.stderr)
        sys.exit(2)
    if not columns or "kernel" not in columns:
        print(f"torch_grouped_mm: {args.csv} has no column header", file=sys.stderr)
        sys.exit(2)
    dev, flush = peer_common.cuda_and_flush(torch)

    def time_us(run):
        return peer_common.time_us(torch, run, flush, args.warmup, args.reps)

    sys.exit(sweep(torch, dev, cases, meta, columns, time_us, lambda line: peer_common.append_line(args.csv, line)))


def compare(torch, got, ref, atol, rtol, acc):
    """Adds one expert's block (got bf16, ref fp32) to acc = [bad, max abs err, sum err^2,
    sum ref^2], as harness/check.c's gg_check_compare: an element is bad unless |got - ref| <=
    atol + rtol |ref| (so NaN is bad), and a NaN error is the max abs err from there on."""
    err = got.float().sub_(ref)
    acc[2] += float(err.square().sum(dtype=torch.float64))
    acc[3] += float(ref.square().sum(dtype=torch.float64))
    err.abs_()
    acc[0] += int((~(err <= ref.abs().mul_(rtol).add_(atol))).sum())
    if err.numel():
        e = float(err.max())
        if e > acc[1] or math.isnan(e):
            acc[1] = e


def check(torch, pass_, out, a, b, dc, m, reduction):
    """(passed, bad elements, max abs err, rel err) of the op's output against the fp32 reference,
    expert by expert, each expert's reference made when it is compared (out stays bf16: no
    full-size fp32 copy of it or of the reference). rel err is check.c's: the Frobenius norm of the
    error over the reference's, 0 when both are 0."""
    atol, rtol = math.sqrt(reduction) / 1024.0, 1.0 / 256.0
    acc = [0, 0.0, 0.0, 0.0]
    row = 0
    for e, rows in enumerate(m):
        span = slice(row, row + rows)  # expert e's rows
        if pass_ == "wgrad":  # one [k, n] per expert; an empty expert's must be zeros
            ref = a[span].float().t() @ dc[span].float() if rows else torch.zeros(out[e].shape, device=out.device)
            compare(torch, out[e], ref, atol, rtol, acc)
        elif rows:
            ref = dc[span].float() @ b[e].float().t() if pass_ == "dgrad" else a[span].float() @ b[e].float()
            compare(torch, out[span], ref, atol, rtol, acc)
        row += rows
    bad, max_err, err2, ref2 = acc
    rel = math.sqrt(err2 / ref2) if ref2 > 0 else (math.inf if err2 > 0 else 0.0)
    return bad == 0 and rel <= rtol, bad, max_err, rel


def sweep(torch, dev, cases, meta, columns, time_us, write):
    """The cases on device dev, each row given to write (a CSV line in the sweep's column order)
    as soon as it is made; returns the exit status (peer_common.each_case). time_us(run) -> the
    per-rep times of run() in µs (on the CPU, tests/peers_grouped_mm_cpu.py passes a stand-in)."""
    def run(numbered):
        n, case = numbered
        print(f"[{n + 1}/{len(cases)}] {case['kernel']}, case {case['case']}", file=sys.stderr)
        return run_case(torch, dev, case, meta, time_us)

    items = [(f"{c['kernel']} case {c['case']}", (n, c)) for n, c in enumerate(cases)]
    return peer_common.each_case(torch, "torch_grouped_mm", items, run,
                                 lambda fields: write(peer_common.csv_row(columns, fields)))


def run_case(torch, dev, case, meta, time_us):
    """One case: the sweep CSV's fields, or None when torch._grouped_mm refuses it (one line)."""
    m = case["m_list"]
    tokens, experts, k, N = (int(case[x]) for x in ("tokens", "experts", "k", "n"))
    skew, seed, name = case["skew"], int(case["seed"]), case["kernel"]
    pass_ = PASSES[name]
    offs = torch.tensor([sum(m[: e + 1]) for e in range(experts)], dtype=torch.int32, device=dev)
    # Each pass reads two of A [tokens, k], B [experts, k, n] and an output gradient dC [tokens, n],
    # drawn in that order from the case's seed; the third is not made.
    g = torch.Generator(device=dev).manual_seed(seed)
    a = peer_common.uniform_bf16(torch, (tokens, k), g, dev) if pass_ != "dgrad" else None
    b = peer_common.uniform_bf16(torch, (experts, k, N), g, dev) if pass_ != "wgrad" else None
    dc = peer_common.uniform_bf16(torch, (tokens, N), g, dev) if pass_ != "forward" else None
    if pass_ == "dgrad":
        out_shape, reduction = (tokens, k), N

        def run():
            return torch._grouped_mm(dc, b.transpose(-2, -1), offs=offs, out_dtype=torch.bfloat16)
    elif pass_ == "wgrad":
        out_shape, reduction = (experts, k, N), max(m) if m else 0

        def run():
            return torch._grouped_mm(a.t(), dc, offs=offs, out_dtype=torch.bfloat16)
    else:
        out_shape, reduction = (tokens, N), k

        def run():
            return torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)

    # Poison: the output block the allocator hands back next is first filled with NaN,
    # so an element the op does not write fails the check.
    poison = torch.full(out_shape, float("nan"), dtype=torch.bfloat16, device=dev)
    del poison
    try:
        out = run()
    except RuntimeError as e:  # a shape this torch refuses (its 2D x 2D form checks the offsets): no row
        if isinstance(e, peer_common.oom_error(torch)) or peer_common.cuda_error(torch, e):
            raise  # not a refusal: each_case reports it
        print(f"{name}: case {case['case']}: skipped: torch._grouped_mm refuses it: {peer_common.first_line(e)}",
              file=sys.stderr)
        return None
    passed, bad, max_err, rel = check(torch, pass_, out, a, b, dc, m, reduction)
    if not passed:
        print(f"{name}: FAILED tokens {tokens} k {k} skew {skew}: {bad} bad elements", file=sys.stderr)
    del out
    median, p10, p90 = peer_common.median_p10_p90(time_us(run))
    useful = 2.0 * tokens * k * N
    min_bytes = float(case["min_bytes"])  # the pass's compulsory bytes, from gg_pass_shape
    sec = median * 1e-6
    gemm_tflops = float(meta.get("ceiling_gemm_tflops", "0"))
    copy_gbps = float(meta.get("ceiling_copy_gbps", "0"))
    floor = max(useful / (gemm_tflops * 1e12) if gemm_tflops else 0.0,
                min_bytes / (copy_gbps * 1e9) if copy_gbps else 0.0)
    tflops = useful / sec * 1e-12
    print(f"{name}: tokens {tokens:5d} k {k:4d} skew {skew}: {median:8.2f} us, "
          f"{tflops:6.1f} TFLOP/s, check {'pass' if passed else 'FAIL'}", file=sys.stderr)
    return {
        "kernel": name, "config": f"torch._grouped_mm {torch.__version__}" + ("" if pass_ == "forward" else f" ({pass_})"),
        "tokens": tokens, "experts": experts, "k": k, "n": N, "skew": skew,
        "block_m": "", "block_n": "", "tiles": "", "eta": "",
        "time_us_median": f"{median:.2f}", "time_us_p10": f"{p10:.2f}", "time_us_p90": f"{p90:.2f}",
        "useful_tflops": f"{tflops:.2f}", "scheduled_tflops": "", "gbps": f"{min_bytes / sec * 1e-9:.1f}",
        "roofline_pct": f"{100.0 * floor / sec:.1f}",
        "inst_ceiling_pct": f"{100.0 * tflops / gemm_tflops if gemm_tflops else 0.0:.1f}",
        "check": "pass" if passed else "fail", "max_abs_err": f"{max_err:.4g}", "rel_err": f"{rel:.4g}",
        "seed": seed, "set": case["set"],
    }


if __name__ == "__main__":
    main()
