"""Which of k5's two dynamic-deal wgrad tiles runs faster, from a cost per item, against committed runs.

The model. An item of the wgrad list (common/gg_wgrad.h, as `ggemm tiles --kernel` lists it) costs
the SM that runs it

    a + b x blocks (+ f when the item is one split of a reduction cut across CTAs)

a: what every item pays whatever its length (its lookup, its epilogue: one tile of dB out);
b: one 64-row reduction block of MMAs; f: a split's fp32 partial written, and read back by the
split that finishes the tile. The dynamic deal hands the items out in list order, each to the CTA
whose next draw comes first (gg_wgrad_deal's rule, in time instead of blocks: a CTA draws when it
starts the item it holds); the kernel's time is the last CTA's end.

Per run and kernel: a and b from the worklog's two cases at s = 0 (2048 and 16384 rows: every item
one block, every item four; no splits), f from the worklog's 16384-row case at s = 1.2; every
other row of the run is predicted, not fitted. The pick is the kernel predicted faster. Each
run's lists are those it ran: until commit 769b4fc the 256-row tile's chunk was the rule's count
of its own tiles (about half the twin's in 64-row blocks), reproduced here with `ggemm tiles --chunk`;
since then both kernels cut at the same chunk. A last column prices the first run's 256-row tile
at today's chunk, the trial the rule proposed before it ran (k5_backward/TRIALS.md,
`k5-chunk-h100`, has the measured A/B). The block ends with the picks at an even split (what a choice from the
shape alone can assume) on every backward and grid shape of harness/cases.csv. Writes the
`k5-wgrad-rule` block of k5_backward/TRIALS.md.

    python3 plots/wgrad_rule.py [--ggemm build/bin/ggemm] [--check]

Standard library only.
"""
import heapq
import os
import sys

import readme_block
import work_lists
from tables import item_cost, load

ROOT = readme_block.ROOT
KERNELS = ("k5_wgrad_pingpong_dyn", "k5_wgrad_m256_dyn")
# Committed runs with both kernels on the worklog's cases: (label, CSV, whether its 256-row tile
# cut at the old chunk: old_chunk). The first one's rows are listed in full.
RUNS = [("H200, bdddc46", "results/h200/evidence/wgrad-dyn-bdddc4632a2d.csv", True),
        ("H100, c7610b0", "results/h100-80gb-hbm3/evidence/wgrad-dyn-c7610b0f5cb9.csv", True),
        ("H100, a91969b", "results/h100-80gb-hbm3/evidence/backward-a91969b51fbb.csv", True),
        ("H100, 769b4fc, today's chunk", "results/h100-80gb-hbm3/evidence/wgrad-chunk-new-1-769b4fc5aec0.csv", False)]
FIT = [("2048", "0"), ("16384", "0"), ("16384", "1.2")]  # the backward_stages cases the constants come from


