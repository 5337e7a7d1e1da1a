"""The k3_wgmma entry point on the public validation grid (harness/cases.csv, sets grid_*).

For every grid shape: the configuration the cost model picks (`ggemm problem`, this build, the
committed calibration), its measured time in the configuration sweeps, the fastest configuration
it chooses among, the old rule's pick where it was measured, and torch._grouped_mm. Writes the
`k3-grid` table, the `k3-grid-ablations` table (ablations that beat every choice) and the
`k3-grid-widths` table (192 against 256 wide, with each schedule's B share from `ggemm tiles`),
in k3_wgmma/TRIALS.md, the `k3-grid-summary` lines (TRIALS.md) and their short form `k3-grid-brief`
(README.md).

    python3 plots/k3_grid.py [--ggemm build/bin/ggemm] [--check]

Inputs (results/h200/evidence/): grid-configs-*.csv (every configuration, calls A and C),
holdout-*.csv (the held-out shapes' run; the `k3-holdout` block lists their picks before one exists),
grid-default-*.csv (the entry point and torch in one run: the latest with both; 177b750's is also
the first model as it ran); results/h200/sweep.csv (shapes off
the grid that ran every configuration). Standard library only.
"""
import bisect
import csv
import functools
import glob
import gzip
import math
import os
import re
import subprocess
import sys
import tempfile

import readme_block
import work_lists
from tables import load as read_results  # ({header key: value}, rows) of a results CSV

ROOT = readme_block.ROOT
EVIDENCE = os.path.join(ROOT, "results", "h200", "evidence")
CHOICES = ["pingpong_m128_n192", "pingpong_m64_n192", "coop_m128_n192", "coop_m64_n192", "coop_m128_n256",
           "coop_m64_n256", "pingpong_m128_n128", "pingpong_m64_n128", "coop_m64_n128"]
PREFIX = "k3_wgmma_"
# the two configurations most of the choice is between: the widths table sets them side by side
PAIR = ("pingpong_m128_n192", "coop_m128_n256")
WINDOW_SAMPLES = 100  # moments at which schedule_of looks at the running tiles
config_rows = {}  # shape -> configuration -> its row in the configuration sweeps (its latest run)
file_rows = {}  # sweep file -> shape -> configuration -> its row there (comparisons within one run)


def shape(r):
    return (r["set"], int(r["tokens"]), int(r["experts"]), int(r["k"]), int(r["n"]), float(r["skew"]))


def load():
    configs, old_pick, torch, first, ablations, entry = {}, {}, {}, {}, {}, {}
    # oldest run first (by its date line, not its name: names carry commit hashes), so a later run of a shape and
    # configuration replaces an earlier one
    sweeps = {p: read_results(p) for p in glob.glob(os.path.join(EVIDENCE, "grid-configs-*.csv"))}
    sources = sorted(sweeps, key=lambda p: (sweeps[p][0].get("date", ""), p))
    for path in sources:
        for r in sweeps[path][1]:
            k, name = shape(r), r["kernel"]
            if name.startswith(PREFIX) and name[len(PREFIX):] in CHOICES:
                configs.setdefault(k, {})[name[len(PREFIX):]] = float(r["time_us_median"])
                config_rows.setdefault(k, {})[name[len(PREFIX):]] = r
                file_rows.setdefault(path, {}).setdefault(k, {})[name[len(PREFIX):]] = r
            elif name == "k3_wgmma":  # the old rule's pick, its name first in the config column
                old_pick[k] = r["config"].split(":")[0][len(PREFIX):]
            elif name.startswith(PREFIX) and name.rsplit("_", 1)[1] in ("solo", "mcb", "mca"):
                ablations.setdefault(k, {})[name[len(PREFIX):]] = (float(r["time_us_median"]), r["sm_clock_mhz"],
                                                                   path)
    first_run = os.path.join(EVIDENCE, "grid-default-177b750.csv")
    for r in read_results(first_run)[1]:
        if r["kernel"] == "k3_wgmma" and r["check"] == "pass":  # the first model (even split, no B re-reads)
            first[shape(r)] = float(r["time_us_median"])

    # the latest run (by its date line) of the entry point with torch beside it
    runs = {p: read_results(p) for p in glob.glob(os.path.join(EVIDENCE, "grid-default-*.csv"))}
    runs = {p: v for p, v in runs.items() if {"k3_wgmma", "torch_grouped_mm"} <= {r["kernel"] for r in v[1]}}
    default = max(runs, key=lambda p: runs[p][0].get("date", ""))
    for r in runs[default][1]:
        if r["kernel"] == "torch_grouped_mm" and r["check"] == "pass":
            torch[shape(r)] = float(r["time_us_median"])
        elif r["kernel"] == "k3_wgmma" and r["check"] == "pass":
            entry[shape(r)] = (float(r["time_us_median"]), r["config"].split(":")[0][len(PREFIX):])
    return configs, old_pick, torch, first, ablations, entry, sorted({*sources, first_run, default}), default, \
        runs[default][0]


@functools.lru_cache(maxsize=None)  # the blocks ask again for the same shapes and calibrations
def model_line(ggemm, k, calibration):
    """`ggemm problem`'s line of the choice for shape k with `calibration` (no GPU)."""
    _, tokens, experts, kk, n, skew = k
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", GG_CALIBRATION=calibration)
    out = subprocess.run([ggemm, "problem", "--tokens", str(tokens), "--experts", str(experts), "--k", str(kk),
                          "--n", str(n), "--skew", str(skew)], capture_output=True, text=True, check=True,
                         env=env).stdout
    return next(line for line in out.splitlines() if "k3_wgmma would run" in line)


def calibration(gpu):
    """results/<gpu>/calibration.csv: a GPU's committed calibration."""
    return os.path.join(ROOT, "results", gpu, "calibration.csv")


def model_pick(ggemm, k):
    # the H200's picks, whatever GPU and calibration the caller has: the table is the H200's
    line = model_line(ggemm, k, calibration("h200"))
    m = re.search(r"k3_wgmma would run k3_wgmma_(\w+): predicted ([0-9.]+) us .*B share ([0-9.]+)", line)
    return m.group(1), float(m.group(2)), float(m.group(3))


def predictions_of(line):
    """{configuration: predicted µs} of a `ggemm problem` choice line: the pick's, then the runners-up's."""
    m = re.search(r"would run k3_wgmma_(\w+): predicted ([0-9.]+)", line)
    predicted = {m.group(1): float(m.group(2))}
    predicted.update((c, float(x)) for c, x in re.findall(r"(\w+_m\d+_n\d+) ([0-9.]+)", line.split("; next")[1]))
    return predicted


def model_terms(ggemm, k, calibration):
    """(the pick's t_run, its t_dram, {configuration: predicted µs}, the pick) of `ggemm problem` for
    shape k: the pick is the least prediction."""
    line = model_line(ggemm, k, calibration)
    m = re.search(r"would run k3_wgmma_(\w+): .*t_run ([0-9.]+), t_dram ([0-9.]+)", line)
    return float(m.group(2)), float(m.group(3)), predictions_of(line), m.group(1)


def configs_of(path):
    """shape -> configuration -> median µs of the results CSV at path, for the shapes where every
    configuration the entry point chooses among ran and passed its check."""
    times = {}
    for r in read_results(path)[1]:
        name = r["kernel"][len(PREFIX):] if r["kernel"].startswith(PREFIX) else ""
        if r["check"] == "pass" and name in CHOICES:
            times.setdefault(shape(r), {})[name] = float(r["time_us_median"])
    return {k: v for k, v in times.items() if len(v) == len(CHOICES)}


def sweep_shapes():
    """The committed sweep's shapes that ran every configuration (not grid shapes: a check on
    shapes the model's terms were not found on): shape -> configuration -> median time."""
    return configs_of(os.path.join(ROOT, "results", "h200", "sweep.csv"))


