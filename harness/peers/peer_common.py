"""What the PyTorch peers share.

All peers: the command line (--csv, --cases, --reps, --warmup), a torch that runs on a GPU (bad
usage exits 2; no torch, no GPU or no torch._grouped_mm where a peer needs it exits 77, a skip,
each with one line on stderr) and the timing protocol of harness/timing.c.

The MoE layer peers (torch_moe.py, liger_moe.py): the case list of `ggemm moe --list`, the inputs,
the router, the fp32 reference and its tolerance, the per-step timing and moe.csv's rows, so that
a peer writes only its own steps (moe_main's `layer`). The parts that need no torch are tested on
the CPU by tests/peers_test.py."""
import argparse
import csv
import math
import sys
import types
import warnings

# moe.csv's step columns, in the layer's order: <step>_us (the median), <step>_us_p10, <step>_us_p90.
MOE_STEPS = ("route", "permute", "gemm1", "gemm2", "combine")


def parse(name, doc, csv_help, cases_help, grouped_mm=True, backward=False):
    """(args, torch) for the peer `name` whose module docstring is `doc`; grouped_mm: the peer
    calls torch._grouped_mm, so a torch without it is a skip."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--csv", required=True, help=csv_help)
    ap.add_argument("--cases", required=True, help=cases_help)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    if backward:
        ap.add_argument("--backward", action="store_true",
                        help="the layer's backward by autograd (moe.csv rows with pass = backward)")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    if args.reps < 1 or args.warmup < 0:
        print(f"{name}: --reps must be >= 1 and --warmup >= 0", file=sys.stderr)
        sys.exit(2)
    # Warnings at import (torch without numpy, a driver torch finds too old) would be lines of
    # their own before a skip's or a refusal's one line.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
            cuda = torch.cuda.is_available()
    except ImportError:
        print(f"{name}: skip: torch is not installed", file=sys.stderr)
        sys.exit(77)
    if not cuda or (grouped_mm and not hasattr(torch, "_grouped_mm")):
        print(f"{name}: skip: no CUDA GPU" + (" or no torch._grouped_mm" if grouped_mm else ""), file=sys.stderr)
        sys.exit(77)
    return args, torch


def oom_error(torch):
    """The exception class of an allocation that does not fit (torch.cuda's before torch 2.5)."""
    return getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError


def median_p10_p90(times):
    """Median, p10 and p90 of per-rep times, as gg_timing_summarize computes them."""
    t, n = sorted(times), len(times)
    median = t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])
    return median, t[int(0.1 * (n - 1) + 0.5)], t[int(0.9 * (n - 1) + 0.5)]


def flush_l2(torch, flush):
    """ggemm's L2 flush (harness/flush.cu): a read of flush, a byte buffer twice the L2, which leaves
    only clean lines of it behind; a fill would leave dirty ones for the timed work to write back."""
    flush.view(torch.int64).sum()


def time_reps(torch, fn, flush, warmup, reps, events=2):
    """Per-rep intervals in µs between `events` CUDA events that fn(ev) records (ev[0] first,
    ev[-1] last), as harness/timing.c's gg_time times a kernel: warm-up runs fn(None), a wait for
    the stream, then every rep from a flushed L2 (flush_l2), fn(ev), and a wait for its last event
    before the next rep is queued (so no rep's launches overlap another's)."""
    for _ in range(warmup):
        fn(None)
    stream = torch.cuda.current_stream()
    stream.synchronize()  # the series starts here
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(events)]
    times = []
    for _ in range(reps):
        flush_l2(torch, flush)
        fn(ev)
        ev[-1].synchronize()
        times.append([a.elapsed_time(b) * 1e3 for a, b in zip(ev, ev[1:])])
    return times


def time_us(torch, fn, flush, warmup, reps):
    """Per-rep times of fn() in µs, as ggemm times a kernel (time_reps, events around fn alone)."""
    def rep(ev):
        if ev:
            ev[0].record()
        fn()
        if ev:
            ev[1].record()
    return [t[0] for t in time_reps(torch, rep, flush, warmup, reps)]


