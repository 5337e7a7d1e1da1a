"""The k3_wgmma entry point on the public validation grid (harness/cases.csv, sets grid_*).

For every grid shape: the configuration the cost model picks (`ggemm problem`, this build, the
committed calibration), its measured time in the configuration sweeps, the fastest configuration
it chooses among, the old rule's pick where it was measured, and torch._grouped_mm. Writes the
`k3-grid` table (k3_wgmma/TRIALS.md) and the `k3-grid-summary` lines (k3_wgmma/README.md).

    python3 plots/k3_grid.py [--ggemm build/bin/ggemm] [--check]

Inputs (results/h200/evidence/): grid-configs-*.csv (every configuration, calls A and C),
grid-default-177b750.csv (torch in the run of the default). Standard library only.
"""
import argparse
import csv
import glob
import math
import os
import re
import subprocess
import sys

import readme_block

ROOT = readme_block.ROOT
EVIDENCE = os.path.join(ROOT, "results", "h200", "evidence")
CHOICES = ["pingpong_m128_n192", "pingpong_m64_n192", "coop_m128_n192", "coop_m64_n192", "coop_m128_n256",
           "coop_m64_n256", "pingpong_m128_n128", "pingpong_m64_n128", "coop_m64_n128"]
PREFIX = "k3_wgmma_"
clock_of = {}  # shape -> configuration -> the SM clock at the end of its series


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def header(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(f"# {key}="):
                return line.split("=", 1)[1].strip()
    return "?"


def shape(r):
    return (r["set"], int(r["tokens"]), int(r["experts"]), int(r["k"]), int(r["n"]), float(r["skew"]))


def load():
    configs, old_pick, torch, first, ablations = {}, {}, {}, {}, {}
    sources = sorted(glob.glob(os.path.join(EVIDENCE, "grid-configs-*.csv")))
    for path in sources:
        for r in rows(path):
            k, name = shape(r), r["kernel"]
            if name.startswith(PREFIX) and name[len(PREFIX):] in CHOICES:
                configs.setdefault(k, {})[name[len(PREFIX):]] = float(r["time_us_median"])
                clock_of.setdefault(k, {})[name[len(PREFIX):]] = r["sm_clock_mhz"]
            elif name == "k3_wgmma":  # the old rule's pick, its name first in the config column
                old_pick[k] = r["config"].split(":")[0][len(PREFIX):]
            elif name.startswith(PREFIX) and name.rsplit("_", 1)[1] in ("solo", "mcb", "mca"):
                ablations.setdefault(k, {})[name[len(PREFIX):]] = (float(r["time_us_median"]), r["sm_clock_mhz"])
    default = os.path.join(EVIDENCE, "grid-default-177b750.csv")
    for r in rows(default):
        if r["kernel"] == "torch_grouped_mm":
            torch[shape(r)] = float(r["time_us_median"])
        elif r["kernel"] == "k3_wgmma":  # the first model (even split, no B re-reads), as it ran
            first[shape(r)] = float(r["time_us_median"])
    return configs, old_pick, torch, first, ablations, sources + [default]


def model_pick(ggemm, k):
    _, tokens, experts, kk, n, skew = k
    # the H200's picks, whatever GPU and calibration the caller has: the table is the H200's
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", GG_CALIBRATION=os.path.join(ROOT, "results", "h200",
                                                                                 "calibration.csv"))
    out = subprocess.run([ggemm, "problem", "--tokens", str(tokens), "--experts", str(experts), "--k", str(kk),
                          "--n", str(n), "--skew", str(skew)], capture_output=True, text=True, check=True,
                         env=env).stdout
    m = re.search(r"k3_wgmma would run k3_wgmma_(\w+): predicted ([0-9.]+) us", out)
    return m.group(1), float(m.group(2))


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ggemm", default=os.path.join(ROOT, "build", "bin", "ggemm"))
    ap.add_argument("--check", action="store_true", help="only say whether the blocks would change")
    a = ap.parse_args()
    if not os.access(a.ggemm, os.X_OK):
        print(f"k3_grid.py: {a.ggemm} not built: the k3-grid blocks are not regenerated")
        return 0
    configs, old_pick, torch, first, ablations, sources = load()
    table = ["| shape | rows | E | K | N | skew | model's pick (predicted µs) | its time µs | fastest choice | "
             "pick / fastest | old rule's pick / fastest | torch µs | torch / pick |",
             "|---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|"]
    ratio, old_ratio, vs_torch, first_ratio, same, within = [], [], [], [], [], 0
    pairs = ["| shape | ablation | its time µs (SM clock MHz) | fastest choice µs (SM clock MHz) | ablation / choice |",
             "|---|---|---:|---:|---:|"]
    with open(os.path.join(ROOT, "harness", "cases.csv")) as f:  # the grid's own order
        order = [line.split(",")[0] for line in f if line.startswith("grid_")]
    for k in sorted(configs, key=lambda k: (order.index(k[0]) if k[0] in order else len(order), k[1])):
        times = configs[k]
        if len(times) < len(CHOICES):
            continue
        pick, predicted = model_pick(a.ggemm, k)
        best = min(times, key=times.get)
        r = times[pick] / times[best]
        ratio.append(r)
        within += r <= 1.05
        old = f"{times[old_pick[k]] / times[best]:.3f}" if k in old_pick else "–"
        if k in old_pick:
            old_ratio.append(times[old_pick[k]] / times[best])
            same.append(r)
        t = torch.get(k)
        if t:
            vs_torch.append(t / times[pick])
        if k in first:
            first_ratio.append(first[k] / times[best])
        for abl, (ta, clock) in sorted(ablations.get(k, {}).items()):
            if ta < times[best]:
                pairs.append(f"| {k[0][len('grid_'):]} | `{abl}` | {ta:.1f} ({clock}) | {times[best]:.1f} "
                             f"({clock_of[k][best]}) | {ta / times[best]:.3f} |")
        table.append(f"| {k[0][len('grid_'):]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {k[5]:g} | `{pick}` ({predicted:.0f}) "
                     f"| {times[pick]:.1f} | `{best}` | {r:.3f} | {old} | {t:.1f} | {t / times[pick]:.2f} |"
                     if t else f"| {k[0]} | … | | | | | `{pick}` | {times[pick]:.1f} | `{best}` | {r:.3f} | {old} | – | – |")
    srcs = ", ".join(f"`{os.path.relpath(p, ROOT)}` (commit {header(p, 'commit')})" for p in sources)
    note = (f"*Generated by `plots/k3_grid.py` from {srcs}, and this build's `ggemm problem` with the committed "
            "calibration (`results/h200/calibration.csv`). Times: the median of the configuration sweeps; "
            "torch ran in another run of the same day (call B), so its ratio carries the run-to-run spread of "
            "the power-capped shapes.*")
    n = len(ratio)
    vt = sorted(vs_torch)
    summary = [
        f"*Generated by `plots/k3_grid.py` (sources in TRIALS.md's `k3-grid` table).*",
        "",
        f"On the {n} shapes of the validation grid the model's pick is within 5% of the fastest configuration it "
        f"chooses among on {within} (worst {max(ratio):.3f}x its time, geometric mean {geo(ratio):.3f}x); "
        f"the rule it replaced, on the {len(old_ratio)} shapes where it was measured: worst {max(old_ratio):.3f}x, "
        f"geometric mean {geo(old_ratio):.3f}x, within 5% on {sum(x <= 1.05 for x in old_ratio)}; the model on those "
        f"same shapes: worst {max(same):.3f}x, geometric mean {geo(same):.3f}x, within 5% on "
        f"{sum(x <= 1.05 for x in same)}. "
        f"Against torch._grouped_mm the pick's time is {vt[0]:.2f}x to {vt[-1]:.2f}x (median "
        f"{vt[len(vt) // 2]:.2f}x; at least 1.0x on {sum(x >= 1.0 for x in vt)} of {len(vt)}). "
        f"The first model (an even split, no B re-reads), as it ran in call B: worst {max(first_ratio):.3f}x the "
        f"fastest configuration's time, geometric mean {geo(first_ratio):.3f}x, within 5% on "
        f"{sum(x <= 1.05 for x in first_ratio)} of {len(first_ratio)}.",
    ]
    rc = 0
    pairs_note = ("*Generated by `plots/k3_grid.py` from `results/h200/evidence/grid-configs-dc5168c.csv` (call A, "
                  "built with the ablations): the grid shapes where an ablation beat every configuration the entry "
                  "point chooses among, in the same run.*")
    for name, text, paths in (("k3-grid", "\n".join([note, ""] + table), readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-ablations", "\n".join([pairs_note, ""] + pairs),
                               readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-summary", "\n".join(summary), readme_block.stage_files("k3_wgmma"))):
        changed = readme_block.replace_block(paths, name, text, check=a.check)
        if changed is None:
            print(readme_block.missing(name, paths))
            rc = 1
        elif changed and a.check:
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