def schedule_of(ggemm, k, config):
    """What the schedule the kernel runs for this shape's own split deals each CTA (`ggemm tiles`):
    the B share (the largest CTA's columns of B loaded over the mean of the CTAs that hold a tile),
    the window (below), and the SMs.

    The window is a thought experiment on the list, not a measurement: if every tile took a time
    in proportion to its columns (a launch that streams B from DRAM at an equal share per SM),
    how far apart in the list would the tiles running at one moment be, in grids, averaged until
    the first CTA runs out of tiles. One grid is lockstep; narrow tiles let some CTAs run ahead."""
    _, tokens, experts, kk, n, skew = k
    meta, dealt = work_lists.tiles(ggemm, "--kernel", PREFIX + config, "--tokens", tokens, "--experts", experts,
                                   "--k", kk, "--n", n, "--skew", skew)
    grid, sms, block_n = (int(meta[key]) for key in ("grid", "sms", "block_n"))
    ends, tiles = [[] for _ in range(grid)], [[] for _ in range(grid)]  # per CTA, in its order
    for t in dealt:
        ends[t["cta"]].append(t["end"] / block_n)
        tiles[t["cta"]].append(t["tile"])
    busy = [c for c in range(grid) if ends[c]]
    share = max(ends[c][-1] for c in busy) * len(busy) / math.fsum(ends[c][-1] for c in busy)
    first_out, spans = min(ends[c][-1] for c in busy), []
    for i in range(1, WINDOW_SAMPLES):
        now = first_out * i / WINDOW_SAMPLES
        running = [tiles[c][bisect.bisect_right(ends[c], now)] for c in busy]
        spans.append((max(running) - min(running)) / len(busy))
    return share, math.fsum(spans) / len(spans), sms


def fastest_rates():
    """Per grid shape: the DRAM rate of its fastest configuration among the choices, over the copy
    ceiling measured in the same run (each sweep file's header)."""
    best = {}
    for path in sorted(glob.glob(os.path.join(EVIDENCE, "grid-configs-*.csv"))):
        meta, measured = read_results(path)
        copy = float(meta["ceiling_copy_gbps"])
        for r in measured:
            name = r["kernel"][len(PREFIX):] if r["kernel"].startswith(PREFIX) else ""
            t = float(r["time_us_median"])
            if name in CHOICES and (shape(r) not in best or t < best[shape(r)][0]):
                best[shape(r)] = (t, float(r["gbps"]) / copy)
    return {k: v[1] for k, v in best.items()}