def case_errors():
    """The exceptions that end one case and not the run: torch's (RuntimeError: an op's refusal,
    out of memory, a failed launch; NotImplementedError is one) and, where Triton is installed,
    Triton's (a kernel that does not compile, an autotuner left with no configuration)."""
    errors = [RuntimeError]
    try:
        from triton.errors import TritonError
        errors.append(TritonError)
    except ImportError:  # Triton before 3.2 has no common base
        try:
            from triton.compiler.errors import CompilationError
            from triton.runtime.errors import OutOfResources
            errors += [CompilationError, OutOfResources]
        except ImportError:
            pass
    return tuple(errors)


def first_line(e):
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def cuda_error(torch, e):
    """Whether e is a CUDA error (torch.AcceleratorError from torch 2.8; a RuntimeError before)."""
    return isinstance(e, getattr(torch, "AcceleratorError", ())) or "CUDA error" in str(e)


def case_outcome(torch, e):
    """(kind, line) for the exception e that ended a case. kind: "skip" for out of memory or an
    op's own refusal ("not implemented" / "not supported", never a CUDA error), reported and not
    fatal; "broken" when the GPU context no longer works (a sticky CUDA error: the next
    synchronize fails too), so no later case can run; "error" for anything else (a Triton compile
    error, a failed launch), a failed case."""
    if torch.cuda.is_available():
        try:
            torch.cuda.synchronize()
        except RuntimeError:
            return "broken", first_line(e)
    if isinstance(e, oom_error(torch)):
        return "skip", "out of memory: " + first_line(e)
    said = str(e).lower()
    refusal = isinstance(e, NotImplementedError) or "not implemented" in said or "not supported" in said
    if refusal and not cuda_error(torch, e):
        return "skip", first_line(e)
    return "error", first_line(e)


def each_case(torch, name, items, run, write):
    """The case loop of every peer. items: (label, case) pairs; run(case) -> the row's fields (with
    "check"), or None for a case it refused (having said why in one line); write(fields) appends
    the row to the CSV at once, so that a later crash keeps it. An exception of case_errors() ends
    its case alone, with one line (case_outcome): a skip, an error, or a broken GPU context, which
    ends the run there. Returns the exit status: 1 if a case failed its check or ended in an error,
    0 otherwise (skips included)."""
    errors, failed = case_errors(), 0
    for label, case in items:
        try:
            fields = run(case)
        except errors as e:
            kind, line = case_outcome(torch, e)
            print(f"{name}: {'skip' if kind == 'skip' else 'ERROR'} {label}: {line}", file=sys.stderr)
            fields, failed = None, failed + (kind != "skip")
            if kind == "broken":
                print(f"{name}: the GPU context no longer works: the cases after {label} are not run", file=sys.stderr)
                break
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # this case's tensors are free (Mixtral's W1 alone is ~1.9 GB)
        if fields:
            failed += fields["check"] != "pass"
            write(fields)
    return 1 if failed else 0


def uniform_bf16(torch, shape, g, dev, scale=None):
    """U[-1, 1) from generator g, times scale if given, in bf16, drawn in place: one fp32 copy of
    the operand at a time (Kimi-K2's W1 is 42 GiB in fp32; the wgrad of DeepSeek-V3's layer has a
    256 x 7168 x 4096 output: out of place, two or three copies would not fit in an H200)."""
    t = torch.rand(*shape, generator=g, device=dev).mul_(2).sub_(1)
    return (t.mul_(scale) if scale is not None else t).to(torch.bfloat16)


def cuda_and_flush(torch):
    """The GPU (TF32 off: the references are fp32) and ggemm's L2 flush buffer on it, twice the L2."""
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    return dev, torch.empty(2 * torch.cuda.get_device_properties(dev).L2_cache_size, dtype=torch.uint8, device=dev)


def append_line(path, line):
    """One line appended to the CSV ggemm wrote."""
    with open(path, "a") as f:
        f.write(line + "\n")


# ---------------------------------------------------------------------------------------------
# The MoE layer peers. The layer is k4_moe's: route (X·Wr in fp32 from the bf16 X and Wr,
# softmax in fp32, top-k with ties to the lower expert, optional renormalisation), then the peer's own steps: permute,
# GEMM1 (X·W1[e], W1 [E, d, 2F] with gate columns [0, F) and up columns [F, 2F)) with SwiGLU
# H = silu(gate) * up, GEMM2 (H·W2[e], W2 [E, F, d]), combine (out[t] = sum over its k experts of
# weight · row, in fp32, then bf16).

