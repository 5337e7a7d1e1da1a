"""What the PyTorch peers share: the command line (--csv, --cases, --reps, --warmup), a torch that
can run torch._grouped_mm on a GPU (bad usage exits 2; no torch, GPU or torch._grouped_mm exits 77,
a skip, each with one line on stderr), and the timing summary of harness/timing.c."""
import argparse
import sys


def parse(name, doc, csv_help, cases_help):
    """(args, torch) for the peer `name` whose module docstring is `doc`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--csv", required=True, help=csv_help)
    ap.add_argument("--cases", required=True, help=cases_help)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    if args.reps < 1 or args.warmup < 0:
        print(f"{name}: --reps must be >= 1 and --warmup >= 0", file=sys.stderr)
        sys.exit(2)
    try:
        import torch
    except ImportError:
        print(f"{name}: skip: torch is not installed", file=sys.stderr)
        sys.exit(77)
    if not torch.cuda.is_available() or not hasattr(torch, "_grouped_mm"):
        print(f"{name}: skip: no CUDA GPU or no torch._grouped_mm", file=sys.stderr)
        sys.exit(77)
    return args, torch


def median_p10_p90(times):
    """Median, p10 and p90 of per-rep times, as gg_timing_summarize computes them."""
    t, n = sorted(times), len(times)
    median = t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])
    return median, t[int(0.1 * (n - 1) + 0.5)], t[int(0.9 * (n - 1) + 0.5)]


def flush_l2(torch, flush):
    """ggemm's L2 flush (harness/flush.cu): a read of flush, a byte buffer twice the L2, which leaves
    only clean lines of it behind; a fill would leave dirty ones for the timed work to write back."""
    flush.view(torch.int64).sum()


def time_us(torch, fn, flush, warmup, reps):
    """Per-rep times of fn() in µs, as ggemm times a kernel: warm-up runs, then every rep from a
    flushed L2 (flush_l2) with CUDA events around fn alone."""
    for _ in range(warmup):
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush_l2(torch, flush)
        start[i].record()
        fn()
        stop[i].record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e3 for a, b in zip(start, stop)]


def finish(path, rows, failures):
    """Append the rows (CSV lines) to the CSV ggemm wrote and exit: 1 if a case failed its check."""
    with open(path, "a") as f:
        for r in rows:
            f.write(r + "\n")
    sys.exit(1 if failures else 0)