def widths_table(ggemm, configs):
    """192 against 256 wide on every grid shape, with what the schedule deals each CTA."""
    a, b = PAIR
    rate = fastest_rates()
    lines, sms = [], 0
    slower, partial, explained, drifted = 0, 0, 0, 0
    drift_heavy = [0, 0]  # at >= 3/4 of the copy rate, the 192-wide window above 1.25 grids: [rows, slower]
    heavy = {True: [0, 0], False: [0, 0]}  # at >= 3/4 of the copy rate, N a multiple of 192: [rows, slower]
    for k in sorted((k for k in configs if len(configs[k]) == len(CHOICES)), key=lambda k: configs[k][a] / configs[k][b]):
        ratio = configs[k][a] / configs[k][b]
        (sa, wa, sms), (sb, wb, _) = schedule_of(ggemm, k, a), schedule_of(ggemm, k, b)
        n = k[4]
        if ratio > 1.05:
            slower += 1
            partial += n % 256 == 0 and n % 192 != 0
            explained += sa / sb > 1.05
            drifted += wa > 1.25 > wb
        if rate[k] >= 0.75:
            heavy[n % 192 == 0][0] += 1
            heavy[n % 192 == 0][1] += ratio > 1.05
            if wa > 1.25:
                drift_heavy[0] += 1
                drift_heavy[1] += ratio > 1.05
        lines.append(f"| {k[0][len('grid_'):]} | {k[1]} | {n} | {n % 192} | {n % 256} | {100 * rate[k]:.0f}% | "
                     f"{ratio:.3f} | {sa:.3f} | {sb:.3f} | {sa / sb:.3f} | {wa:.2f} | {wb:.2f} |")
    note = (f"*Generated by `plots/k3_grid.py` from the configuration sweeps (the `k3-grid` table's sources) and "
            f"`ggemm tiles --kernel` (the schedule each kernel runs for the shape's own split, {sms} SMs): the time "
            f"of `{a}` over `{b}`, the DRAM rate of the shape's fastest configuration over the copy ceiling of the "
            f"same run, each one's B share (the largest CTA's columns of B loaded over the mean) and its window "
            f"(if each tile took a time in proportion to its columns, how far apart in the list the tiles running "
            f"at one moment would be, in grids: one is lockstep; `schedule_of` in the script). The 192-wide tile is "
            f"more than 5% slower on {slower} shapes, {partial} of them with N a multiple of 256 and not of 192; its "
            f"B share is more than 5% above the 256-wide one's on {explained} of them, its window above 1.25 grids "
            f"while the 256-wide one's is not on {drifted}. Each time is its configuration's latest run, so the two "
            f"widths of a shape may come from different runs (the `k3-grid` table's sources), and a ratio then "
            f"carries two runs' power states. At three quarters of the copy rate or more, it is more "
            f"than 5% slower on {heavy[False][1]} of the {heavy[False][0]} shapes whose N is not a multiple of 192, "
            f"and on {heavy[True][1]} of the {heavy[True][0]} whose N is; on {drift_heavy[1]} of the "
            f"{drift_heavy[0]} whose 192-wide window is above 1.25 grids.*")
    head = ["| shape | rows | N | N mod 192 | N mod 256 | DRAM rate / copy | time 192 / 256 | B share 192 | "
            "B share 256 | share 192 / 256 | window 192 | window 256 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    return "\n".join([note, ""] + head + lines)


# Configurations that run the same tiles where no expert's last row tile is 64 rows: adaptive rows
# then deal only 128-row tiles, so each pair's two kernels do the same work in the same order.
TWINS = [("pingpong_m64_n192", "pingpong_m128_n192"), ("coop_m64_n192", "coop_m128_n192"),
         ("coop_m64_n256", "coop_m128_n256"), ("pingpong_m64_n128", "pingpong_m128_n128")]


def twins_block(ggemm):
    """The run-to-run spread of the configuration sweeps, measured on the configurations that run the
    same tiles: on grid shapes whose split has no 64-row tile (`ggemm tiles`), each twin pair's
    slower time over its faster, with both series' power-capped shares."""
    def same_run(k, a, b):  # the pair's rows from the latest sweep that ran both (files oldest first)
        runs = [f[k] for f in file_rows.values() if k in f and a in f[k] and b in f[k]]
        return (runs[-1][a], runs[-1][b]) if runs else None

    lines, ratios = [], []
    for k in sorted(config_rows):
        _, tokens, experts, kk, n, skew = k
        # whether a 64-row tile is dealt depends on the split alone (gg_row_tiles), not on the width
        _, dealt = work_lists.tiles(ggemm, "--kernel", PREFIX + TWINS[0][0], "--tokens", tokens, "--experts", experts,
                                    "--k", kk, "--n", n, "--skew", skew)
        if any(int(t["height"]) == 64 for t in dealt):
            continue
        for a, b in TWINS:
            if same_run(k, a, b):
                ra, rb = same_run(k, a, b)
                ta, tb = float(ra["time_us_median"]), float(rb["time_us_median"])
                ratios.append(max(ta, tb) / min(ta, tb))
                lines.append((ratios[-1], f"| {k[0][len('grid_'):]} | {tokens} | `{a}` / `{b}` | {ta:.1f} / {tb:.1f} | "
                                          f"{ratios[-1]:.3f} | {capped_pct(ra)} / {capped_pct(rb)} |"))
    lines.sort(key=lambda x: -x[0])
    if not ratios:
        return None
    note = (f"*Generated by `plots/k3_grid.py` from the configuration sweeps (the `k3-grid` table's sources) and "
            f"`ggemm tiles`: on the grid shapes whose split has no 64-row tile, adaptive rows deal the same "
            f"128-row tiles as fixed rows, so each pair below runs the same work in the same order; both times "
            f"from one sweep, the latest that ran both. Of "
            f"{len(ratios)} such pairs, {sum(x > 1.05 for x in ratios)} differ by more than 5% and "
            f"{sum(x > 1.02 for x in ratios)} by more than 2% (the largest {max(ratios):.3f}x); the table lists "
            f"every pair above 1.02, with the share of each series spent power-capped.*")
    head = ["| shape | rows | pair | median µs | slower / faster | power-capped % |", "|---|---:|---|---:|---:|---:|"]
    return "\n".join([note, ""] + head + [line for r, line in lines if r > 1.02])


# Runs of the entry point and torch on another GPU, with the H200's calibration as the fallback: each
# block's tag, its CSV, and the earlier run it is read beside (or None).
OTHER_GPU = os.path.join(ROOT, "results", "h100-80gb-hbm3", "evidence")
OTHER_GPU_RUNS = [("k3-grid-h100", os.path.join(OTHER_GPU, "grid-default-3498a42c66d6.csv"), None),
                  ("k3-grid-h100-a91969b", os.path.join(OTHER_GPU, "grid-default-a91969b51fbb.csv"),
                   os.path.join(OTHER_GPU, "grid-default-3498a42c66d6.csv"))]


def grid_run(run):
    """(meta, the entry point's rows by shape, torch's median µs by shape) of one run's CSV."""
    meta, rows = read_results(run)
    entry = {shape(r): r for r in rows if r["kernel"] == "k3_wgmma" and r["check"] == "pass"}
    torch = {shape(r): float(r["time_us_median"]) for r in rows
             if r["kernel"] == "torch_grouped_mm" and r["check"] == "pass"}
    return meta, entry, torch


def other_gpu_block(run, before=None):
    """The entry point against torch on the grid, both in one run (the CSV `run`) on a GPU it was
    not calibrated on; with `before` (an earlier run's CSV), that run's two times beside each."""
    if not os.path.exists(run):
        return None
    meta, entry, torch = grid_run(run)
    both = sorted((torch[k] / float(entry[k]["time_us_median"]), k) for k in entry if k in torch)
    if not both:
        return None
    _, entry0, torch0 = grid_run(before) if before else (None, {}, {})
    xs = [x for x, _ in both]
    earlier = lambda k: (f" {float(entry0[k]['time_us_median']):.1f} | {torch0[k]:.1f} |"  # noqa: E731
                         if k in entry0 and k in torch0 else " – | – |") if before else ""
    lines = [f"| {k[0][len('grid_'):]} | {k[1]} | {k[5]:g} | `{entry[k]['config'].split(':')[0][len(PREFIX):]}` | "
             f"{float(entry[k]['time_us_median']):.1f} | {torch[k]:.1f} | {x:.2f} | {capped_pct(entry[k])} |"
             + earlier(k) for x, k in both if x < 1.0]
    note = (f"*Generated by `plots/k3_grid.py` from `{os.path.relpath(run, ROOT)}`: {meta.get('device')}, "
            f"commit {meta.get('commit')}, the entry point (the H200's calibration, its fallback on a GPU without "
            f"its own) and torch._grouped_mm in one run. On its {len(xs)} grid shapes the entry point runs "
            f"{xs[0]:.2f}x to {xs[-1]:.2f}x torch's speed (median {median(xs):.2f}x; at least 1.0x on "
            f"{sum(x >= 1.0 for x in xs)} of {len(xs)}); the shapes below 1.0"
            + (f", with the two times of the same shape in `{os.path.relpath(before, ROOT)}`" if before else "")
            + ":*")
    head = ["| shape | rows | skew | ran | µs | torch µs | × torch | power-capped % |" +
            (" earlier µs | earlier torch µs |" if before else ""),
            "|---|---:|---:|---|---:|---:|---:|---:|" + ("---:|---:|" if before else "")]
    return "\n".join([note, ""] + head + lines)


# A run on another GPU with that GPU's own calibration (`ggemm calibrate` in the same call): its
# tag, the entry point's run with torch, the configurations' sweep of the same call, the earlier run
# of the entry point with the H200's calibration on the same GPU, and the calibration file.
OWN_CALIBRATION = ("k3-grid-h100-own", os.path.join(OTHER_GPU, "grid-default-769b4fc5aec0.csv"),
                   os.path.join(OTHER_GPU, "grid-configs-769b4fc5aec0.csv"),
                   os.path.join(OTHER_GPU, "grid-default-a91969b51fbb.csv"),
                   os.path.join(OTHER_GPU, "calibration-769b4fc5aec0.csv"))


def own_calibration_block(ggemm, run, configs_csv, before, calibration):
    """The entry point calibrated on the GPU it runs on, against its picks with the H200's
    calibration (an earlier run on the same GPU), both judged by one sweep of every configuration."""
    if not all(os.path.exists(p) for p in (run, configs_csv, before, calibration)):
        return None
    meta, entry, torch = grid_run(run)
    _, entry0, torch0 = grid_run(before)
    full = {k: v for k, v in configs_of(configs_csv).items() if k in entry and k in entry0}
    pick = lambda rows, k: rows[k]["config"].split(":")[0][len(PREFIX):]  # noqa: E731

    def judged(picks):
        rs = [full[k][picks(k)] / min(full[k].values()) for k in full]
        return f"within 5% on {sum(r <= 1.05 for r in rs)} of {len(rs)} (worst {max(rs):.3f}x, geometric mean {geo(rs):.3f}x)"

    def vs_torch(e, tt):
        xs = sorted(tt[k] / float(e[k]["time_us_median"]) for k in e if k in tt)
        return (f"{xs[0]:.2f}x to {xs[-1]:.2f}x torch's speed (median {median(xs):.2f}x; at least 1.0x on "
                f"{sum(x >= 1.0 for x in xs)} of {len(xs)})")
    best = min(CHOICES, key=lambda c: (-sum(full[k][c] / min(full[k].values()) <= 1.05 for k in full),
                                       max(full[k][c] / min(full[k].values()) for k in full)))
    moved = sum(pick(entry, k) != pick(entry0, k) for k in entry if k in entry0)
    note = (f"*Generated by `plots/k3_grid.py`: {meta.get('device')}, commit {meta.get('commit')}. The entry "
            f"point with this GPU's own calibration (`{os.path.relpath(calibration, ROOT)}`, measured in the same "
            f"call) and torch in one run (`{os.path.relpath(run, ROOT)}`): {vs_torch(entry, torch)}; with the "
            f"H200's calibration in the earlier run (`{os.path.relpath(before, ROOT)}`): {vs_torch(entry0, torch0)}. "
            f"The two calibrations pick differently on {moved} of {len(entry)} shapes. Judged by one sweep of every "
            f"configuration in the same call as the first (`{os.path.relpath(configs_csv, ROOT)}`, cut by the "
            f"call's time limit: the {len(full)} shapes it finished), the picks with this GPU's calibration are "
            f"{judged(lambda k: pick(entry, k))}; with the H200's, {judged(lambda k: pick(entry0, k))}; the best "
            f"single configuration, `{best}` everywhere, {judged(lambda k: best)}. The shapes where the own "
            f"calibration's pick is more than 5% slower than the fastest, each with what the model predicted "
            f"(`ggemm problem` with that calibration, no GPU): its two bounds for the pick, and its times "
            f"beside the measured ones:*")
    head = ["| shape | rows | skew | pick | fastest | pick / fastest | "
            f"`{best}` / fastest | pick's t_run / t_dram, predicted µs | pick: predicted / measured µs | "
            "fastest: predicted / measured µs |", "|---|---:|---:|---|---|---:|---:|---:|---:|---:|"]
    lines = []
    for k in sorted(full, key=lambda k: -full[k][pick(entry, k)] / min(full[k].values())):
        v, p_ = full[k], pick(entry, k)
        fastest = min(v, key=v.get)
        if v[p_] / v[fastest] > 1.05:
            t_run, t_dram, predicted, now = model_terms(ggemm, k, calibration)
            bounds = f"{t_run:.0f} / {t_dram:.0f}" if now == p_ else f"– (`{now}` now)"  # the line's pick's
            lines.append(f"| {k[0][len('grid_'):]} | {k[1]} | {k[5]:g} | `{p_}` | `{fastest}` | "
                         f"{v[p_] / v[fastest]:.3f} | {v[best] / v[fastest]:.3f} | {bounds} | "
                         f"{predicted[p_]:.0f} / {v[p_]:.0f} | {predicted[fastest]:.0f} / {v[fastest]:.0f} |")
    return "\n".join([note, ""] + head + lines)


# The DRAM-shape trial (k3_wgmma/TRIALS.md, `dram_eff`): a calibration measured with the DRAM-bound
# shape on the H100, its picks with and without the per-configuration `dram_eff` it fit (the same
# file, the column dropped), and the older calibration without the shape, each judged by the H100's
# sweep of every configuration (the kernels have not changed since it ran); then the entry point
# with that calibration against the H200's, both measured in one run with torch.
DRAM_TRIAL = ("k3-grid-h100-dram", os.path.join(OTHER_GPU, "calibration-5fa00baa7ac6.csv"),
              os.path.join(OTHER_GPU, "calibration-769b4fc5aec0.csv"), os.path.join(OTHER_GPU, "grid-configs-769b4fc5aec0.csv"),
              os.path.join(OTHER_GPU, "grid-default-5fa00baa7ac6.csv"),
              os.path.join(OTHER_GPU, "grid-default-h200cal-5fa00baa7ac6.csv"))


def without_column(calibration, column, out):
    """A copy of a calibration file with one column dropped (the model then takes its default)."""
    with open(calibration) as f, open(out, "w") as g:
        drop = None
        for line in f:
            if line.startswith("#"):
                g.write(line)
                continue
            cells = line.rstrip("\n").split(",")
            if drop is None:
                drop = cells.index(column)
            g.write(",".join(c for i, c in enumerate(cells) if i != drop) + "\n")


def calibration_rows(ggemm, full, calibration, older):
    """The table of the DRAM trial: the picks of an older calibration (no DRAM shape), of the new
    one with its dram_eff column dropped and of the new one, each judged by the measured times
    `full` (shape -> configuration -> µs)."""
    lines = ["| calibration | picks within 5% of the fastest | worst | geometric mean | picks changed from the row "
             "above: faster / slower / same time |", "|---|---:|---:|---:|---:|"]
    previous = None
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "calibration-no-dram_eff.csv")
        without_column(calibration, "dram_eff", plain)
        for label, cal in ((f"older, no DRAM shape (`{os.path.basename(older)}`)", older),
                           ("new, `dram_eff` dropped", plain),
                           (f"new, with `dram_eff` (`{os.path.basename(calibration)}`)", calibration)):
            picks = {k: model_terms(ggemm, k, cal)[3] for k in full}
            rs = [full[k][picks[k]] / min(full[k].values()) for k in full]
            change = "–"
            if previous:
                moved = [full[k][picks[k]] / full[k][previous[k]] for k in full if picks[k] != previous[k]]
                change = (f"{sum(x < 0.99 for x in moved)} / {sum(x > 1.01 for x in moved)} / "
                          f"{sum(0.99 <= x <= 1.01 for x in moved)}")
            lines.append(f"| {label} | {sum(r <= 1.05 for r in rs)} of {len(rs)} | {max(rs):.3f} | {geo(rs):.3f} | "
                         f"{change} |")
            previous = picks
    return lines