def read_header(path):
    """moe.csv's column names: its first line that is not a `#` metadata line."""
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                return line.strip().split(",")
    return None


def row_pass(r):
    """A moe.csv or case-list row's pass: forward or backward (a file from before the column: forward)."""
    return r.get("pass") or "forward"


def read_cases(path, want="forward"):
    """The cases of `ggemm moe --list` of one pass, typed (on a GPU: without one it leaves floor_us
    empty; `--backward --list` adds the backward's, with its floor and FLOPs)."""
    with open(path) as f:
        cases = [c for c in csv.DictReader(line for line in f if not line.startswith("#")) if row_pass(c) == want]
    for c in cases:
        c.update({x: int(c[x]) for x in ("tokens", "d", "f", "experts", "topk", "renorm", "seed")})
        c.update({x: float(c[x]) for x in ("floor_us", "gemm_flops")})
    return cases


def same_run_floors(path, cases, want="forward"):
    """Each case's roofline floor from moe.csv's k4_moe rows of the same (model, tokens) where there
    are some (k4_moe_floor_us over the ceilings `ggemm moe --out` measured), so that every row of
    the file divides by the same floor; the case list's own floor otherwise."""
    with open(path) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        same_run = {(r["model"], r["tokens"]): r["floor_us"] for r in rows
                    if r["impl"] == "k4_moe" and r["floor_us"] and row_pass(r) == want}
    for c in cases:
        c["floor_us"] = float(same_run.get((c["model"], str(c["tokens"])), c["floor_us"]))


def input_scale(fan_in):
    """U[-1, 1] times this power of two (bf16 stays exact) keeps X·W near unit size, as the C side
    (harness/moe.c, input_scale): 2^(2 - round(log2 sqrt(fan_in))), rounding half up."""
    return 2.0 ** (2 - math.floor(0.5 * math.log2(fan_in) + 0.5))


def csv_row(columns, values):
    """One CSV line (moe.csv's, the sweep's): values in the file's own column order, empty where a
    peer has none."""
    return ",".join(str(values.get(c, "")) for c in columns)