def old_chunk(r, sms):
    """The 256-row tile's chunk before 769b4fc: gg_wgrad_chunk over its own tiles (256 rows of k)."""
    cdiv = lambda a, b: -(-a // b)  # noqa: E731
    tiles = cdiv(int(r["k"]), 256) * cdiv(int(r["n"]), 192)
    work = tiles * (cdiv(int(r["tokens"]), 64) + int(r["experts"]))
    return max(16, cdiv(work, int(sms) * 4))


def listing(ggemm, kernel, r, sms, chunk=None):
    """`ggemm tiles --kernel` for row r's shape: (header keys, items), cut at `chunk` blocks
    instead of the split rule's where given (--chunk)."""
    return work_lists.tiles(ggemm, "--kernel", kernel, "--tokens", r["tokens"], "--experts", r["experts"], "--k",
                            r["k"], "--n", r["n"], "--skew", r["skew"], "--sms", sms,
                            *(("--chunk", chunk) if chunk else ()))


def blocks_of(meta, items):
    """(grid, [(blocks, split?) per item in list order]) of a listing."""
    block = int(meta["block_r"])
    return int(meta["grid"]), [(-(-it["rows"] // block), it["splits"] > 1) for it in items]


def work(ggemm, kernel, r, sms, chunk=None):
    """blocks_of(listing(...)): `kernel`'s list for row r's shape, ready for predict."""
    return blocks_of(*listing(ggemm, kernel, r, sms, chunk))


def predict(grid, items, a, b, f):
    """The last CTA's end when the dynamic deal hands out `items` at a + b x blocks (+ f) each."""
    busy, drawn = [0.0] * grid, [0] * grid
    draws = [(0.0, 0, c) for c in range(grid)]  # (when it draws next, items drawn, CTA): a heap
    for blocks, split in items:
        _, _, c = heapq.heappop(draws)
        start = busy[c]
        busy[c] += a + b * blocks + (f if split else 0.0)
        drawn[c] += 1
        heapq.heappush(draws, (start, drawn[c], c))
    return max(busy)


def chunk_of(kernel, r, sms, old):
    """The --chunk that reproduces the list `kernel` ran for row r: the old rule's for the 256-row
    tile of a run before 769b4fc, else the split rule's own (None)."""
    return old_chunk(r, sms) if old and kernel == "k5_wgrad_m256_dyn" else None


def fit(ggemm, meta, rows, kernel, old):
    """(a, b, f) of `kernel` from the run's three FIT rows: a and b as k5_backward/TRIALS.md's
    item-cost table has them (tables.item_cost), f the one that predicts the third row's time."""
    mine = {(r["tokens"], r["skew"]): r for r in rows
            if r["kernel"] == kernel and r["set"] == "backward_stages" and r["check"] == "pass"}
    _, (a, b), _ = item_cost(ggemm, meta, {int(t): mine[(t, "0")] for t in ("2048", "16384")}, kernel)
    r = mine[("16384", "1.2")]
    grid, items = work(ggemm, kernel, r, meta["sms"], chunk_of(kernel, r, meta["sms"], old))
    target, lo, hi = float(mine[("16384", "1.2")]["time_us_median"]), 0.0, 1000.0
    if not predict(grid, items, a, b, lo) <= target <= predict(grid, items, a, b, hi):
        sys.exit(f"wgrad_rule.py: no f in [{lo:g}, {hi:g}] µs predicts {kernel}'s {target} µs at 16384 rows, s = 1.2")
    for _ in range(50):  # the time rises with f: bisect for the measured one
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if predict(grid, items, a, b, mid) < target else (lo, mid)
    return a, b, lo


def run(ggemm, path, old):
    """(meta, constants per kernel, [(row key, measured, predicted, predicted without f, split items;
    each per kernel, fitted?)])."""
    meta, rows = load(os.path.join(ROOT, path))
    consts = {k: fit(ggemm, meta, rows, k, old) for k in KERNELS}
    shapes = {}
    for r in rows:
        if r["kernel"] in KERNELS and r["check"] == "pass":
            shapes.setdefault((r["set"], r["tokens"], r["experts"], r["k"], r["n"], r["skew"]), {})[r["kernel"]] = r
    out = []
    for key, both in shapes.items():
        if len(both) < len(KERNELS):
            continue
        lists = {k: work(ggemm, k, both[k], meta["sms"], chunk_of(k, both[k], meta["sms"], old)) for k in KERNELS}
        measured = {k: float(both[k]["time_us_median"]) for k in KERNELS}
        predicted = {k: predict(*lists[k], *consts[k]) for k in KERNELS}
        no_f = {k: predict(*lists[k], *consts[k][:2], 0.0) for k in KERNELS}
        splits = {k: sum(split for _, split in lists[k][1]) for k in KERNELS}
        # The 256-row tile at today's chunk (the twin's), priced with the run's own constants.
        what_if = predict(*work(ggemm, KERNELS[1], both[KERNELS[1]], meta["sms"]), *consts[KERNELS[1]])
        fitted = key[0] == "backward_stages" and (key[1], key[5]) in FIT
        out.append((key, measured, predicted, no_f, splits, fitted, what_if))
    return meta, consts, out


def summary(label, path, meta, rows):
    held = [(m, p, q) for _, m, p, q, _, fitted, _ in rows if not fitted]
    faster = lambda m, p: min(m, key=m.get) == min(p, key=p.get)  # noqa: E731
    cost = max((m[min(p, key=p.get)] / min(m.values()) for m, p, _ in held), default=1.0)
    return (f"- {label} (`{path}`, {meta.get('device')}): the pick is the faster kernel on "
            f"{sum(faster(m, p) for m, p, _ in held)} of the {len(held)} rows not fitted; the pick's time over "
            f"the faster one's, at worst, {cost:.3f}. Without f (a split item priced as any other): "
            f"{sum(faster(m, q) for m, _, q in held)} of {len(held)}.")


def even_split(ggemm, meta, consts):
    """The picks at an even split (s = 0), what a choice made on the host from the shape alone can
    assume, on every shape of harness/cases.csv's backward and grid sets: {kernel: count}."""
    shapes = set()
    with open(os.path.join(ROOT, "harness", "cases.csv")) as f:
        for line in f:
            if line.startswith(("backward_", "grid_")):
                field = line.strip().split(",")
                shapes |= {(t, e, k, n) for t in field[1].split() for e in field[2].split()
                           for k in field[3].split() for n in field[4].split()}
    picks = {k: 0 for k in KERNELS}
    for t, e, k, n in sorted(shapes):
        r = {"tokens": t, "experts": e, "k": k, "n": n, "skew": "0"}
        p = {kernel: predict(*work(ggemm, kernel, r, meta["sms"]), *consts[kernel]) for kernel in KERNELS}
        picks[min(p, key=p.get)] += 1
    return picks


def main():
    a = readme_block.ggemm_args(__doc__.splitlines()[0], "the k5-wgrad-rule block is")
    if a is None:
        return 0
    short = {"k5_wgrad_pingpong_dyn": "pp_dyn", "k5_wgrad_m256_dyn": "m256_dyn"}
    consts = ["| run | kernel | a: µs per item | b: µs per block | f: µs per split item |", "|---|---|---:|---:|---:|"]
    lines, sums = [], []
    for i, (label, path, old) in enumerate(RUNS):
        meta, c, rows = run(a.ggemm, path, old)
        consts += [f"| {label} | `{k}` | {c[k][0]:.2f} | {c[k][1]:.2f} | {c[k][2]:.1f} |" for k in KERNELS]
        sums.append(summary(label, path, meta, rows))
        if i:
            continue
        even = even_split(a.ggemm, meta, c)
        lines = ["| set | rows | skew | split items pp_dyn / m256_dyn | measured µs pp_dyn / m256_dyn | "
                 "predicted µs pp_dyn / m256_dyn | pick | pick's time / the faster's | m256_dyn at today's chunk: "
                 "predicted µs |", "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
        for key, m, p, _, n, fitted, what_if in rows:
            pick = min(p, key=p.get)
            lines.append(f"| {key[0][len('backward_'):]} | {key[1]} | {key[5]} | {n[KERNELS[0]]} / {n[KERNELS[1]]} | "
                         f"{m[KERNELS[0]]:.1f} / {m[KERNELS[1]]:.1f} | {p[KERNELS[0]]:.1f} / {p[KERNELS[1]]:.1f} | "
                         f"{short[pick]}{' (fitted)' if fitted else ''} | {m[pick] / min(m.values()):.3f} | "
                         f"{what_if:.1f} |")
    note = ("*Generated by `plots/wgrad_rule.py` (its docstring has the model) from the committed runs below and "
            "`ggemm tiles --kernel` of this build (each row's list, on the run's SMs). Constants per run and "
            "kernel, from three of the worklog's cases (a and b as the item-cost table computes them); every "
            "other row predicted; each run's lists as it ran them (the 256-row tile at the old chunk before "
            "769b4fc). The rows of the first run; split items: those that are one split of a reduction cut "
            "across CTAs, each paying f; the last column: the 256-row tile's list at today's chunk (the twin's), "
            "priced with its own constants, the prediction the `k5-chunk-h100` A/B tested:*")
    evens = (f"At an even split (s = 0: all a choice made on the host from the shape alone can assume), with the "
             f"first run's constants, on the {sum(even.values())} shapes of harness/cases.csv's backward and grid "
             "sets: " + ", ".join(f"`{k}` {n}" for k, n in even.items()) + ".")
    text = "\n".join([note, ""] + consts + [""] + lines + [""] + sums + ["", evens])
    return readme_block.write_block(readme_block.stage_files("k5_backward"), "k5-wgrad-rule", text, a.check)


if __name__ == "__main__":
    sys.exit(main())