# The same trial judged on the H200 (session 25): its first calibration with the DRAM shape,
# the calibration the entry point used before it, and the grid's configuration sweeps (the
# k3-grid table's, every configuration on every shape).
DRAM_TRIAL_H200 = ("k3-grid-h200-dram", os.path.join(EVIDENCE, "calibrate-66b41bcb6223.csv"),
                   os.path.join(EVIDENCE, "calibration-bd6869e2fc5b.csv"))


def dram_block_h200(ggemm, tag, calibration, older, configs):
    if not all(os.path.exists(p) for p in (calibration, older)):
        return None
    full = {k: t for k, t in configs.items() if len(t) == len(CHOICES)}
    cal_meta, cal_rows = read_results(calibration)
    eff = {r["config"][len(PREFIX):]: float(r["dram_eff"]) for r in cal_rows}
    note = (f"*Generated by `plots/k3_grid.py` from `{os.path.relpath(calibration, ROOT)}` ({cal_meta.get('device')}, "
            f"commit {cal_meta.get('commit')}; `results/h200/calibration.csv` is this file), "
            f"`{os.path.relpath(older, ROOT)}` (the committed calibration before it), the configuration sweeps of the "
            f"`k3-grid` table ({len(full)} shapes with every configuration) and this build's `ggemm problem` for the "
            f"picks (the least prediction). The fitted `dram_eff` runs from {min(eff.values()):.3f} (`{min(eff, key=eff.get)}`) to "
            f"{max(eff.values()):.3f} (`{max(eff, key=eff.get)}`). A pick counts as changed faster or slower by more "
            "than 1%.*")
    return "\n".join([note, ""] + calibration_rows(ggemm, full, calibration, older))


def dram_block(ggemm, tag, calibration, older, configs_csv, run, run_h200cal):
    if not all(os.path.exists(p) for p in (calibration, older, configs_csv, run, run_h200cal)):
        return None
    full = configs_of(configs_csv)
    cal_meta, cal_rows = read_results(calibration)
    eff = {r["config"][len(PREFIX):]: float(r["dram_eff"]) for r in cal_rows}
    lines = calibration_rows(ggemm, full, calibration, older)
    meta, entry, torch = grid_run(run)
    _, entry0, _ = grid_run(run_h200cal)
    both = [k for k in entry if k in entry0]
    ratio = sorted(float(entry0[k]["time_us_median"]) / float(entry[k]["time_us_median"]) for k in both)
    xs = sorted(torch[k] / float(entry[k]["time_us_median"]) for k in entry if k in torch)
    moved = sum(entry[k]["config"].split(":")[0] != entry0[k]["config"].split(":")[0] for k in both)
    note = (f"*Generated by `plots/k3_grid.py` from `{os.path.relpath(calibration, ROOT)}` ({cal_meta.get('device')}, "
            f"commit {cal_meta.get('commit')}), `{os.path.relpath(older, ROOT)}`, the configuration sweep "
            f"`{os.path.relpath(configs_csv, ROOT)}` ({len(full)} shapes with every configuration) and this build's "
            f"`ggemm problem` for the picks. The fitted `dram_eff` runs from {min(eff.values()):.3f} "
            f"(`{min(eff, key=eff.get)}`) to {max(eff.values()):.3f} (`{max(eff, key=eff.get)}`). Measured in one "
            f"run (`{os.path.relpath(run, ROOT)}` and `{os.path.relpath(run_h200cal, ROOT)}`): the entry point with this "
            f"calibration ran a different configuration from the entry point with the H200's on {moved} of "
            f"{len(both)} grid shapes, the H200's time over this one's {ratio[0]:.2f}x to {ratio[-1]:.2f}x (median "
            f"{median(ratio):.2f}x); with this calibration it runs at {xs[0]:.2f}x to {xs[-1]:.2f}x torch's "
            f"speed (median {median(xs):.2f}x; at least 1.0x on {sum(x >= 1.0 for x in xs)} of {len(xs)}). "
            "A pick counts as changed faster or slower by more than 1%.*")
    return "\n".join([note, ""] + lines)


# The tie-break trial (offline: the model's own predictions and configuration sweeps already
# measured, no new run): where the model's pick is DRAM-bound (its t_dram at least its t_run),
# run the widest configuration (BLOCK_N, then cooperative, then BLOCK_M) predicted within a margin
# of the best. Found on the H100's grid with its own calibration; judged on the H200's grid and
# sweep shapes, which it was not found on.
TIEBREAK_MARGINS = (0.02, 0.05)


def tiebreak_pick(ggemm, k, calibration, margin):
    t_run, t_dram, predicted, best = model_terms(ggemm, k, calibration)
    if t_dram < t_run:
        return best
    def widest(c):  # BLOCK_N, then cooperative, then BLOCK_M
        block_m, block_n = map(int, re.search(r"m(\d+)_n(\d+)", c).groups())
        return block_n, c.startswith("coop"), block_m
    return max((c for c in predicted if predicted[c] <= predicted[best] * (1 + margin)), key=widest)


def least_pick(ggemm, k, calibration):
    """The configuration of least prediction: what the entry point runs, the rules' base."""
    return model_terms(ggemm, k, calibration)[3]


def rule_cells(full, picks, base):
    """A rule's row cells: within 5% of the fastest, worst, geometric mean, and its picks changed from
    base's faster / slower / same time (by more than 1%; "–" where picks is base)."""
    rs = [full[k][picks[k]] / min(full[k].values()) for k in full]
    moved = [full[k][picks[k]] / full[k][base[k]] for k in full if picks[k] != base[k]]
    change = (f"{sum(x < 0.99 for x in moved)} / {sum(x > 1.01 for x in moved)} / "
              f"{sum(0.99 <= x <= 1.01 for x in moved)}" if picks is not base else "–")
    return f"{sum(r <= 1.05 for r in rs)} | {max(rs):.3f} | {geo(rs):.3f} | {change}"


def offline_block(ggemm, configs, labels, columns, base_cells, variants, rule):
    """An offline rule's block (no new run): on the H100's grid with its own calibration, then the
    H200's grid and its sweep shapes with the H200's (labels name the three), the least prediction
    (base_cells in the leading columns) and each variant (its cells, its pick(k, calibration)),
    judged by the configuration sweeps; columns: (header, alignment) of the leading columns; rule:
    the caption's sentence on the rule."""
    sets = [(configs_of(OWN_CALIBRATION[2]), OWN_CALIBRATION[4]), (configs, calibration("h200")),
            (sweep_shapes(), calibration("h200"))]
    lines = ["| shapes | n | " + " | ".join(c for c, _ in columns) + " | within 5% of the fastest | worst | geometric "
             "mean | picks changed: faster / slower / same time |",
             "|---|---:|" + "".join(f"{a}|" for _, a in columns) + "---:|---:|---:|---:|"]
    for label, (times, cal) in zip(labels, sets):
        full = {k: v for k, v in times.items() if len(v) == len(CHOICES)}
        base = {k: least_pick(ggemm, k, cal) for k in full}
        lines.append(f"| {label} | {len(full)} | {base_cells} | {rule_cells(full, base, base)} |")
        for cells, pick in variants:
            lines.append(f"| {label} | {len(full)} | {cells} | "
                         f"{rule_cells(full, {k: pick(k, cal) for k in full}, base)} |")
    note = ("*Generated by `plots/k3_grid.py` from the configuration sweeps already committed (the H100's "
            f"`{os.path.relpath(OWN_CALIBRATION[2], ROOT)}` with its own calibration; the H200's in the `k3-grid` "
            "table and `results/h200/sweep.csv` with the H200's) and this build's `ggemm problem`: no new run. "
            f"{rule} A pick counts as changed faster or slower by more than 1%.*")
    return "\n".join([note, ""] + lines)