def fnv1a64(data):
    """FNV-1a, 64 bits, of a sequence of byte values, as 16 hex digits: `ggemm moe`'s routing digest."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return f"{h:016x}"


def routing_digest(torch, idx):
    """moe.csv's routing_digest of top-k expert ids [T, k] (best first): their int32 bytes in
    little-endian order, as `ggemm moe` hashes its own: equal digests of two runs on the same inputs
    mean the same routing (the peers' inputs are torch's, not ggemm's: moe_inputs)."""
    # Flat first: view(uint8) of a 2-D tensor widens only its last dimension (rows of bytes).
    return fnv1a64(idx.to(torch.int32).reshape(-1).cpu().view(torch.uint8).tolist())


def moe_values(case, impl, path, active, timing, steps, check, want="forward", digest=""):
    """moe.csv's fields of one timed case. timing: (median, p10, p90) µs; steps: {step: (median,
    p10, p90) µs} (None: no per-step times, the columns left empty); check: (passed, max_abs_err,
    rel_err); digest: the routing's (routing_digest). The roofline % divides the case's floor by the
    median, as `ggemm moe` does for k4_moe's rows."""
    median, p10, p90 = timing
    passed, max_err, rel = check
    return {
        "impl": impl, "path": path, "model": case["model"], "tokens": case["tokens"], "d": case["d"], "f": case["f"],
        "experts": case["experts"], "topk": case["topk"], "renorm": case["renorm"],
        "routed_rows": case["tokens"] * case["topk"], "active_experts": active,
        "time_us_median": f"{median:.2f}", "time_us_p10": f"{p10:.2f}", "time_us_p90": f"{p90:.2f}",
        **{f"{s}_us{q}": f"{steps[s][i]:.2f}" if steps else ""
           for s in MOE_STEPS for i, q in enumerate(("", "_p10", "_p90"))},
        "floor_us": f"{case['floor_us']:.2f}", "roofline_pct": f"{100.0 * case['floor_us'] / median:.1f}",
        "useful_tflops": f"{case['gemm_flops'] / (median * 1e-6) * 1e-12:.2f}", "check": "pass" if passed else "fail",
        "max_abs_err": f"{max_err:.4g}", "rel_err": f"{rel:.4g}", "seed": case["seed"], "pass": want,
        "routing_digest": digest,
    }


def moe_inputs(torch, case, dev):
    """X [T, d], Wr [d, E], W1 [E, d, 2F], W2 [E, F, d], bf16, from torch's generator seeded with
    the case's seed: every MoE peer gets the same tensors (not ggemm's: another generator)."""
    T, d, F, E = (case[c] for c in ("tokens", "d", "f", "experts"))
    g = torch.Generator(device=dev).manual_seed(case["seed"])
    return (uniform_bf16(torch, (T, d), g, dev), uniform_bf16(torch, (d, E), g, dev, input_scale(d)),
            uniform_bf16(torch, (E, d, 2 * F), g, dev, input_scale(d)),
            uniform_bf16(torch, (E, F, d), g, dev, input_scale(F)))


def moe_route(torch, x, wr, k, renorm, ids_dtype=None):
    """The router: (top-k expert ids [T, k], their weights [T, k] fp32); ids as ids_dtype if given."""
    # The gate in fp32 (k4_router's too): bf16 inputs, fp32 products and sums (TF32 is off,
    # moe_main). A user would write the same: cast and matmul.
    probs = torch.softmax(x.float() @ wr.float(), dim=1)
    # Ties go to the lower expert, as in k4_route. topk leaves their order undocumented; a
    # stable sort keeps it, and measured no slower than topk on these shapes (bf16 logits).
    idx = torch.sort(probs, dim=1, descending=True, stable=True).indices[:, :k]
    w = probs.gather(1, idx)
    if ids_dtype is not None:
        idx = idx.to(ids_dtype).contiguous()
    return idx, (w / w.sum(dim=1, keepdim=True) if renorm else w)


def moe_reference(torch, x, w1, w2, idx, w, round_u, straight_through=False):
    """The layer in fp32 over the given routing, expert by expert from idx (so a peer's permutation
    is checked too). H is rounded to bf16, as every peer stores it; round_u: U is rounded to bf16
    first and silu(gate) and the product in bf16, as an eager layer does (from an fp32 U, H then
    differs by a bf16 ulp often enough that a few elements in a million fail). straight_through
    (for autograd, moe_reference_grads): the same values rounded as U + (bf16(U) - U).detach(), so
    that the gradients flow in fp32 as if nothing were rounded, and silu and the product in fp32."""
    import torch.nn.functional as fn
    T, d = x.shape
    F = w2.shape[1]

    def bf16(t):
        rounded = t.to(torch.bfloat16).float()
        return t + (rounded - t).detach() if straight_through else rounded

    ref = torch.zeros(T, d, dtype=torch.float32, device=x.device)
    for e in range(w1.shape[0]):
        t, j = (idx == e).nonzero(as_tuple=True)
        if t.numel():
            u = x[t].float() @ w1[e].float()
            if round_u:
                u = bf16(u) if straight_through else u.to(torch.bfloat16)
            h = bf16((fn.silu(u[:, :F]) * u[:, F:]).float())
            ref.index_add_(0, t, (h @ w2[e].float()) * w[t, j][:, None])
    return ref


def moe_check(out, ref):
    """(passed, bad elements, max abs err, rel err) of out against ref with harness/moe.c's
    tolerance |out - ref| <= 2^-4 rms(ref) + 2^-7 |ref|. NaN compares false: an unwritten row
    fails. As moe.c's compare: the max abs err leaves NaN out, and rel err is it over max |ref|,
    0 when ref is all zeros."""
    err = (out.float() - ref).abs()
    ok = err <= 2.0 ** -4 * ref.square().mean().sqrt() + 2.0 ** -7 * ref.abs()
    bad = int((~ok).sum())
    del ok
    max_err = float(err.nan_to_num_(nan=0.0, posinf=math.inf).max()) if err.numel() else 0.0
    max_ref = float(ref.abs().max()) if ref.numel() else 0.0
    return bad == 0, bad, max_err, max_err / max_ref if max_ref > 0 else 0.0


def moe_case(torch, case, args, flush, peer):
    """One case of one peer: inputs, a first forward (a Triton peer tunes its kernels in it), the
    checked forward, then the whole layer timed, then the steps; returns moe.csv's fields."""
    T, k = case["tokens"], case["topk"]
    dev = flush.device
    x, wr, w1, w2 = moe_inputs(torch, case, dev)
    forward, buffers = peer.layer(torch, case, x, w1, w2)

    def layer(ev=None):
        # ev: six events, recorded between the steps when the per-step times are wanted; the
        # peer's forward records 2, 3 and 4 at its own step boundaries (mark None: no events).
        mark = (lambda i: ev[i].record()) if ev else None
        if mark:
            mark(0)
        idx, w = moe_route(torch, x, wr, k, case["renorm"], peer.ids_dtype)
        if mark:
            mark(1)
        out = forward(idx, w, mark)
        if mark:
            mark(5)
        return out, idx, w

    layer()
    # Poison: the blocks the allocator hands back next are first filled with NaN, so a row that a
    # step does not write reaches the output and fails the check.
    poison = [torch.full(shape, float("nan"), dtype=torch.bfloat16, device=dev) for shape in buffers]
    del poison
    out, idx, w = layer()
    active = int(torch.unique(idx).numel())
    passed, bad, max_err, rel = moe_check(out, moe_reference(torch, x, w1, w2, idx, w, peer.round_u))
    if not passed:
        print(f"{peer.impl}: FAILED {case['model']} T={T}: {bad} bad elements", file=sys.stderr)
    del out

    # The whole layer: events around it only.
    timing = median_p10_p90(time_us(torch, layer, flush, args.warmup, args.reps))
    # The steps: separate reps (the layer is warm from the reps above), events between the steps.
    per_rep = time_reps(torch, layer, flush, 0, args.reps, len(MOE_STEPS) + 1)
    steps = {s: median_p10_p90([t[i] for t in per_rep]) for i, s in enumerate(MOE_STEPS)}
    values = moe_values(case, peer.impl, peer.path, active, timing, steps, (passed, max_err, rel),
                        digest=routing_digest(torch, idx))
    print(f"{peer.impl}: {case['model']} T={T}: {timing[0]:.2f} us ({', '.join(f'{s} {v[0]:.1f}' for s, v in steps.items())}), "
          f"{values['useful_tflops']} TFLOP/s, check {values['check']} ({peer.version(torch)})", file=sys.stderr)
    return values


def moe_reference_grads(torch, x, wr, w1, w2, idx, dout, renorm, round_u):
    """The gradients dX, dWr, dW1, dW2 of the fp32 layer by autograd, at the given routing (idx
    held fixed, the weights recomputed from the fp32 logits so that the router's gradient flows),
    H (and with round_u, U) rounded to bf16 as in moe_reference but straight through, so that
    the backward itself is fp32, as harness/moe_backward.c's reference."""
    leaves = [t.detach().float().requires_grad_(True) for t in (x, wr, w1, w2)]
    xf, wrf, w1f, w2f = leaves
    probs = torch.softmax(xf @ wrf, dim=1)
    w = probs.gather(1, idx.long())
    if renorm:
        w = w / w.sum(dim=1, keepdim=True)
    out = moe_reference(torch, xf, w1f, w2f, idx.long(), w, round_u, straight_through=True)
    out.backward(dout.float())
    return [t.grad for t in leaves]


def moe_backward_case(torch, case, args, flush, peer):
    """One case of a peer's backward: inputs as leaves, a fresh dOut, the forward once (its graph
    kept) and checked first, as harness/moe_backward.c does, then the backward checked (dX, dWr,
    dW1, dW2 against moe_reference_grads, each with moe_check's tolerance; the row's max abs err
    and rel err are those of the gradient with the largest rel err, as moe_backward.c reports),
    then the backward alone timed (retain_graph: the same graph each rep, gradients cleared
    first). No per-step times: autograd runs the steps as one call."""
    T, k = case["tokens"], case["topk"]
    dev = flush.device
    x, wr, w1, w2 = (t.requires_grad_(True) for t in moe_inputs(torch, case, dev))
    g = torch.Generator(device=dev).manual_seed(case["seed"] + 1)
    dout = uniform_bf16(torch, (T, case["d"]), g, dev)
    forward, _ = peer.layer(torch, case, x, w1, w2)
    grads_of = getattr(forward, "grads", None) or (lambda: (w1.grad, w2.grad))
    idx, w = moe_route(torch, x, wr, k, case["renorm"], peer.ids_dtype)
    out = forward(idx, w, None)
    leaves = [x, wr, w1, w2] + list(getattr(forward, "leaves", []))
    label = f"{peer.impl}: {case['model']} T={T} backward"

    def backward():
        for t in leaves:
            t.grad = None
        out.backward(dout, retain_graph=True)

    with torch.no_grad():
        ref = moe_reference(torch, x, w1, w2, idx.long(), w, peer.round_u)
        passed, bad, max_err, rel = moe_check(out, ref)
    del ref
    if not passed:
        print(f"{label}: FAILED: the forward: {bad} bad elements", file=sys.stderr)
    else:
        backward()
        got = [x.grad, wr.grad, *grads_of()]
        refs = moe_reference_grads(torch, x, wr, w1, w2, idx, dout, case["renorm"], peer.round_u)
        rel = -1.0
        for name, a, b in zip(("dX", "dWr", "dW1", "dW2"), got, refs):
            ok, bad, err, r = moe_check(a, b)
            if not ok:
                print(f"{label}: FAILED: {name}: {bad} bad elements", file=sys.stderr)
            passed = passed and ok
            if r >= rel:
                max_err, rel = err, r
        del got, refs  # before the timing: Mixtral's dW1 and its reference are ~5.6 GB
    active = int(torch.unique(idx).numel())
    timing = median_p10_p90(time_us(torch, backward, flush, args.warmup, args.reps))
    values = moe_values(case, peer.impl, peer.path, active, timing, None, (passed, max_err, rel), "backward",
                        routing_digest(torch, idx))
    print(f"{label}: {timing[0]:.2f} us, {values['useful_tflops']} TFLOP/s, check {values['check']} "
          f"({peer.version(torch)})", file=sys.stderr)
    return values


def moe_main(doc, impl, path, layer, round_u, ids_dtype=None, grouped_mm=True, load=None, refuse=None,
             version=None):
    """A MoE peer's whole run, into moe.csv as rows (impl, path).
    layer(torch, case, x, w1, w2) -> (forward, shapes): forward(idx, w, mark) runs the peer's steps
      after the router and returns out [T, d] bf16, calling mark(2), mark(3), mark(4) (when mark is
      not None) after its permute, GEMM1 and GEMM2; shapes: its bf16 buffers', for the poison.
    round_u: see moe_reference. ids_dtype: name of the torch dtype the router's ids are given in.
    grouped_mm: it calls torch._grouped_mm. load() -> None, or the one-line reason to skip the peer.
    refuse(case) -> None, or why this case is skipped. version(torch) -> the versions to log."""
    args, torch = parse(impl, doc, "moe.csv written by ggemm moe, to append to",
                        "output of ggemm moe --model all --tokens ... --list [--backward]", grouped_mm, backward=True)
    want = "backward" if args.backward else "forward"
    why = load() if load else None
    if why:
        print(f"{impl}: skip: {why}", file=sys.stderr)
        sys.exit(77)
    peer = types.SimpleNamespace(impl=impl, path=path, layer=layer, round_u=round_u,
                                 ids_dtype=getattr(torch, ids_dtype) if ids_dtype else None,
                                 version=version or (lambda t: f"torch {t.__version__}"))
    try:
        columns = read_header(args.csv)
        cases = read_cases(args.cases, want)
        same_run_floors(args.csv, cases, want)
    except (OSError, KeyError, ValueError, TypeError) as e:
        print(f"{impl}: cannot read moe.csv or the case list: {e}", file=sys.stderr)
        sys.exit(2)
    if not columns or "impl" not in columns:
        print(f"{impl}: {args.csv} has no column header", file=sys.stderr)
        sys.exit(2)
    _, flush = cuda_and_flush(torch)

    def run(numbered):
        n, case = numbered
        label = f"{case['model']} T={case['tokens']}"
        why = "no tokens, nothing to time" if case["tokens"] == 0 else refuse(case) if refuse else None
        if why:
            print(f"{impl}: skip {label}: {why}", file=sys.stderr)
            return None
        print(f"[{n + 1}/{len(cases)}] {impl}, {label}", file=sys.stderr)
        return (moe_backward_case if args.backward else moe_case)(torch, case, args, flush, peer)

    suffix = " backward" if args.backward else ""
    items = [(f"{c['model']} T={c['tokens']}{suffix}", (n, c)) for n, c in enumerate(cases)]
    sys.exit(each_case(torch, impl, items, run, lambda fields: append_line(args.csv, csv_row(columns, fields))))
