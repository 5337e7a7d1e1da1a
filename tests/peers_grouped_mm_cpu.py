#!/usr/bin/env python3
"""harness/peers/torch_grouped_mm.py's case loop (sweep) run on the CPU, where torch is installed
and its torch._grouped_mm runs on CPU tensors (a skip, exit 77 with one line, otherwise): a forward,
a dgrad and a wgrad case with an empty expert, a one-row expert and an expert not a multiple of
any tile, each checked against the fp32 reference and written as one CSV line in the sweep's
column order. The timing is a stand-in (the CPU has no CUDA events); the GPU run times for real.
usage: python3 tests/peers_grouped_mm_cpu.py"""
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness", "peers"))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        import torch
    except ImportError as e:
        print(f"peers_grouped_mm_cpu: skip: {e} (pip install torch)")
        sys.exit(77)
import peer_common  # noqa: E402
import torch_grouped_mm  # noqa: E402


def cpu_grouped_mm():
    """None, or why this torch cannot run torch._grouped_mm on the CPU."""
    if not hasattr(torch, "_grouped_mm"):
        return f"torch {torch.__version__} has no torch._grouped_mm"
    try:
        a, b = torch.ones(4, 8, dtype=torch.bfloat16), torch.ones(2, 8, 8, dtype=torch.bfloat16)
        torch._grouped_mm(a, b, offs=torch.tensor([1, 4], dtype=torch.int32), out_dtype=torch.bfloat16)
    except (RuntimeError, NotImplementedError) as e:
        return f"torch {torch.__version__} has no CPU torch._grouped_mm ({str(e).splitlines()[0]})"
    return None


why = cpu_grouped_mm()
if why:
    print(f"peers_grouped_mm_cpu: skip: {why}")
    sys.exit(77)

COLUMNS = ("kernel,config,tokens,experts,k,n,skew,block_m,block_n,tiles,eta,time_us_median,time_us_p10,"
           "time_us_p90,useful_tflops,scheduled_tflops,gbps,roofline_pct,inst_ceiling_pct,check,max_abs_err,"
           "rel_err,seed,set").split(",")
M_LIST = [0, 1, 37, 90]  # empty, one row, odd sizes
cases = [{"case": str(i), "kernel": kernel, "tokens": str(sum(M_LIST)), "experts": str(len(M_LIST)), "k": "64",
          "n": "48", "skew": "test", "seed": "5", "set": "cpu", "min_bytes": "1e6", "m_list": M_LIST}
         for i, kernel in enumerate(torch_grouped_mm.PASSES)]
calls = []


def time_us(run):
    calls.append(run().shape)
    return [2.0, 1.0, 3.0]


meta = {"ceiling_gemm_tflops": "100", "ceiling_copy_gbps": "1000"}
rows = []
failures = torch_grouped_mm.sweep(torch, torch.device("cpu"), cases, meta, COLUMNS, time_us, rows.append)
want_shapes = [(128, 48), (128, 64), (4, 64, 48)]  # forward C, dgrad dA, wgrad dB
ok = failures == 0 and len(rows) == 3 and [tuple(s) for s in calls] == want_shapes
for kernel, line in zip(torch_grouped_mm.PASSES, rows):
    row = dict(zip(COLUMNS, line.split(",")))
    good = len(line.split(",")) == len(COLUMNS) and row["kernel"] == kernel and row["check"] == "pass" \
        and row["time_us_median"] == "2.00" and row["set"] == "cpu"
    print(f"{kernel}: {'pass' if good else 'FAIL'} ({line})")
    ok = ok and good

# The check, expert by expert: a NaN (an unwritten element) fails and is the max abs err, as in
# check.c; one wrong element fails; an all-zero output of an all-zero wgrad is rel err 0.
g = torch.Generator().manual_seed(1)
a, dc = (peer_common.uniform_bf16(torch, s, g, "cpu") for s in ((128, 64), (128, 48)))
m = [0, 1, 37, 90]
out = torch._grouped_mm(a.t(), dc, offs=torch.tensor([0, 1, 38, 128], dtype=torch.int32), out_dtype=torch.bfloat16)
checks = {"clean": torch_grouped_mm.check(torch, "wgrad", out, a, None, dc, m, 90)}
out[2, 3, 4] = float("nan")
checks["nan"] = torch_grouped_mm.check(torch, "wgrad", out, a, None, dc, m, 90)
out[2, 3, 4] = out[2, 3, 5] + 1
checks["off by one"] = torch_grouped_mm.check(torch, "wgrad", out, a, None, dc, m, 90)
checks["zeros"] = torch_grouped_mm.check(torch, "wgrad", out[:1] * 0, a, None, dc, [0], 1)
want = {"clean": lambda c: c[:2] == (True, 0), "nan": lambda c: c[:2] == (False, 1) and c[2] != c[2],
        "off by one": lambda c: c[:2] == (False, 1) and c[2] >= 0.5, "zeros": lambda c: c == (True, 0, 0.0, 0.0)}
for what, c in checks.items():
    good = want[what](c)
    print(f"check {what}: {'pass' if good else 'FAIL'} "
          f"(passed {c[0]}, bad {c[1]}, max abs err {c[2]:.3g}, rel {c[3]:.3g})")
    ok = ok and good

# A case that runs out of memory: one line, no row, the next case still runs.
def oom_on_dgrad(run):
    if run().shape == (128, 64):
        raise torch.OutOfMemoryError("CUDA out of memory (stand-in)")
    return [1.0]


oom_rows = []
failures = torch_grouped_mm.sweep(torch, torch.device("cpu"), cases, meta, COLUMNS, oom_on_dgrad, oom_rows.append)
good = failures == 0 and [r.split(",")[0] for r in oom_rows] == ["torch_grouped_mm", "torch_grouped_mm_wgrad"]
print(f"out of memory in one case: {'pass' if good else 'FAIL'} ({len(oom_rows)} rows)")
ok = ok and good
print(f"peers_grouped_mm_cpu: {'pass' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