def tiebreak_block(ggemm, configs):
    return offline_block(
        ggemm, configs, ("H100 grid (found on)", "H200 grid (held out)", "H200 sweep shapes (held out)"),
        [("margin", "---:")], "none (the least prediction)",
        [(f"{m:.0%}", lambda k, cal, m=m: tiebreak_pick(ggemm, k, cal, m)) for m in TIEBREAK_MARGINS],
        "The rule: where the model's pick is DRAM-bound (its t_dram at least its t_run), run the widest "
        "configuration (BLOCK_N, then cooperative, then BLOCK_M) predicted within the margin of the best.")


# The whole-tiles trial (TRIALS.md, "Whole column tiles"; offline, not kept): where the least
# prediction's BLOCK_N does not divide N, the least prediction among the configurations whose BLOCK_N
# does, within a margin; beside it a control that ignores N: the least prediction among the 256-wide
# configurations, within the same margin, wherever the least prediction is narrower.
WHOLE_TILES_MARGINS = (0.02, 0.05, 0.10)


def whole_tiles_pick(ggemm, k, calibration, margin, control=False):
    _, _, predicted, least = model_terms(ggemm, k, calibration)
    width = lambda c: int(re.search(r"_n(\d+)$", c).group(1))
    n = k[4]
    fits = (lambda c: width(c) == 256) if control else (lambda c: n % width(c) == 0)
    if fits(least) or (control and width(least) > 256):
        return least
    moved = [c for c in predicted if fits(c) and predicted[c] <= predicted[least] * (1 + margin)]
    return min(moved, key=predicted.get) if moved else least


def whole_tiles_block(ggemm, configs):
    return offline_block(
        ggemm, configs, ("H100 grid", "H200 grid (pattern seen here)", "H200 sweep shapes"),
        [("rule", "---"), ("margin", "---:")], "none (the least prediction) | –",
        [(f"{'256 wide (control)' if c else 'divides N'} | {m:.0%}",
          lambda k, cal, m=m, c=c: whole_tiles_pick(ggemm, k, cal, m, c))
         for c in (False, True) for m in WHOLE_TILES_MARGINS],
        "The rule (divides N): where the least prediction's BLOCK_N does not divide N, run the least prediction "
        "among the configurations whose BLOCK_N does, if within the margin. The control (256 wide): wherever the "
        "least prediction is narrower than 256, the least prediction among the 256-wide configurations, within "
        "the same margin, whatever N is.")


# The held-out shapes (harness/cases.csv, holdout_*; session 26): layers chosen after the rules above were set.
# Their picks come from the model alone, so the block lists them before any run (the trial's prediction); a run
# of every configuration, the entry point and torch on a GPU (results/<gpu>/evidence/holdout-*.csv) adds each
# pick's time over the fastest configuration's. Each offline rule at 5%, the margin the grids favoured.
HOLDOUT_RULES = (("tie-break, 5%", lambda g, k, cal: tiebreak_pick(g, k, cal, 0.05)),
                 ("whole column tiles, 5%", lambda g, k, cal: whole_tiles_pick(g, k, cal, 0.05)),
                 ("256 wide (control), 5%", lambda g, k, cal: whole_tiles_pick(g, k, cal, 0.05, True)))
HOLDOUT_GPUS = (("k3-holdout", "h200", True), ("k3-holdout-h100", "h100-80gb-hbm3", False))  # marker, folder, pre-run


def latest_holdout(folder):
    """(path, meta, rows) of the latest held-out run committed in results/<folder>/evidence (by its date), its
    rows those of the held-out sets; (None, {}, []) where there is none."""
    runs = {p: read_results(p) for p in glob.glob(os.path.join(ROOT, "results", folder, "evidence", "holdout-*.csv"))}
    if not runs:
        return None, {}, []
    latest = max(runs, key=lambda p: (runs[p][0].get("date", ""), p))
    meta, rows = runs[latest]
    return latest, meta, [r for r in rows if r["set"].startswith("holdout_")]


def holdout_block(ggemm, folder, pre_run):
    """The held-out shapes' picks with the calibration of results/<folder>, with the latest run's times there if
    one is committed; None where there is no run and pre_run is false."""
    latest, meta, rows = latest_holdout(folder)
    if not latest and not pre_run:
        return None
    cal = calibration(folder)
    with open(os.path.join(ROOT, "harness", "cases.csv")) as f:  # the set in its own order
        shapes = [(c[0], int(c[1]), int(c[2]), int(c[3]), int(c[4]), float(c[5]))
                  for c in (line.split(",") for line in f if line.startswith("holdout_"))]
    full = {k: v for k, v in configs_of(latest).items() if k in shapes} if latest else {}
    entry = {shape(r): (float(r["time_us_median"]), r["config"].split(":")[0][len(PREFIX):]) for r in rows
             if r["kernel"] == "k3_wgmma" and r["check"] == "pass"}
    torch = {shape(r): float(r["time_us_median"]) for r in rows
             if r["kernel"] == "torch_grouped_mm" and r["check"] == "pass"}
    ran_k3 = {shape(r) for r in rows if r["kernel"].startswith(PREFIX)}
    failed = sum(r["check"] not in ("pass", "skip") for r in rows)
    base = {k: least_pick(ggemm, k, cal) for k in shapes}
    picks = [(name, {k: rule(ggemm, k, cal) for k in shapes}) for name, rule in HOLDOUT_RULES]

    def cell(k, c, least=False):  # a pick; with a run, its time over the fastest (least: predicted and measured)
        t = full.get(k)
        if not t:
            return f"`{c}`" if least or c != base[k] else "–"
        text = f"`{c}` {t[c] / min(t.values()):.3f}"
        return text + (f" ({model_terms(ggemm, k, cal)[2][c]:.0f} / {t[c]:.0f} µs)" if least else "")

    table = ["| shape | rows | E | K | N | N mod 192 | skew | fastest choice | least prediction | " +
             " | ".join(n for n, _ in HOLDOUT_RULES) + " | entry point µs (ran) | torch µs | torch / entry point |",
             "|---|---:|---:|---:|---:|---:|---:|---|---|" + "---|" * len(HOLDOUT_RULES) + "---|---:|---:|"]
    vs_torch = []
    for k in shapes:
        t, (te, ran), tt = full.get(k), entry.get(k, (None, None)), torch.get(k)
        if te and tt:
            vs_torch.append(tt / te)
        table.append(f"| {k[0][len('holdout_'):]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {k[4] % 192} | {k[5]:g} | "
                     f"{f'`{min(t, key=t.get)}`' if t else '–'} | {cell(k, base[k], True)} | " +
                     " | ".join(cell(k, p[k]) for _, p in picks) +
                     f" | {f'{te:.1f} (`{ran}`)' if te else '–'} | {f'{tt:.1f}' if tt else '–'} | "
                     f"{f'{tt / te:.2f}' if te and tt else '–'} |")
    moved = "; ".join(f"{name}: {sum(p[k] != base[k] for k in shapes)}" for name, p in picks)
    picks_note = (f"Each pick is this build's `ggemm problem` with `{os.path.relpath(cal, ROOT)}` (shapes each rule "
                  f"moves from the least prediction: {moved}){'' if latest else '; a rule keeping it shows –'}.")
    if not latest:  # the picks alone: the shape's columns, the least prediction and the rules'
        note = (f"*Generated by `plots/k3_grid.py` from `harness/cases.csv` (the {len(shapes)} held-out shapes): no "
                f"run yet, so only the picks, the trial's prediction. {picks_note}*")
        keep = list(range(7)) + list(range(8, 9 + len(HOLDOUT_RULES)))
        cut = ["|" + "|".join(line.strip("|").split("|")[i] for i in keep) + "|" for line in table]
        return "\n".join([note, "", *cut])
    note = (f"*Generated by `plots/k3_grid.py` from `{os.path.relpath(latest, ROOT)}` ({meta.get('device', '?')}, "
            f"commit {meta.get('commit', '?')}, {meta.get('date', '?')}): every configuration the entry point chooses "
            "among, the entry point and torch._grouped_mm in one run (`ggemm sweep --set 'holdout*'`, then "
            f"`harness/peers/torch_grouped_mm.py`). {picks_note} With the run, each pick's time over the fastest "
            "configuration's, and for the least prediction its predicted / measured time; the entry point's column "
            f"is what it ran. {len(ran_k3)} of the {len(shapes)} shapes ran, {len(full)} with every configuration "
            f"passing its check ('–' where not); {failed} rows failed their check. A pick counts as changed faster "
            "or slower by more than 1%.*")
    lines = [note, ""]
    if full:
        lines += ["| rule | shapes | within 5% of the fastest | worst | geometric mean | picks changed: faster / "
                  "slower / same time |", "|---|---:|---:|---:|---:|---:|",
                  f"| least prediction (the entry point's) | {len(full)} | {rule_cells(full, base, base)} |"]
        lines += [f"| {name} | {len(full)} | {rule_cells(full, {k: p[k] for k in full}, base)} |"
                  for name, p in picks]
        lines.append("")
    if vs_torch:
        lines += [f"Against torch in the same run the entry point runs at {min(vs_torch):.2f}x to "
                  f"{max(vs_torch):.2f}x torch's speed (median {median(vs_torch):.2f}x; at least 1.0x on "
                  f"{sum(x >= 1.0 for x in vs_torch)} of {len(vs_torch)}).", ""]
    return "\n".join(lines + table)


# The model's error by configuration (session 27): on every committed run of all the configurations,
# measured over predicted time, divided by its geometric mean over the shape's configurations so that
# what the model gets wrong for the shape as a whole (skew it cannot see, the clocks) cancels; below 1,
# the configuration runs faster than predicted against the others. Split where the rows per expert
# fill at most two 128-row tiles: where B, not A, is most of each tile's bytes.
FEW_ROWS = 256


def residuals_block(ggemm, configs):
    sets = [("H200 grid", configs, calibration("h200")),
            ("H100 grid", configs_of(OWN_CALIBRATION[2]), calibration("h100-80gb-hbm3"))]
    sources = [os.path.relpath(OWN_CALIBRATION[2], ROOT)]
    for _, folder, _ in HOLDOUT_GPUS:
        latest, meta, _ = latest_holdout(folder)
        if latest:
            sources.append(os.path.relpath(latest, ROOT))
            sets.append((f"{meta.get('device', folder).replace('NVIDIA ', '')} held-out",
                         {k: v for k, v in configs_of(latest).items() if k[0].startswith("holdout_")},
                         calibration(folder)))
    lines = ["| shapes | rows per expert | n | " + " | ".join(f"`{c}`" for c in CHOICES) + " |",
             "|---|---|---:|" + "---:|" * len(CHOICES)]
    for label, times, cal in sets:
        norm = {}
        for k, t in times.items():
            if len(t) < len(CHOICES):
                continue
            predicted = model_terms(ggemm, k, cal)[2]
            r = {c: t[c] / predicted[c] for c in CHOICES}
            g = geo(list(r.values()))
            norm[k] = {c: r[c] / g for c in CHOICES}
        for few, what in ((True, f"<= {FEW_ROWS}"), (False, f"> {FEW_ROWS}")):
            ks = [k for k in norm if (k[1] / k[2] <= FEW_ROWS) == few]
            if ks:
                lines.append(f"| {label} | {what} | {len(ks)} | " +
                             " | ".join(f"{geo([norm[k][c] for k in ks]):.3f}" for c in CHOICES) + " |")
    note = ("*Generated by `plots/k3_grid.py` from the committed runs of every configuration (the H200's grid in the "
            f"`k3-grid` table; {', '.join(f'`{s}`' for s in sources)}), each with its GPU's committed calibration "
            "(`results/<gpu>/calibration.csv`) and this "
            "build's `ggemm problem`: no new run. Each cell: the geometric mean over the shapes of a configuration's "
            "measured / predicted time, over that ratio's geometric mean across the shape's configurations (below "
            "1: faster than the model predicts, against the others); rows per expert: the shape's rows over its "
            "experts (the even split the model assumes).*")
    return "\n".join([note, ""] + lines)


# The H100 probes of what the model lacks (k3_wgmma/TRIALS.md, "Two probes of what the model lacks" and after):
# configurations on even and skewed splits, every log named cold*-<commit>.log in a device-calls folder of
# results/h100-80gb-hbm3/evidence/, its runs in the order of the calls listed here.
COLD_PROBE_ORDER = ["f28399fa2ce3", "386a5505e75a", "011afa7c02da", "4a6fe5175741"]


def cold_probe_runs():
    """The cold-tile probe's logs in COLD_PROBE_ORDER: (the logs, the shape keys (commit, tokens, experts, K, N,
    skew) in order, {(key, configuration): median µs} of the runs that passed their check, the failed count)."""
    logs = []
    for path in glob.glob(os.path.join(OTHER_GPU, "device-calls-*", "cold*-*.log")):
        m = re.search(r"-([0-9a-f]{12})\.log$", path)
        if not m or m.group(1) not in COLD_PROBE_ORDER:
            print(f"k3_grid.py: {os.path.relpath(path, ROOT)} is not a call in COLD_PROBE_ORDER: left out")
            continue
        logs.append((COLD_PROBE_ORDER.index(m.group(1)), path, m.group(1)))
    rows, cells, failed = [], {}, 0
    for _, path, commit in sorted(logs):
        with open(path) as f:
            text = f.read()
        for sec in re.split(r"^== ", text, flags=re.M)[1:]:
            m = re.match(r"(\w+) tokens (\d+) experts (\d+) k (\d+)(?: n (\d+))?(?: skew ([0-9.]+))?", sec)
            key = (commit, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5) or 768),
                   float(m.group(6) or 0))
            if key not in rows:
                rows.append(key)
            t = re.search(r"^time: median ([0-9.]+)", sec, re.M)
            check = re.search(r"^check: (\w+)", sec, re.M)
            failed += bool(check) and check.group(1) != "pass"
            if t and check and check.group(1) == "pass":
                cells[key, m.group(1)] = float(t.group(1))
    return [p for _, p, _ in sorted(logs)], rows, cells, failed


def cold_probe_block(ggemm, probe):
    """probe: cold_probe_runs()."""
    logs, rows, cells, failed = probe
    if not logs:
        return None
    # the predictions of this build with the H100's calibration (a call's own `ggemm problem` line is the same
    # where it read that calibration; one call, 4a6fe51's, did not)
    predicted = {k: predictions_of(model_line(ggemm, ("",) + k[1:], calibration("h100-80gb-hbm3"))) for k in rows}
    lines = ["| main at | rows | E | rows per expert | K | N | skew | B per expert MB | " +
             " | ".join(f"`{c}`" for c in CHOICES) + " |", "|---|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(CHOICES)]
    for k in rows:
        lines.append(f"| {k[0][:7]} | {k[1]} | {k[2]} | {k[1] // k[2]} | {k[3]} | {k[4]} | {k[5]:g} | "
                     f"{2 * k[3] * k[4] / 1e6:.1f} | " + " | ".join(
            f"{cells[k, c]:.1f} ({cells[k, c] / predicted[k][c]:.2f})" if (k, c) in cells else "–"
            for c in CHOICES) + " |")
    note = ("*Generated by `plots/k3_grid.py` from " + ", ".join(f"`{os.path.relpath(p, ROOT)}`" for p in logs) +
            " (an H100 each, as each folder's README records): each configuration's median time in "
            "µs (`ggemm run`, checked against cuBLAS) and, in brackets, over this build's prediction for the shape "
            "(`ggemm problem` with the H100's committed calibration; the model reads no skew, so a skewed shape's "
            "prediction is its even split's); rows per expert: the mean, an even split where the skew is 0, whose last "
            f"row tile then has 64 rows. {failed} runs failed their check; – where not run or cut before its check.*")
    return "\n".join([note, ""] + lines)


def busiest_cta(ggemm, name, k):
    """`ggemm tiles` of configuration `name` on shape k (the exact split, no GPU): the tile count, the busiest CTA's
    tiles, its work in the model's units (a 64-row tile (64 + width) / (128 + width) of a full one), and the experts
    in each of the list's first four waves."""
    _, tokens, experts, kk, n, skew = k
    meta, rows = work_lists.tiles(ggemm, "--kernel", PREFIX + name, "--tokens", tokens, "--experts", experts, "--k", kk,
                               "--n", n, "--skew", skew)
    tiles, units, waves = {}, {}, {}
    for r in rows:
        tiles[r["cta"]] = tiles.get(r["cta"], 0) + 1
        units[r["cta"]] = units.get(r["cta"], 0) + ((64 + r["width"]) / (128 + r["width"]) if r["height"] == 64 else 1)
        waves.setdefault(r["tile"] // int(meta["grid"]), set()).add(r["expert"])  # a wave: one tile per CTA
    return len(rows), max(tiles.values()), max(units.values()), [len(waves[w]) for w in sorted(waves)][:4]


# The skew probe's pairs read against the exact tile lists: the shapes of session 28's first call (386a550) run at
# skew 0 and 1.
SKEW_PAIRS_COMMIT = "386a5505e75a"


def skew_deal_block(ggemm, probe):
    """probe: cold_probe_runs()."""
    logs, rows, cells, _ = probe
    pairs = [(k, k[:5] + (1.0,)) for k in rows if k[0] == SKEW_PAIRS_COMMIT and k[5] == 0 and k[:5] + (1.0,) in rows]
    if not pairs:
        return None
    lines = ["| rows | E | K | N | configuration | µs, skew 0 | µs, skew 1 | skew 1 / skew 0 | tiles, skew 0 → 1 | "
             "busiest CTA's tiles, skew 1 / skew 0 | its work in units, skew 1 / skew 0 | experts in the first four "
             "waves, skew 0 | the same, skew 1 |",
             "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for even, skewed in pairs:
        for c in CHOICES:
            if (even, c) not in cells or (skewed, c) not in cells:
                continue
            t0, most0, units0, w0 = busiest_cta(ggemm, c, even)
            t1, most1, units1, w1 = busiest_cta(ggemm, c, skewed)
            lines.append(f"| {even[1]} | {even[2]} | {even[3]} | {even[4]} | `{c}` | {cells[even, c]:.1f} | "
                         f"{cells[skewed, c]:.1f} | {cells[skewed, c] / cells[even, c]:.3f} | {t0} → {t1} | "
                         f"{most1 / most0:.3f} | {units1 / units0:.3f} | {', '.join(map(str, w0))} | "
                         f"{', '.join(map(str, w1))} |")
    sources = "`, `".join(os.path.relpath(p, ROOT) for p in logs if p.endswith(f"-{SKEW_PAIRS_COMMIT}.log"))
    note = (f"*Generated by `plots/k3_grid.py` from the `k3-cold-probe` table's runs at {SKEW_PAIRS_COMMIT[:7]} "
            f"(`{sources}`, an H100) and `ggemm tiles` of this build on the same shapes (the exact split; 132 SMs): "
            "each configuration's time at skew 1 over skew 0, beside the tile list's total and its busiest CTA (the "
            "static stride's most tiles, and its work with a 64-row tile counted as the model counts it, (64 + width) "
            "/ (128 + width) of a full one), and how many experts the list's first four waves (a tile per CTA each) "
            "touch.*")
    return "\n".join([note, ""] + lines)


# Session 28's traces of the ping-pong twins on two of the probe's shapes (`device-calls-386a5505e75a/e69.sh`).
TWIN_TRACES = os.path.join(OTHER_GPU, "device-calls-386a5505e75a", "trace-pp-b2d65e135cfb")


def twin_trace_block():
    if not os.path.isdir(TWIN_TRACES):
        return None

    def cell(xs, digits):
        return f"{median(xs):.{digits}f}" if xs else "–"

    lines = ["| K | N | configuration | untraced µs | traced µs | traced launch µs | first SM idle µs | tail µs | busy | "
             "imbalance | tile span µs, 128 rows | tile span µs, 64 rows or fewer | turn µs, 128 rows | turn µs, 64 "
             "rows or fewer | turn µs, 128 rows, first half | turn µs, 128 rows, second half |",
             "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k in (1024, 2048):
        for c in ("pingpong_m128_n192", "pingpong_m64_n192"):
            folder = os.path.join(TWIN_TRACES, f"{c}-k{k}")
            with open(os.path.join(folder, "summary.csv")) as f:
                r = next(csv.DictReader(line for line in f if not line.startswith("#")))
            spans, turns, halves, by_cta = {True: [], False: []}, {True: [], False: []}, ([], []), {}
            with gzip.open(os.path.join(folder, "trace.csv.gz"), "rt") as f:
                for e in csv.DictReader(f):
                    if e["role"].startswith("consumer"):
                        spans[int(e["rows"]) > 64].append((int(e["end_ns"]) - int(e["start_ns"])) / 1000)
                        by_cta.setdefault(e["cta"], []).append((int(e["start_ns"]), int(e["rows"]) > 64))
            middle = float(r["kernel_us"]) * 500  # ns: the recorded launch's midpoint (events start near 0)
            for tiles in by_cta.values():  # a tile's turn: its K loop, until the CTA's next tile starts
                tiles.sort()
                for (start, full), (after, _) in zip(tiles, tiles[1:]):
                    turns[full].append((after - start) / 1000)
                    if full:
                        halves[start >= middle].append((after - start) / 1000)
            lines.append(f"| {k} | {r['n']} | `{c}` | {float(r['untraced_us']):.1f} | {float(r['traced_us']):.1f} | "
                         f"{float(r['kernel_us']):.1f} | {float(r['first_idle_us']):.1f} | {float(r['tail_us']):.1f} | "
                         f"{100 * float(r['busy_fraction']):.1f}% | {float(r['imbalance']):.3f} | {cell(spans[True], 1)} | "
                         f"{cell(spans[False], 1)} | {cell(turns[True], 2)} | {cell(turns[False], 2)} | "
                         f"{cell(halves[0], 2)} | {cell(halves[1], 2)} |")
    note = (f"*Generated by `plots/k3_grid.py` from `{os.path.relpath(TWIN_TRACES, ROOT)}/*/` (`ggemm trace --reps 20`, "
            "20 timed runs untraced and 20 traced, then the traced run recorded; 8 experts of 3136 rows; an H100, main at "
            "b2d65e1): the summary's untraced and traced medians, the recorded launch (first CTA entry to last event), "
            "first idle SM, tail, busy share and imbalance; a tile span is a consumer's, from its turn "
            "to the end of its stores, and a turn from its start to the start of the CTA's next tile (the other "
            "consumer's, which waits for this K loop): medians over the launch's tiles of that height, a CTA's last "
            "tile having no turn, and the 128-row turns split by whether they start in the recorded launch's first "
            "or second half; in the fixed twin a tile of 64 rows or fewer is still computed 128 high.*")
    return "\n".join([note, ""] + lines)


def capped_pct(r):
    return f"{min(float(r['power_capped_pct']), 100.0):.0f}" if r.get("power_capped_pct") else "–"


def median(xs):
    xs = sorted(xs)
    return (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2


def geo(xs):
    return math.exp(math.fsum(math.log(x) for x in xs) / len(xs))


def main():
    a = readme_block.ggemm_args(__doc__.splitlines()[0], "the k3-grid blocks are")
    if a is None:
        return 0
    configs, old_pick, torch, first, ablations, entry, sources, default, run_meta = load()
    table = ["| shape | rows | E | K | N | skew | model's pick (predicted µs) | its time µs | fastest choice | "
             "pick / fastest | old rule's pick / fastest | entry point µs (ran) | torch µs | torch / entry point | "
             "pick's B share |",
             "|---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---|---:|---:|---:|"]
    ratio, old_ratio, vs_torch, first_ratio, same, within, same_pick = [], [], [], [], [], 0, 0
    pairs = ["| shape | ablation | its time µs (SM clock MHz) | fastest choice µs (SM clock MHz) | ablation / choice |",
             "|---|---|---:|---:|---:|"]
    with open(os.path.join(ROOT, "harness", "cases.csv")) as f:  # the grid's own order
        order = [line.split(",")[0] for line in f if line.startswith("grid_")]
    for k in sorted(configs, key=lambda k: (order.index(k[0]) if k[0] in order else len(order), k[1])):
        times = configs[k]
        if len(times) < len(CHOICES):
            continue
        pick, predicted, share = model_pick(a.ggemm, k)
        best = min(times, key=times.get)
        r = times[pick] / times[best]
        ratio.append(r)
        within += r <= 1.05
        old = f"{times[old_pick[k]] / times[best]:.3f}" if k in old_pick else "–"
        if k in old_pick:
            old_ratio.append(times[old_pick[k]] / times[best])
            same.append(r)
        t, (te, ran) = torch.get(k), entry.get(k, (None, None))
        if t and te:
            vs_torch.append(t / te)
        if k in first:
            first_ratio.append(first[k] / times[best])
        for abl, (ta, clock, path) in sorted(ablations.get(k, {}).items()):
            own = file_rows.get(path, {}).get(k, {})  # the choices as the same run measured them
            if len(own) < len(CHOICES):
                continue
            fast = min(own, key=lambda c: float(own[c]["time_us_median"]))
            tf = float(own[fast]["time_us_median"])
            if ta < tf:
                pairs.append(f"| {k[0][len('grid_'):]} | `{abl}` | {ta:.1f} ({clock}) | {tf:.1f} "
                             f"({own[fast]['sm_clock_mhz']}) | {ta / tf:.3f} |")
        ent = f"{te:.1f} (`{ran}`)" if te else "–"
        same_pick += ran == pick
        table.append(f"| {k[0][len('grid_'):]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {k[5]:g} | `{pick}` ({predicted:.0f}) "
                     f"| {times[pick]:.1f} | `{best}` | {r:.3f} | {old} | {ent} | {f'{t:.1f}' if t else '–'} | "
                     f"{f'{t / te:.2f}' if t and te else '–'} | {share:.3f} |")
    srcs = ", ".join(f"`{os.path.relpath(p, ROOT)}` (commit {read_results(p)[0].get('commit', '?')})" for p in sources)
    note = (f"*Generated by `plots/k3_grid.py` from {srcs}, and this build's `ggemm problem` with the committed "
            "calibration (`results/h200/calibration.csv`); the pick's B share is the model's, for its even "
            "split. Times: the median of the configuration sweeps; the entry point (the configuration it ran in "
            f"brackets) and torch: `{os.path.relpath(default, ROOT)}`, both in that run (commit "
            f"{run_meta.get('commit', '?')}).*")
    n = len(ratio)
    vt = sorted(vs_torch) or [float("nan")]
    run_commit = run_meta.get("commit", "?")
    # whether that run chose as this build's model does (an older run ran an older model)
    ran_as = (f"as it ran at commit {run_commit}, choosing as this build's model does on {same_pick} of "
              f"{len(ratio)} shapes")
    # every configuration alone, on the same shapes: what the model has to beat
    alone = {c: [configs[k][c] / min(configs[k].values()) for k in configs if len(configs[k]) == len(CHOICES)]
             for c in CHOICES}
    fixed = min(CHOICES, key=lambda c: (-sum(x <= 1.05 for x in alone[c]), geo(alone[c])))
    pair_best = [min(configs[k][c] for c in PAIR) / min(configs[k].values()) for k in configs
                 if len(configs[k]) == len(CHOICES)]
    sweep = sweep_shapes()
    sweep_ratio = [t[model_pick(a.ggemm, k)[0]] / min(t.values()) for k, t in sweep.items()]
    sweep_fixed = [t[fixed] / min(t.values()) for t in sweep.values()]
    summary = [
        f"*Generated by `plots/k3_grid.py` (sources in TRIALS.md's `k3-grid` table).*",
        "",
        f"On the {n} shapes of the validation grid the model's pick is within 5% of the fastest configuration it "
        f"chooses among on {within} (worst {max(ratio):.3f}x its time, geometric mean {geo(ratio):.3f}x); "
        f"the rule it replaced, on the {len(old_ratio)} shapes where it was measured: worst {max(old_ratio):.3f}x, "
        f"geometric mean {geo(old_ratio):.3f}x, within 5% on {sum(x <= 1.05 for x in old_ratio)}; the model on those "
        f"same shapes: worst {max(same):.3f}x, geometric mean {geo(same):.3f}x, within 5% on "
        f"{sum(x <= 1.05 for x in same)}. "
        f"Against torch._grouped_mm in the same run (`{os.path.basename(default)}`: the entry point {ran_as}) "
        f"the entry point runs at {vt[0]:.2f}x to {vt[-1]:.2f}x torch's speed (median {median(vt):.2f}x; at "
        f"least 1.0x on {sum(x >= 1.0 for x in vt)} of {len(vs_torch)}). "
        f"The first model (an even split, no B re-reads), as it ran in call B: worst {max(first_ratio):.3f}x the "
        f"fastest configuration's time, geometric mean {geo(first_ratio):.3f}x, within 5% on "
        f"{sum(x <= 1.05 for x in first_ratio)} of {len(first_ratio)}.",
        "",
        f"What the model has to beat: the best single configuration on this grid, `{fixed}` for every shape, is "
        f"within 5% on {sum(x <= 1.05 for x in alone[fixed])} of {len(alone[fixed])} (worst {max(alone[fixed]):.3f}x, "
        f"geometric mean {geo(alone[fixed]):.3f}x); it was picked with the grid's times in hand, which the model "
        f"never had. The faster of `{PAIR[0]}` and `{PAIR[1]}` on each shape is within 5% on "
        f"{sum(x <= 1.05 for x in pair_best)} (worst {max(pair_best):.3f}x): most of the choice is between "
        f"those two. On the {len(sweep)} shapes of the committed sweep that ran all nine configurations "
        f"(`results/h200/sweep.csv`: the worklog's cases and the model shapes, none in the grid) the model's pick "
        f"is within 5% on {sum(x <= 1.05 for x in sweep_ratio)} (worst {max(sweep_ratio):.3f}x, geometric mean "
        f"{geo(sweep_ratio):.3f}x), `{fixed}` on {sum(x <= 1.05 for x in sweep_fixed)} (worst "
        f"{max(sweep_fixed):.3f}x, geometric mean {geo(sweep_fixed):.3f}x).",
    ]
    alone_fixed = alone[fixed]
    brief = [
        f"*Generated by `plots/k3_grid.py`; the whole comparison is TRIALS.md's `k3-grid-summary`.*",
        "",
        f"On the {n} shapes of the validation grid the model's pick is within 5% of the fastest configuration on "
        f"{within} (worst {max(ratio):.3f}x); the best single configuration, `{fixed}` everywhere, on "
        f"{sum(x <= 1.05 for x in alone_fixed)} (worst {max(alone_fixed):.3f}x), chosen with the grid's times in "
        f"hand. Against torch._grouped_mm in the same run (the entry point {ran_as}) it runs at {vt[0]:.2f}x to "
        f"{vt[-1]:.2f}x torch's speed (median {median(vt):.2f}x; at least 1.0x on "
        f"{sum(x >= 1.0 for x in vt)} of {len(vs_torch)}). On the {len(sweep)} shapes of the committed sweep that "
        f"ran every configuration (the worklog's cases and the model shapes, none in the grid) the pick is within 5% "
        f"on {sum(x <= 1.05 for x in sweep_ratio)} (worst {max(sweep_ratio):.3f}x), `{fixed}` on "
        f"{sum(x <= 1.05 for x in sweep_fixed)} (worst {max(sweep_fixed):.3f}x).",
    ]
    rc = 0
    probe = cold_probe_runs()  # the H100 probes' runs, read once for the two blocks that show them
    pairs_note = ("*Generated by `plots/k3_grid.py` from `results/h200/evidence/grid-configs-dc5168c.csv` (call A, "
                  "built with the ablations): the grid shapes where an ablation beat every configuration the entry "
                  "point chooses among, in the same run.*")
    for name, text, paths in (("k3-grid", "\n".join([note, ""] + table), readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-ablations", "\n".join([pairs_note, ""] + pairs),
                               readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-summary", "\n".join(summary), readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-brief", "\n".join(brief), readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-widths", widths_table(a.ggemm, configs), readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-twins", twins_block(a.ggemm), readme_block.stage_files("k3_wgmma")),
                              *((tag, other_gpu_block(run, before), readme_block.stage_files("k3_wgmma"))
                                for tag, run, before in OTHER_GPU_RUNS),
                              (OWN_CALIBRATION[0], own_calibration_block(a.ggemm, *OWN_CALIBRATION[1:]),
                               readme_block.stage_files("k3_wgmma")),
                              (DRAM_TRIAL[0], dram_block(a.ggemm, *DRAM_TRIAL),
                               readme_block.stage_files("k3_wgmma")),
                              (DRAM_TRIAL_H200[0], dram_block_h200(a.ggemm, *DRAM_TRIAL_H200, configs),
                               readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-tiebreak", tiebreak_block(a.ggemm, configs),
                               readme_block.stage_files("k3_wgmma")),
                              ("k3-grid-whole-tiles", whole_tiles_block(a.ggemm, configs),
                               readme_block.stage_files("k3_wgmma")),
                              ("k3-cold-probe", cold_probe_block(a.ggemm, probe), readme_block.stage_files("k3_wgmma")),
                              ("k3-skew-deal", skew_deal_block(a.ggemm, probe), readme_block.stage_files("k3_wgmma")),
                              ("k3-twin-traces", twin_trace_block(), readme_block.stage_files("k3_wgmma")),
                              ("k3-residuals", residuals_block(a.ggemm, configs),
                               readme_block.stage_files("k3_wgmma")),
                              *((tag, holdout_block(a.ggemm, folder, pre_run), readme_block.stage_files("k3_wgmma"))
                                for tag, folder, pre_run in HOLDOUT_GPUS)):
        if text is None:
            continue
        rc |= readme_block.write_block(paths, name, text, a.check)
    return rc


if __name__ == "__main__":
    sys.exit(main())
