#!/usr/bin/env python3
"""Data and captions of the gnuplot figures (1, 3, 7, 8, 11, 14), from committed results only.

usage: figdata.py data OUT_DIR   [--sweep CSV] [--ncu DIR] [--kernels CSV] [--ggemm BIN]
       figdata.py captions       [same options] [--check]
`data` writes the tables the plots/figNN-*.gp scripts read (OUT_DIR/figNN*.dat) and
OUT_DIR/params.gp (ceilings, device, tick labels). `captions` rewrites the generated blocks, each in
whichever file holds it (plots/readme_block.py: a stage's README.md or TRIALS.md, the top README.md
or a page of docs/); with --check it writes nothing and exits 1 if one would change. The blocks:
`<!-- caption-figNN[-where]:begin/end -->` (each figure's caption, with the numbers it quotes),
k0_fma's `<!-- ncu-k0:begin/end -->` table, the profile tables `<!-- ncu-k1 -->` (k1_mmasync) and
`<!-- ncu-k2 -->` (k2_tma_ws), and k2's speed-ups over k1 BM 128, `<!-- k2-over-k1 -->`; k3_wgmma's
profile `<!-- ncu-k3 -->`, the ablation ladder `<!-- k3-steps -->`, the numbers of `<!-- k3-64row -->`
and `<!-- k3-pairs -->`, the row rule's DRAM evidence `<!-- k3-rows-dram -->`, the experiments
`<!-- k3-tried -->` with the trials' ncu, trace and phase tables (`k3-m256-*`, `k3-fold-*`,
`k3-pairs-ncu`, `k3-streamk-*`), the ping-pong profile `<!-- k3-pingpong-ncu -->`, its stalls
`<!-- k3-stalls -->`, its runs on fewer SMs `<!-- k3-sms -->` and the L2 units' load on all and half
of them `<!-- k3-l2-breakdown -->`. A block whose data fail to read is named on stderr (exit 2) and
the others are still written.
Every number comes from results/<gpu>/sweep.csv, results/<gpu>/ncu/*.csv, results/<gpu>/kernels.csv,
results/h200/evidence/ (ncu_k3_*.txt and *.csv, k3_ab_*.csv, trace folders, logs) or from
`ggemm problem` (the one implementation of the split, the tile rules and η). Standard library only.
"""
import argparse
import csv
import glob
import io
import math
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tables  # noqa: E402  (load)
import work_lists  # noqa: E402  (ggemm cases)
from names import new_name  # noqa: E402  (old configuration names in the evidence -> today's)
from readme_block import front_files, missing, replace_block, stage_files  # noqa: E402

ROOT = tables.ROOT
case_label = tables.case_label
SKEW_KERNELS = ["k1_mmasync_bm128", "k1_mmasync_bm64", "k1_mmasync_bm32", "k2_tma_ws_s3", "k2_tma_ws_bm64",
                "k3_wgmma_coop_m128_n192", "k3_wgmma_coop_m64_n192"]
STALL_VARIANTS = ["k0_fma", "k1_mmasync_bm128", "k1_mmasync_bm64", "k1_mmasync_bm32", "k1_mmasync_bm64_fragdb",
                  "k2_tma_ws_s2", "k2_tma_ws_s3", "k3_wgmma"]
WORKLOG_K2_TARGET = 1.4  # cited: the worklog's stage-2 target over its stage 1 at 16k rows (B300)
K1_PROFILE = ["k1_mmasync_bm128", "k1_mmasync_bm64", "k1_mmasync_bm32", "k1_mmasync_bm64_fragdb"]
K2_PROFILE = ["k1_mmasync_bm128", "k2_tma_ws_s2", "k2_tma_ws_s3"]
BM_VARIANTS = ["k1_mmasync_bm128", "k1_mmasync_bm64", "k1_mmasync_bm32"]
# Figure 3: each stage's configuration per tile height (adaptive: k3's 128-row tiles plus one of 64 rows).
BM_FAMILIES = {"k1": {32: "k1_mmasync_bm32", 64: "k1_mmasync_bm64", 128: "k1_mmasync_bm128"},
               "k2": {64: "k2_tma_ws_bm64", 128: "k2_tma_ws_s3"},
               "k3": {128: "k3_wgmma_coop_m128_n192", "adaptive": "k3_wgmma_coop_m64_n192"}}
STAGES = ["k0_fma", "k1_mmasync", "k2_tma_ws", "k3_wgmma"]
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


def num(v):
    return float(str(v).replace(",", ""))


def ncu_csv(path):
    """{metric: value as ncu wrote it} of one launch in an ncu raw CSV (results/<gpu>/ncu/<kernel>.csv:
    the header row starts with "ID", then a row of units, then the launch's values)."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    head, _units, values = list(csv.reader(lines[start:]))[:3]
    return dict(zip(head, values))


def fmt(x, nd=1):
    return f"{x:.{nd}f}"


class Data:
    def __init__(self, args):
        self.sweep = os.path.abspath(args.sweep)
        self.meta, self.rows = tables.load(self.sweep)
        self.ggemm = args.ggemm
        self.ncu_dir = args.ncu or os.path.join(os.path.dirname(self.sweep), "ncu")
        kpath = args.kernels or os.path.join(os.path.dirname(self.sweep), "kernels.csv")
        with open(kpath) as f:
            self.kernels = {r["kernel"]: r for r in csv.DictReader(f)}
        self.stage_of = {k: r["stage"] for k, r in self.kernels.items()}
        self.ok = [r for r in self.rows if r["check"] == "pass"]
        self._problem = {}
        self._ncu = {}

    def rel(self, path):
        return os.path.relpath(path, ROOT)

    # -- the problem model, from ggemm --------------------------------------------------------
    def problem(self, tokens, skew, k=1024, block_m=None):
        key = (str(tokens), str(skew), str(k), block_m)
        if key not in self._problem:
            cmd = [self.ggemm, "problem", "--tokens", str(tokens), "--skew", str(skew), "--k", str(k),
                   "--format", "csv"]
            if block_m:
                cmd += ["--block-m", str(block_m)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            self._problem[key] = next(csv.DictReader(io.StringIO(out)))
        return self._problem[key]

    def eta(self, tokens, skew, bm):
        """η for a BLOCK_M (32, 64, 128) or 'adaptive' (k3's 128/64 policy)."""
        if bm == "adaptive":
            return float(self.problem(tokens, skew)["eta_adaptive"])
        return float(self.problem(tokens, skew, block_m=bm)["eta"])

    def intensity(self, tokens, skew, k):
        p = self.problem(tokens, skew, k)
        return float(p["useful_gflop"]) * 1e9 / float(p["min_bytes"])

    # -- the sweep ----------------------------------------------------------------------------
    def stage_cases(self):
        cases = []
        for r in self.rows:
            if r["set"] == "stages" and (r["tokens"], r["skew"], r["k"]) not in cases:
                cases.append((r["tokens"], r["skew"], r["k"]))
        return cases

    def cell(self, kernel, tokens, skew, k="1024"):
        for r in self.ok:
            if r["kernel"] == kernel and r["tokens"] == tokens and float(r["skew"]) == float(skew) and r["k"] == k:
                return r
        return None

    def tf(self, kernel, tokens, skew, k="1024"):
        r = self.cell(kernel, tokens, skew, k)
        return float(r["useful_tflops"]) if r else None

    def best(self, stage, tokens, skew, k):
        mine = [r for r in self.ok if self.stage_of.get(r["kernel"]) == stage and r["tokens"] == tokens
                and r["skew"] == skew and r["k"] == k and r["set"] == "stages"]
        return max(mine, key=lambda r: float(r["useful_tflops"]), default=None)

    def skews(self, tokens):
        return sorted({float(r["skew"]) for r in self.ok if r["tokens"] == tokens and r["k"] == "1024"
                       and r["kernel"] in SKEW_KERNELS})

    def roofline(self, intensity):
        return min(float(self.meta["ceiling_gemm_tflops"]), intensity * float(self.meta["ceiling_copy_gbps"]) / 1e3)

    # -- ncu ----------------------------------------------------------------------------------
    def ncu(self, kernel):
        if kernel not in self._ncu:
            self._ncu[kernel] = ncu_csv(os.path.join(self.ncu_dir, kernel + ".csv"))
        return self._ncu[kernel]

    def stalls(self, kernel):
        d = self.ncu(kernel)
        pre, post = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
        return {k[len(pre):-len(post)]: num(v) for k, v in d.items() if k.startswith(pre) and k.endswith(post)}


def short(kernel):
    for p in ("k1_mmasync_", "k2_tma_ws_", "k3_wgmma_"):
        if kernel.startswith(p):
            return kernel[len(p):]
    return kernel


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def gp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def data(d, out):
    os.makedirs(out, exist_ok=True)
    m = d.meta
    params = [f"device = {gp_str(m.get('device', '?'))}",
              f"copy_gbps = {m['ceiling_copy_gbps']}", f"gemm_tflops = {m['ceiling_gemm_tflops']}",
              f"ffma_tflops = {m['ceiling_ffma_tflops']}", f"mma_sync_tflops = {m['ceiling_mma_sync_tflops']}",
              f"source = {gp_str(d.rel(d.sweep) + ', commit ' + m.get('commit', '?') + ', ' + m.get('date', '?'))}"]

    # Figure 1: best configuration of each stage per case, torch, the roofline.
    rows = ["# idx case " + " ".join(f"{s} {s}_config" for s in STAGES) + " torch roofline"]
    for i, (t, s, k) in enumerate(d.stage_cases()):
        cells = []
        for stage in STAGES:
            b = d.best(stage, t, s, k)
            cells += [b["useful_tflops"], gp_str(short(b["kernel"]))] if b else ["-", '""']
        torch = d.tf("torch_grouped_mm", t, s, k)
        rows.append(f"{i} {gp_str(case_label(t, s, k))} " + " ".join(cells) +
                    f" {torch if torch else '-'} {d.roofline(d.intensity(t, s, k)):.2f}")
    write(os.path.join(out, "fig01.dat"), rows)

    # Figure 3: useful TFLOP/s against BM at s = 0 and 1.2; η in the tick labels.
    bms = [("32", 32), ("64", 64), ("128", 128), ("adaptive 128/64", "adaptive")]
    fams = BM_FAMILIES
    for t in ("16384", "2048"):
        rows = ["# idx eta_s0 eta_s1.2 k1_s0 k1_s1.2 k2_s0 k2_s1.2 k3_s0 k3_s1.2"]
        ticks = []
        for i, (name, bm) in enumerate(bms):
            e0, e1 = d.eta(t, 0, bm), d.eta(t, 1.2, bm)
            cells = []
            for fam in ("k1", "k2", "k3"):
                kern = fams[fam].get(bm)
                for s in ("0", "1.2"):
                    v = d.tf(kern, t, s) if kern else None
                    cells.append(f"{v}" if v else "-")
            rows.append(f"{i} {e0:.4f} {e1:.4f} " + " ".join(cells))
            ticks.append(f'"{name}\\nη {e0:.3f} (s=0)\\nη {e1:.3f} (s=1.2)" {i}')
        write(os.path.join(out, f"fig03_{t}.dat"), rows)
        params.append(f"xt03_{t} = {gp_str('(' + ', '.join(ticks) + ')')}")

    # Figure 7: what changes as BM shrinks (k1, ncu at 16k s=0, kernels.csv).
    rows = ["# idx label registers blocks_per_sm warps_active inst_executed_M issue_active_pct tensor_pipe_pct"]
    for i, k in enumerate(BM_VARIANTS):
        n = d.ncu(k)
        rows.append(f"{i} {gp_str('BM ' + k.rsplit('bm', 1)[1])} {num(n['launch__registers_per_thread']):.0f} "
                    f"{d.kernels[k]['blocks_per_sm']} {num(n['sm__warps_active.avg.per_cycle_active'])} "
                    f"{num(n['smsp__inst_executed.sum']) / 1e6:.1f} "
                    f"{num(n['smsp__issue_active.avg.pct_of_peak_sustained_active'])} "
                    f"{num(n['sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active'])}")
    write(os.path.join(out, "fig07.dat"), rows)

    # Figure 8: warp stall breakdown (cycles per issued instruction), stacked.
    reasons, other = fig08_reasons(d)
    rows = ["variant " + " ".join(reasons) + " other"]
    for k in STALL_VARIANTS:
        st = d.stalls(k)
        rows.append(gp_str(k) + " " + " ".join(f"{st.get(r, 0):.2f}" for r in reasons) +
                    f" {math.fsum(v for r, v in st.items() if r in other):.2f}")
    write(os.path.join(out, "fig08.dat"), rows)
    params.append(f"n08 = {len(reasons) + 1}")

    # Figure 11: measured skew loss against the η model.
    same = True
    for t in ("16384", "2048"):
        rows = ["# skew model_bm32 model_bm64 model_bm128 model_adaptive " + " ".join(SKEW_KERNELS)]
        base = {k: d.tf(k, t, 0) for k in SKEW_KERNELS}
        e0 = {bm: d.eta(t, 0, bm) for bm in (32, 64, 128, "adaptive")}
        for s in d.skews(t):
            model = {bm: 1 - d.eta(t, s, bm) / e0[bm] for bm in e0}
            same &= abs(model[64] - model["adaptive"]) < 1e-9
            cells = []
            for k in SKEW_KERNELS:
                v = d.tf(k, t, s)
                cells.append(f"{1 - v / base[k]:.4f}" if v and base[k] else "-")
            rows.append(f"{s:g} " + " ".join(f"{model[bm]:.4f}" for bm in (32, 64, 128, "adaptive")) + " " +
                        " ".join(cells))
        write(os.path.join(out, f"fig11_{t}.dat"), rows)
    params.append(f"adaptive_is_bm64 = {1 if same else 0}")

    # Figure 14: every configuration x case of the stages set, by stage.
    groups = STAGES + ["peer"]
    rows = []
    for g in groups:
        rows.append(f"# {g}: intensity_flop_per_byte useful_tflops skew_is_0 kernel case")
        for r in d.ok:
            if r["set"] != "stages" or d.stage_of.get(r["kernel"], "peer") != g:
                continue
            x = d.intensity(r["tokens"], r["skew"], r["k"])
            rows.append(f"{x:.3f} {r['useful_tflops']} {1 if float(r['skew']) == 0 else 0} "
                        f"{r['kernel']} {gp_str(case_label(r['tokens'], r['skew'], r['k']))}")
        rows += ["", ""]
    write(os.path.join(out, "fig14.dat"), rows)
    labels = {}
    for t, s, k in d.stage_cases():
        x = d.intensity(t, s, k)
        labels.setdefault(f"{x:.3f}", []).append(case_label(t, s, k).replace(f" s={s}", ""))
    rows = [f"{x} {gp_str(' / '.join(dict.fromkeys(v)) + ' rows' if 'K=' not in v[0] else v[0])}"
            for x, v in labels.items()]
    write(os.path.join(out, "fig14_cases.dat"), rows)

    # Figure 22: the two walks of one configuration over time, slices of about 5 µs.
    for label, folder in K3_FOLD_TRACES:
        kernel_us, commit, rates = trace_rates(folder, slice_us=5.0)
        step = kernel_us / len(rates)
        write(os.path.join(out, f"fig22_{label}.dat"), [f"# t_us useful_tflops b_first_tbps ({commit})"]
              + [f"{(i + 0.5) * step:.2f} {f:.1f} {b:.3f}" for i, (f, b) in enumerate(rates)])
    write(os.path.join(out, "params.gp"), params)


def fig08_reasons(d):
    """Reasons shown on their own: any that reaches 0.3 cycles per instruction in some variant."""
    totals = {}
    for k in STALL_VARIANTS:
        for r, v in d.stalls(k).items():
            totals.setdefault(r, []).append(v)
    shown = [r for r, v in totals.items() if max(v) >= 0.3]
    shown.sort(key=lambda r: -math.fsum(totals[r]))
    return shown, [r for r in totals if r not in shown]


# ---------------------------------------------------------------------------------------------
# captions
# ---------------------------------------------------------------------------------------------
def caption(n, script, text, sources):
    return f"*Figure {n} (`plots/{script}` from {sources}): {text}*"


# The figure captions (captions()): (the stage's README, or README.md for the top-level files; caption name).
CAPTIONS = [("README.md", "fig01"), ("k1_mmasync/README.md", "fig03"), ("k1_mmasync/README.md", "fig07"),
            ("k1_mmasync/README.md", "fig08"), ("k2_tma_ws/README.md", "fig08-k2"), ("README.md", "fig11"),
            ("README.md", "fig14")]


def captions(d):
    src = f"`{d.rel(d.sweep)}`"
    ncu_src = f"`{d.rel(d.ncu_dir)}/`"
    t0 = lambda k, t, s: d.tf(k, t, s)  # noqa: E731
    blocks = {}

    # Figure 1
    parts = []
    for stage in STAGES:
        b = d.best(stage, "16384", "0", "1024")
        parts.append(f"{stage} {fmt(float(b['useful_tflops']))} (`{b['kernel']}`)")
    x = d.intensity("16384", "0", "1024")
    blocks[("README.md", "fig01")] = caption(
        1, "fig01-stage-progression.gp", "the best configuration of each stage in every case of the "
        "\"stages\" set, with `torch_grouped_mm` and the roofline as the case's reference lines. At 16k rows, "
        "s = 0, useful TFLOP/s: " + ", ".join(parts) + f"; torch {fmt(t0('torch_grouped_mm', '16384', '0'))}, "
        f"roofline {fmt(d.roofline(x))}. At 2k rows, s = 0, the best is "
        f"{fmt(float(d.best('k3_wgmma', '2048', '0', '1024')['useful_tflops']))} "
        f"(`{d.best('k3_wgmma', '2048', '0', '1024')['kernel']}`) against a roofline of "
        f"{fmt(d.roofline(d.intensity('2048', '0', '1024')))} (the bandwidth floor).", src)

    # Figure 3
    e = lambda t, s, bm: f"{d.eta(t, s, bm):.3f}"  # noqa: E731
    k3_128, k3_ad = BM_FAMILIES["k3"][128], BM_FAMILIES["k3"]["adaptive"]
    blocks[("k1_mmasync/README.md", "fig03")] = caption(
        3, "fig03-tile-quantization.gp", "useful TFLOP/s against the tile height at s = 0 and 1.2 (k1: bm32, bm64, "
        f"bm128; k2: bm64, s3; k3: `{short(k3_128)}` and, adaptive, `{short(k3_ad)}`); the tick labels give η "
        "(s = 0 | s = 1.2) from `ggemm problem`. At 2048 uniform rows "
        f"(32 per expert) k1 BM 32 pads nothing (η = {e('2048', 0, 32)}) and reaches "
        f"{fmt(t0('k1_mmasync_bm32', '2048', '0'))} TFLOP/s, against {fmt(t0('k1_mmasync_bm64', '2048', '0'))} "
        f"for BM 64 (η = {e('2048', 0, 64)}) and {fmt(t0('k1_mmasync_bm128', '2048', '0'))} for BM 128 "
        f"(η = {e('2048', 0, 128)}); at 16384 uniform rows, η = {e('16384', 0, 32)} for every BM and the order "
        f"reverses: BM 128 {fmt(t0('k1_mmasync_bm128', '16384', '0'))}, BM 64 "
        f"{fmt(t0('k1_mmasync_bm64', '16384', '0'))}, BM 32 {fmt(t0('k1_mmasync_bm32', '16384', '0'))}. "
        f"k3's adaptive tiles take BM 64's η ({e('2048', 1.2, 'adaptive')} at 2k, s = 1.2) and run "
        f"{fmt(t0(k3_ad, '2048', '1.2'))} TFLOP/s there, against {fmt(t0(k3_128, '2048', '1.2'))} "
        f"with 128-row tiles only.", src)

    # Figure 7
    n = {k: d.ncu(k) for k in BM_VARIANTS}
    a, b = BM_VARIANTS[0], BM_VARIANTS[-1]

    def arrow(metric, nd=1, scale=1.0, unit=""):
        return (f"{num(n[a][metric]) / scale:.{nd}f}{unit} → " +
                " → ".join(f"{num(n[k][metric]) / scale:.{nd}f}{unit}" for k in BM_VARIANTS[1:]))
    blocks[("k1_mmasync/README.md", "fig07")] = caption(
        7, "fig07-bm-resources.gp", "k1 at 16k rows, s = 0, BM 128 → 64 → 32 (ncu, one launch each; "
        "blocks per SM from `ggemm list`): registers per thread "
        f"{arrow('launch__registers_per_thread', 0)}, blocks per SM "
        + " → ".join(d.kernels[k]["blocks_per_sm"] for k in BM_VARIANTS)
        + f", achieved active warps per SM {arrow('sm__warps_active.avg.per_cycle_active')}, instructions "
        f"executed {arrow('smsp__inst_executed.sum', 1, 1e6, ' M')}, issue slots busy "
        f"{arrow('smsp__issue_active.avg.pct_of_peak_sustained_active', 1, 1, '%')}, tensor pipe busy "
        f"{arrow('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active', 1, 1, '%')}; "
        f"useful TFLOP/s in the same case " + " → ".join(fmt(t0(k, '16384', '0')) for k in BM_VARIANTS) + ".",
        f"{ncu_src} and `{d.rel(os.path.join(os.path.dirname(d.sweep), 'kernels.csv'))}`")

    # Figure 8, in k1 and in k2
    def top(k, count=3):
        st = {r: v for r, v in d.stalls(k).items() if r != "selected"}
        return ", ".join(f"{r} {v:.2f}" for r, v in sorted(st.items(), key=lambda kv: -kv[1])[:count])
    st = {k: d.stalls(k) for k in STALL_VARIANTS}
    total = {k: math.fsum(st[k].values()) for k in STALL_VARIANTS}
    intro = ("warp stall reasons at 16k rows, s = 0, in cycles a warp spends stalled per issued instruction "
             "(ncu's `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`; reasons under 0.3 "
             "everywhere are summed as \"other\"; \"selected\" counts the issuing cycle itself). ")
    blocks[("k1_mmasync/README.md", "fig08")] = caption(
        8, "fig08-warp-stalls.gp", intro + "Total per instruction: " +
        ", ".join(f"{short(k)} {total[k]:.1f}" for k in STALL_VARIANTS[1:5]) + ". Largest reasons: " +
        "; ".join(f"{short(k)}: {top(k)}" for k in STALL_VARIANTS[1:5]) + ".", ncu_src)
    blocks[("k2_tma_ws/README.md", "fig08-k2")] = caption(
        8, "fig08-warp-stalls.gp", intro + "Total per instruction: " +
        ", ".join(f"{short(k)} {total[k]:.1f}" for k in ("k1_mmasync_bm128", "k2_tma_ws_s2", "k2_tma_ws_s3")) +
        ". Largest reasons: " + "; ".join(f"{short(k)}: {top(k)}" for k in ("k2_tma_ws_s2", "k2_tma_ws_s3")) +
        f". barrier and mio_throttle: k1 bm128 {st['k1_mmasync_bm128']['barrier']:.2f} and "
        f"{st['k1_mmasync_bm128']['mio_throttle']:.2f}, k2 s3 {st['k2_tma_ws_s3']['barrier']:.2f} and "
        f"{st['k2_tma_ws_s3']['mio_throttle']:.2f}.", ncu_src)

    # Figure 11
    smax = {t: max(d.skews(t)) for t in ("16384", "2048")}

    def loss(k, t, s):
        return 1 - d.tf(k, t, s) / d.tf(k, t, 0)

    def model(t, s, bm):
        return 1 - d.eta(t, s, bm) / d.eta(t, 0, bm)
    parts = []
    for t in ("16384", "2048"):
        s = smax[t]
        parts.append(
            f"at {t} rows and s = {s:g} the model predicts a loss of {model(t, s, 128):.2f} for BM 128, "
            f"{model(t, s, 64):.2f} for BM 64 (and adaptive), {model(t, s, 32):.2f} for BM 32; measured: "
            + ", ".join(f"`{k}` {loss(k, t, s):.2f}" for k in SKEW_KERNELS))
    blocks[("README.md", "fig11")] = caption(
        11, "fig11-eta-vs-skew-loss.gp", "the loss of useful TFLOP/s to skew, 1 − TF(s)/TF(0), measured over "
        f"the skew grid ({len(d.skews('16384'))} skews at 16384 rows, {len(d.skews('2048'))} at 2048), against "
        "the η model's 1 − η(s)/η(0) from `ggemm problem` (lines, one per tile height; a negative loss is "
        "a gain): " + "; ".join(parts) + ".",
        src + " and `ggemm problem`")

    # Figure 14
    pts = [r for r in d.ok if r["set"] == "stages"]
    best = max(pts, key=lambda r: float(r["roofline_pct"]))
    k3_2k = d.cell("k3_wgmma", "2048", "0")
    th_2k = d.cell("torch_grouped_mm", "2048", "0")
    ridge = float(d.meta["ceiling_gemm_tflops"]) * 1e3 / float(d.meta["ceiling_copy_gbps"])
    blocks[("README.md", "fig14")] = caption(
        14, "fig14-roofline.gp", f"{len(pts)} configuration × case points of the \"stages\" set under the "
        f"ceilings measured in the same run (copy {d.meta['ceiling_copy_gbps']} GB/s, dense GEMM "
        f"{d.meta['ceiling_gemm_tflops']} TFLOP/s, ridge at {ridge:.0f} FLOP/B; the FFMA and mma.sync instruction "
        f"peaks dashed). Compulsory-byte intensity is {d.intensity('2048', '0', '1024'):.0f} FLOP/B at 2048 rows, "
        f"{d.intensity('16384', '0', '1024'):.0f} at 16384 rows and {d.intensity('16384', '0', '8192'):.0f} at "
        f"K = 8192. Closest to its roofline: `{best['kernel']}` at {case_label(best['tokens'], best['skew'], best['k'])}, "
        f"{float(best['roofline_pct']):.1f}%; "
        + ("torch there is at " if best is k3_2k else
           f"at 2k s=0 `k3_wgmma` is at {float(k3_2k['roofline_pct']):.1f}% and torch at ")
        + f"{float(th_2k['roofline_pct']):.1f}%.", src)
    return blocks


def ncu_k0(d):
    n = d.ncu("k0_fma")
    st = {r: v for r, v in d.stalls("k0_fma").items() if r != "selected"}
    topr = sorted(st.items(), key=lambda kv: -kv[1])[:5]
    wf = num(n["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"])
    bc = num(n["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"])
    pct = lambda m: f"{num(n[m]):.1f}%"  # noqa: E731
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(os.path.join(d.ncu_dir, 'k0_fma.csv'))}` "
           "(`plots/ncu_capture.sh`: ncu, one launch of `k0_fma` at 16384 rows, s = 0, raw metrics).*", "",
           "| metric | value |", "|---|---:|",
           f"| FMA pipe, instructions executed (% of peak) | {pct('sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active')} |",
           f"| issue slots busy (% of peak) | {pct('smsp__issue_active.avg.pct_of_peak_sustained_active')} |",
           f"| LSU pipe, instructions executed (% of peak) | {pct('sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active')} |",
           f"| L1/shared throughput (% of peak) | {pct('l1tex__throughput.avg.pct_of_peak_sustained_active')} |",
           f"| shared-memory wavefronts | {wf / 1e6:.1f} M |",
           f"| of them bank conflicts | {bc / 1e6:.1f} M ({100 * bc / wf:.1f}%) |",
           f"| achieved active warps per SM | {num(n['sm__warps_active.avg.per_cycle_active']):.1f} |"]
    for r, v in topr:
        out.append(f"| stall `{r}` (cycles per issued instruction) | {v:.2f} |")
    return "\n".join(out)


def profile_table(d, kernels, base, extra=(), note="", sweep_name=None):
    """ncu at 16k rows, s = 0 (one launch per configuration) next to the sweep's useful TFLOP/s;
    `extra`: more (name, function of the kernel) rows before the sweep's; `note`: appended to the
    provenance line; `sweep_name`: the sweep's name for a profile's kernel, where they differ."""
    sweep_name = sweep_name or {}
    n = {k: d.ncu(k) for k in kernels}
    attr = n[kernels[0]]
    schedulers = num(attr["device__attribute_max_warps_per_multiprocessor"]) / \
        num(attr["device__attribute_max_warps_per_scheduler"])
    pct = lambda m: lambda k: f"{num(n[k][m]):.1f}%"  # noqa: E731
    inst = lambda k: num(n[k]["smsp__inst_executed.sum"])  # noqa: E731
    one_stage = len({d.stage_of.get(k) for k in kernels}) == 1
    label = short if one_stage else (lambda k: k)  # noqa: E731
    rows = [
        ("registers per thread", lambda k: f"{num(n[k]['launch__registers_per_thread']):.0f}"),
        ("blocks per SM allowed by the registers", lambda k: f"{num(n[k]['launch__occupancy_limit_registers']):.0f}"),
        ("achieved active warps per SM", lambda k: f"{num(n[k]['sm__warps_active.avg.per_cycle_active']):.1f}"),
        ("… per scheduler", lambda k: f"{num(n[k]['sm__warps_active.avg.per_cycle_active']) / schedulers:.2f}"),
        ("instructions executed", lambda k: f"{inst(k) / 1e6:.1f} M"),
        (f"… against `{label(base)}`", lambda k: "–" if k == base else f"{100 * (inst(k) / inst(base) - 1):+.0f}%"),
        ("issue slots busy", pct("smsp__issue_active.avg.pct_of_peak_sustained_active")),
        ("cycles per issued instruction, per warp", lambda k: f"{math.fsum(d.stalls(k).values()):.1f}"),
        ("tensor pipe busy", pct("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")),
        ("L1/shared-memory throughput", pct("l1tex__throughput.avg.pct_of_peak_sustained_active")),
        ("LSU pipe, instructions executed", pct("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active")),
    ] + list(extra) + [
        ("useful TFLOP/s (sweep, same case)", lambda k: fmt(d.tf(sweep_name.get(k, k), "16384", "0"))),
    ]
    files = ", ".join(f"`{k}.csv`" for k in kernels)
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(d.ncu_dir)}/` ({files}; `plots/ncu_capture.sh`: ncu, "
           f"one launch each at 16384 rows, s = 0, raw metrics) and `{d.rel(d.sweep)}`. Per scheduler: active warps "
           f"per SM / {schedulers:.0f} (the device's warps per SM over warps per scheduler, from the same files). "
           "Cycles per issued instruction: the sum of the stall reasons of figure 8, the issuing cycle included. "
           "Percentages are of the peak sustained rate over active cycles." + note + "*", "",
           "| ncu, 16k rows, s = 0 | " + " | ".join(f"`{label(k)}`" for k in kernels) + " |",
           "|---|" + "---:|" * len(kernels)]
    for name, f in rows:
        out.append(f"| {name} | " + " | ".join(f(k) for k in kernels) + " |")
    return "\n".join(out)


def k2_against_k1(d, base="k1_mmasync_bm128"):
    """Useful TFLOP/s of each k2 configuration over k1 BM 128's, per case of the stages set."""
    mine = [k for k, st in d.stage_of.items() if st == "k2_tma_ws"]
    cases = [c for c in d.stage_cases() if d.tf(base, *c)]
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(d.sweep)}`: useful TFLOP/s over `{base}`'s in the "
           "same case; in bold, the fastest k2 configuration of the case.*", "",
           "| over `" + base + "` | " + " | ".join(case_label(*c) for c in cases) + " |",
           "|---|" + "---:|" * len(cases)]
    ratio = {(k, c): d.tf(k, *c) / d.tf(base, *c) for k in mine for c in cases if d.tf(k, *c)}
    for k in mine:
        cells = []
        for c in cases:
            r = ratio.get((k, c))
            best = r is not None and r == max(v for (kk, cc), v in ratio.items() if cc == c)
            cells.append("–" if r is None else (f"**{r:.2f}x**" if best else f"{r:.2f}x"))
        out.append(f"| `{k}` | " + " | ".join(cells) + " |")
    s3_s2 = [d.tf("k2_tma_ws_s3", *c) / d.tf("k2_tma_ws_s2", *c) for c in cases]
    bm128 = ("k2_tma_ws_s2", "k2_tma_ws_s3", "k2_tma_ws_s3_1blk")
    slowest = sum(min(bm128, key=lambda k: d.tf(k, *c)) == "k2_tma_ws_s3_1blk" for c in cases)
    c16 = ("16384", "0", "1024")
    top = max(mine, key=lambda k: ratio.get((k, c16), 0))
    out += ["", f"At {case_label(*c16)} the fastest k2 configuration, `{top}`, runs {ratio[(top, c16)]:.2f}x "
            f"`{base}` (the worklog's target for this stage, on the B300: {WORKLOG_K2_TARGET}x). "
            f"`s3` over `s2`: {min(s3_s2):.3f}x to {max(s3_s2):.3f}x, at least as fast in "
            f"{sum(x >= 1 for x in s3_s2)} of {len(cases)} cases; `s3_1blk` is the slowest of the three BM 128 "
            f"configurations in {slowest} of {len(cases)}."]
    return "\n".join(out)


K3_STEPS = [  # (change, configuration, baseline); "k2 best": k2's fastest configuration of the case
    ("wgmma itself", "k3_wgmma_tile_m128_n192", "k2 best"),
    ("persistence", "k3_wgmma_coop_m128_n192", "k3_wgmma_tile_m128_n192"),
    ("adaptive BM", "k3_wgmma_coop_m64_n192_solo", "k3_wgmma_coop_m128_n192"),
    ("both consumers on a 64-row tile", "k3_wgmma_coop_m64_n192", "k3_wgmma_coop_m64_n192_solo"),
    ("width 128", "k3_wgmma_coop_m64_n128", "k3_wgmma_coop_m64_n192"),
    ("width 256", "k3_wgmma_coop_m64_n256", "k3_wgmma_coop_m64_n192"),
    ("width 256, fixed rows", "k3_wgmma_coop_m128_n256", "k3_wgmma_coop_m128_n192"),
    ("B multicast, row pairs", "k3_wgmma_coop_m64_n192_mcb", "k3_wgmma_coop_m64_n192"),
    ("B multicast, row pairs, width 256", "k3_wgmma_coop_m64_n256_mcb", "k3_wgmma_coop_m64_n256"),
    ("A multicast, column pairs", "k3_wgmma_coop_m64_n192_mca", "k3_wgmma_coop_m64_n192"),
    ("ping-pong consumers, fixed rows", "k3_wgmma_pingpong_m128_n192", "k3_wgmma_coop_m128_n192"),
    ("ping-pong consumers, adaptive rows", "k3_wgmma_pingpong_m64_n192", "k3_wgmma_coop_m64_n192"),
    ("ping-pong at width 128, and fixed rows", "k3_wgmma_pingpong_m128_n128", "k3_wgmma_coop_m64_n128"),
    ("ping-pong at width 128, adaptive rows", "k3_wgmma_pingpong_m64_n128", "k3_wgmma_coop_m64_n128"),
]


def k3_steps(d):
    """k3_wgmma's ablation ladder: useful TFLOP/s of each configuration over its baseline's, per case
    of the stages set, and the η of the two row policies from `ggemm problem`."""
    cases = d.stage_cases()
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(d.sweep)}` (useful TFLOP/s of the configuration "
           "over its baseline's in the same case; above 1 = faster; – : a configuration registered after "
           "this sweep) and `ggemm problem` (η).*", "",
           "| change | configuration over baseline | " + " | ".join(case_label(*c) for c in cases) + " |",
           "|---|---|" + "---:|" * len(cases)]
    for change, k, base in K3_STEPS:
        cells = []
        for c in cases:
            if base == "k2 best":
                b = d.best("k2_tma_ws", *c)
                v, w = d.tf(k, *c), (float(b["useful_tflops"]) if b else None)
                cells.append(f"{v / w:.2f}x (`{short(b['kernel'])}`)" if v and w else "–")
            else:
                v, w = d.tf(k, *c), d.tf(base, *c)
                cells.append(f"{v / w:.2f}x" if v and w else "–")
        bl = "k2's fastest" if base == "k2 best" else f"`{short(base)}`"
        out.append(f"| {change} | `{short(k)}` over {bl} | " + " | ".join(cells) + " |")
    for name, bm in (("η, 128-row tiles", 128), ("η, adaptive 128/64", "adaptive")):
        out.append(f"| {name} | `ggemm problem` | " + " | ".join(f"{d.eta(t, s, bm):.3f}" for t, s, _ in cases) + " |")
    return "\n".join(out)


def k3_64row(d):
    """The 64-row tile on one consumer and on two: scheduled TFLOP/s and the ratios."""
    c = ("16384", "1.2")
    sch = lambda k: float(d.cell(k, *c)["scheduled_tflops"])  # noqa: E731
    solo, split, fixed = "k3_wgmma_coop_m64_n192_solo", "k3_wgmma_coop_m64_n192", "k3_wgmma_coop_m128_n192"
    ratios = ", ".join(f"{d.tf(split, *x) / d.tf(solo, *x):.3f}x at {case_label(*x)}" for x in d.stage_cases())
    return (f"*Generated by `plots/figdata.py` from `{d.rel(d.sweep)}` and `ggemm problem`:* at 16k rows, s = 1.2, "
            f"`{solo}` schedules {fmt(sch(solo))} TFLOP/s (η {d.eta(*c, 'adaptive'):.3f}) "
            f"against {fmt(sch(fixed))} for `{fixed}`, fixed BM = 128 (η "
            f"{d.eta(*c, 128):.3f}). `{split}` over `{solo}`, useful TFLOP/s: {ratios}.")


def k3_pairs(d):
    """How many `_mcb` pair halves idle at 16k, s = 1.2 (the split from ggemm problem, the tile sizes
    from kernels.csv), and how many clusters are resident."""
    mcb = "k3_wgmma_coop_m64_n192_mcb"
    kr = d.kernels[mcb]
    p = d.problem("16384", "1.2")
    bn = int(kr["block_n"])
    nb = -(-int(p["n"]) // bn)
    mt = [-(-int(m) // 128) for m in p["m_list"].split()]  # 128-row tiles, a remainder of 1..64 rows in one
    odd = sum(t % 2 for t in mt)
    halves = 2 * nb * sum(-(-t // 2) for t in mt)
    return (f"*Generated by `plots/figdata.py` from `ggemm problem` and `{d.rel(os.path.join(os.path.dirname(d.sweep), 'kernels.csv'))}`:* "
            f"at 16k rows, s = 1.2, {sum(t == 1 for t in mt)} of the {len(mt)} experts have a single row tile and "
            f"{odd} an odd count; with {nb} column blocks of {bn}, {odd * nb} of the {halves} pair halves of "
            f"`{mcb}` are idle. Resident clusters of two (`ggemm list`): {kr['clusters_resident']}.")


def ncu_k3(d):
    dram = ("DRAM throughput (% of peak, elapsed)",
            lambda k: f"{num(d.ncu(k)['dram__throughput.avg.pct_of_peak_sustained_elapsed']):.1f}%")
    note = (" `k3_wgmma.csv` was captured before the entry point existed: it profiles the configuration now "
            "called `k3_wgmma_coop_m64_n192` (ncu's kernel name: `" + d.ncu("k3_wgmma")["Kernel Name"].split("(")[0]
            + "`), the lesson, and its sweep row is that configuration's. The tensor-pipe row is "
            "`sm__pipe_tensor_op_hmma_cycles_active`; k3's only tensor instructions are HGMMA (SASS table), and "
            "the capture holds no `gmma` counterpart.")
    return profile_table(d, ["k2_tma_ws_s3", "k3_wgmma"], "k2_tma_ws_s3", extra=[dram], note=note,
                         sweep_name={"k3_wgmma": "k3_wgmma_coop_m64_n192"})


# ---- k3 evidence beyond the sweep: what the entry point's row rule rests on, and what was tried ----
EVIDENCE = os.path.join(ROOT, "results", "h200", "evidence")
UNITS = {"%": 1, "sector": 32, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}
K3_ROWS_DRAM = "ncu_k3_rows_dram-45bee3086628.txt"  # plots/ncu_k3_rows.sh at that commit
ROW_PAIRS = [("k3_wgmma_coop_m64_n256", "k3_wgmma_coop_m128_n256"),  # (adaptive rows, fixed rows)
             ("k3_wgmma_coop_m64_n192", "k3_wgmma_coop_m128_n192")]
K3_PINGPONG_NCU = "ncu_k3_pingpong-bcfd1cc99daa.txt"  # plots/ncu_k3_pingpong.sh at that commit
PINGPONG_PAIRS = [("k3_wgmma_coop_m64_n192", "k3_wgmma_pingpong_m64_n192"),
                  ("k3_wgmma_coop_m128_n192", "k3_wgmma_pingpong_m128_n192")]
# The worklog's cases by the labels the ncu scripts give them (the others are sets of cases.csv).
WORKLOG_LABELS = {"16k_s0": ("16384", "64", "1024", "2688", "0"), "16k_s1.2": ("16384", "64", "1024", "2688", "1.2"),
                  "16k_s0_k8192": ("16384", "64", "8192", "2688", "0")}
# (what was tried, evidence file, the configuration, the one it changes); every file is an A/B sweep of
# the stages and real-shape sets at the commit in its name, the code itself reverted after it except
# where the row says "kept". Configurations by today's names: the files hold the old ones and are read
# through plots/names.py; a reverted trial's configuration keeps the name it had (k3_wgmma_epi, ...).
K3_TRIED = [
    ("StoreWarps epilogue", "k3_ab_storewarps-e55ceb9f8222.csv", "k3_wgmma_epi", "k3_wgmma_coop_m64_n192"),
    ("StoreWarps epilogue, width 256, fixed rows", "k3_ab_storewarps-e55ceb9f8222.csv", "k3_wgmma_persist_n256_epi",
     "k3_wgmma_coop_m128_n256"),
    ("one stage fewer, nothing else", "k3_ab_one_stage_fewer-43e42735b261.csv", "k3_wgmma_s4",
     "k3_wgmma_coop_m64_n192"),
    ("StoreWarps over its lost stage", "k3_ab_one_stage_fewer-43e42735b261.csv", "k3_wgmma_epi", "k3_wgmma_s4"),
    ("… one warp polls, two sleep", "k3_ab_storewarps_named_barrier-295aec15b0a3.csv", "k3_wgmma_epi", "k3_wgmma_s4"),
    ("… the poller sleeps 1 µs", "k3_ab_storewarps_nanosleep-45bee3086628.csv", "k3_wgmma_epi", "k3_wgmma_s4"),
    ("both ends of the tile list", "k3_ab_both_ends-3c5b83a94503.csv", "k3_wgmma_ends", "k3_wgmma_coop_m64_n192"),
    ("both ends, width 256, fixed rows", "k3_ab_both_ends-3c5b83a94503.csv", "k3_wgmma_persist_n256_ends",
     "k3_wgmma_coop_m128_n256"),
    ("ping-pong consumers (kept)", "k3_ab_pingpong-b88808a.csv", "k3_wgmma_pingpong_m128_n192",
     "k3_wgmma_coop_m128_n192"),
    ("… the next run", "k3_ab_pingpong64-f64b7a4f4c8f.csv", "k3_wgmma_pingpong_m128_n192", "k3_wgmma_coop_m128_n192"),
    ("ping-pong, adaptive rows (kept)", "k3_ab_pingpong64-f64b7a4f4c8f.csv", "k3_wgmma_pingpong_m64_n192",
     "k3_wgmma_coop_m64_n192"),
    ("ping-pong at 192 against shared tiles at 256", "k3_ab_pingpong64-f64b7a4f4c8f.csv", "k3_wgmma_pingpong_m128_n192",
     "k3_wgmma_coop_m128_n256"),
    ("ping-pong, the producer looks its next tile up early", "k3_ab_lookahead-68a25cfb1364.csv", "k3_wgmma_pingpong_la",
     "k3_wgmma_pingpong_m128_n192"),
    ("… the same, a second sweep", "k3_ab_lookahead_reversed-68a25cfb1364.csv", "k3_wgmma_pingpong_la",
     "k3_wgmma_pingpong_m128_n192"),
    ("256-row tiles, each consumer 128 rows", "k3_ab_m256-88f0a0547dbb.csv", "k3_wgmma_m256",
     "k3_wgmma_pingpong_m128_n192"),
    ("256-row tiles, 7 stages of 32 k", "k3_ab_m256_k32-85b12f03fe38.csv", "k3_wgmma_m256_k32",
     "k3_wgmma_pingpong_m128_n192"),
    ("… 3 stages of 64 k (the first trial), same sweep", "k3_ab_m256_k32-85b12f03fe38.csv", "k3_wgmma_m256",
     "k3_wgmma_pingpong_m128_n192"),
    ("… 7 stages over 3", "k3_ab_m256_k32-85b12f03fe38.csv", "k3_wgmma_m256_k32", "k3_wgmma_m256"),
    ("stream-K over the last partial wave", "k3_ab_streamk-777303bf394d.csv", "k3_wgmma_pingpong_sk",
     "k3_wgmma_pingpong_m128_n192"),
    ("… split in CTA pairs that share B", "k3_ab_streamk_pairs-ac23f1eced2d.csv", "k3_wgmma_pingpong_sk",
     "k3_wgmma_pingpong_m128_n192"),
    ("… the last to arrive finishes a tile", "k3_ab_streamk_last-d7ec5cb2c610.csv", "k3_wgmma_pingpong_sk",
     "k3_wgmma_pingpong_m128_n192"),
    ("… its contributors found near its own range", "k3_ab_streamk_last_scan-3eb7f556db33.csv", "k3_wgmma_pingpong_sk",
     "k3_wgmma_pingpong_m128_n192"),
    ("folded walk: experts by rows, both ends", "k3_ab_fold-a1b33091e097.csv", "k3_wgmma_split64_fold",
     "k3_wgmma_coop_m64_n192"),
    ("… ping-pong, fixed rows", "k3_ab_fold-a1b33091e097.csv", "k3_wgmma_pingpong_fold", "k3_wgmma_pingpong_m128_n192"),
    ("… ping-pong, adaptive rows", "k3_ab_fold-a1b33091e097.csv", "k3_wgmma_pingpong64_fold",
     "k3_wgmma_pingpong_m64_n192"),
    ("… width 256", "k3_ab_fold-a1b33091e097.csv", "k3_wgmma_n256_fold", "k3_wgmma_coop_m64_n256"),
    ("… width 256, fixed rows", "k3_ab_fold-a1b33091e097.csv", "k3_wgmma_persist_n256_fold", "k3_wgmma_coop_m128_n256"),
    ("ping-pong in row-tile pairs, B multicast", "k3_ab_pingpong_mc-3eee2c6c4043.csv", "k3_wgmma_pingpong_mc",
     "k3_wgmma_pingpong_m128_n192"),
    ("… the shared-tile pairs, same sweep", "k3_ab_pingpong_mc-3eee2c6c4043.csv", "k3_wgmma_coop_m64_n192_mcb",
     "k3_wgmma_pingpong_m128_n192"),
]
# Trials profiled with ncu: (report, the log whose head holds the command).
K3_M256_NCU = ("ncu_k3_m256-88f0a0547dbb.txt", "k3_m256-88f0a0547dbb.log")
K3_M256_K32_NCU = ("ncu_k3_m256_k32-85b12f03fe38.txt", "k3_m256_k32-85b12f03fe38.log")
K3_FOLD_NCU = ("ncu_k3_fold-a1b33091e097.txt", "k3_fold-a1b33091e097.log")
K3_STREAMK_NCU = [("ncu_k3_streamk_v1-5f59997b2a10.txt", "k3_streamk_v1-5f59997b2a10.log"),
                  ("ncu_k3_streamk_pairs-ac23f1eced2d.txt", "k3_streamk_pairs-ac23f1eced2d.log")]
# The stream-K trial's traces (in a folder of their own: a split tile's hand-in is a second consumer event,
# which the between-tiles statistics would misread): (version, commit), each with ping-pong from the same call.
K3_STREAMK_TRACES = [("CTA pairs, the first k-block's holder waits", "46d8cba58695"),
                     ("the last to arrive finishes", "d7ec5cb2c610"),
                     ("… contributors found near its own range", "3eb7f556db33")]
K3_STREAMK_SHAPES = [("k8192", "16k rows, K = 8192"), ("16k_s0", "16k rows, K = 1024"), ("2k_s0", "2k rows"),
                     ("olmoe", "OLMoE-like")]
K3_PAIRS_NCU = ("ncu_k3_pingpong_mc-3eee2c6c4043.txt", "k3_pingpong_mc-3eee2c6c4043.log")
SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum"  # L2 sectors read for the SMs, where a report has it
K3_PINGPONG64_N128 = "k3_pingpong64_n128-0c00050b1b96.log"  # its device script heads it
# The 256-row trial at two depths: ping-pong and the 7-stage one traced in the same call, two shapes.
K3_STALLS = [("16k rows, K = 1024", "ncu_k3_pingpong_stalls_k1024-48209f320b46.csv"),
              ("16k rows, K = 8192", "ncu_k3_pingpong_stalls_k8192-48209f320b46.csv")]
K3_L2_BREAKDOWN = ("ncu_k3_l2_breakdown-a36e335df181.txt", "k3_l2_breakdown-a36e335df181.log")
# Runs on fewer SMs (--sms): (commit, kernel, SM counts, (folder's shape, label), the log its script heads);
# folders trace_KERNEL_SHAPE_smsN-COMMIT, KERNEL as the run named it (shown by today's name: plots/names.py).
# Each log holds the untraced medians, shape by shape, SM count by count.
K3_SMS = [("68f731703725", "k3_wgmma_pingpong", (132, 99, 66, 33),
           (("16k_k1024", "16k rows, K = 1024"), ("16k_k8192", "16k rows, K = 8192")),
           "k3_pingpong_sms-68f731703725.log"),
          ("b838ed779721", "k3_wgmma", (132, 66), (("qwen3", "Qwen3-like"), ("olmoe", "OLMoE-like")),
           "k3_sms_models-b838ed779721.log")]
K3_M256_K32_TRACES = [(new_name(f"k3_wgmma_{k}"), f"trace_k3_wgmma_{k}_{shape}-85b12f03fe38")
                      for shape in ("16k_s0", "k8192") for k in ("pingpong", "m256_k32")]
# The folded walk's trace at 16k rows, s = 1.2, and the committed trace of the same configuration
# in expert-major order (what the entry point ran there: k3_wgmma_pingpong64, now k3_wgmma_pingpong_m64_n192).
K3_FOLD_TRACES = [("expert-major", os.path.join(ROOT, "results", "h200", "traces", "k3_wgmma_16k_s1.2")),
                  ("folded", os.path.join(EVIDENCE, "trace_k3_wgmma_pingpong64_fold_16k_s1.2-a1b33091e097"))]


def ncu_text(path, header=lambda words: (words[0], new_name(words[1]))):
    """{key: {metric: value in bytes or µs}} from a report of `== HEADER` lines, each followed by ncu's
    metric lines; header turns a header's words into the key (default: label and kernel, as
    plots/ncu_lib.sh writes them, the kernel by today's name: plots/names.py)."""
    out, key = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("== "):
                key = header(line.split()[1:])
                out[key] = {}
            elif key and line.split():
                name, unit, value = line.split()[:3]
                out[key][name] = num(value) * UNITS[unit]
    return out


def case_shape(d, label):
    """(tokens, experts, k, n, skew) of an ncu label: a one-shape set of harness/cases.csv, through
    `ggemm cases` (the one reader of that file), or one of the worklog's cases (WORKLOG_LABELS)."""
    if label in WORKLOG_LABELS:
        return WORKLOG_LABELS[label]
    r = work_lists.cases(d.ggemm, "--set", label, "--kernels", "k3_wgmma")[0]
    return r["tokens"], r["experts"], r["k"], r["n"], r["skew"]


def k3_rows_dram(d):
    """Adaptive against fixed rows at one width: DRAM bytes read and kernel time (ncu), and the
    bytes A and B must be read at least once (ggemm problem's compulsory bytes less C)."""
    path = os.path.join(EVIDENCE, K3_ROWS_DRAM)
    data = ncu_text(path)
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(path)}` (`plots/ncu_k3_rows.sh`: ncu, one launch each "
           "from a flushed L2) and `ggemm problem` (compulsory bytes less the C it writes = A and B read "
           "once).*", "",
           "| case | adaptive rows | fixed rows | DRAM read, adaptive (× once) | DRAM read, fixed (× once) | "
           "time adaptive / fixed |", "|---|---|---|---:|---:|---:|"]
    for label, once, a, fx, ra, rf in ncu_pairs(d, data, ROW_PAIRS):
        read = lambda r: f"{r['dram__bytes_read.sum'] / 1e9:.2f} GB ({r['dram__bytes_read.sum'] / once:.2f}×)"  # noqa: E731
        out.append(f"| {label} | `{short(a)}` | `{short(fx)}` | {read(ra)} | {read(rf)} | "
                   f"{ra['gpu__time_duration.sum'] / rf['gpu__time_duration.sum']:.2f} |")
    return "\n".join(out)


def ncu_pairs(d, data, pairs):
    """(case label, A and B bytes read once, kernel a, kernel b, a's metrics, b's metrics) for every
    case of an ncu report (ncu_text) that profiled both kernels of a pair, in the report's order."""
    for label in dict.fromkeys(k[0] for k in data):
        once = compulsory_ab_bytes(d, label)
        for a, b in pairs:
            if (label, a) in data and (label, b) in data:
                yield label, once, a, b, data[(label, a)], data[(label, b)]


def compulsory_ab_bytes(d, label):
    """A and B read once: `ggemm problem`'s compulsory bytes less the C it writes."""
    t, e, k, n, skew = case_shape(d, label)
    p = subprocess.run([d.ggemm, "problem", "--tokens", t, "--experts", e, "--k", k, "--n", n, "--skew", skew,
                        "--format", "csv"], capture_output=True, text=True, check=True).stdout
    return float(next(csv.DictReader(io.StringIO(p)))["min_bytes"]) - 2.0 * int(t) * int(n)


def k3_pingpong_ncu(d):
    """Ping-pong against shared tiles at the same width and row policy (ncu): kernel time, tensor
    pipe activity and DRAM bytes read against A and B read once."""
    path = os.path.join(EVIDENCE, K3_PINGPONG_NCU)
    data = ncu_text(path)
    pipe = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(path)}` (`plots/ncu_k3_pingpong.sh`: ncu, one launch "
           "each from a flushed L2, clocks as they are) and `ggemm problem` (A and B read once). Tensor pipe: "
           "`" + pipe + "`; DRAM and L2 throughput: `dram__throughput` and `lts__throughput`, "
           "`avg.pct_of_peak_sustained_elapsed` (– : not in that report).*", "",
           "| case | shared tiles | ping-pong | time shared / ping-pong | tensor pipe active, shared → ping-pong "
           "| DRAM read, shared → ping-pong (× once) | DRAM, L2 throughput, ping-pong |",
           "|---|---|---|---:|---:|---:|---:|"]
    dram, l2 = "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed"
    for label, once, a, b, ra, rb in ncu_pairs(d, data, PINGPONG_PAIRS):
        feed = f"{rb[dram]:.1f}%, {rb[l2]:.1f}%" if dram in rb and l2 in rb else "–"
        out.append(f"| {label} | `{short(a)}` | `{short(b)}` | "
                   f"{ra['gpu__time_duration.sum'] / rb['gpu__time_duration.sum']:.2f} | "
                   f"{ra[pipe]:.1f}% → {rb[pipe]:.1f}% | "
                   f"{ra['dram__bytes_read.sum'] / 1e9:.2f} → {rb['dram__bytes_read.sum'] / 1e9:.2f} GB "
                   f"({ra['dram__bytes_read.sum'] / once:.2f}× → {rb['dram__bytes_read.sum'] / once:.2f}×) | {feed} |")
    return "\n".join(out)


def k3_pingpong64_n128(d):
    """Width 128, adaptive rows: the ping-pong configuration against the two it joins, timed in turn
    (`ggemm run`, two rounds) on shapes where the entry point's rule takes 128."""
    path = os.path.join(EVIDENCE, K3_PINGPONG64_N128)
    times = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"n (\d+) skew (\S+) round \d+ (\S+) time: median ([\d.]+) us", line)
            if m:
                times.setdefault((m.group(1), m.group(2)), {}).setdefault(new_name(m.group(3)), []).append(
                    float(m.group(4)))
    kernels = ["k3_wgmma_coop_m64_n128", "k3_wgmma_pingpong_m128_n128", "k3_wgmma_pingpong_m64_n128"]
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(path)}` (`ggemm run`, 16384 rows, 64 experts, K = 1024, "
           "the three configurations in turn, twice; median of 50 timed launches each): the two medians, and the "
           "shared-tile configuration's mean over the ping-pong one's.*", "",
           "| N | skew | " + " | ".join(f"`{short(k)}` µs" for k in kernels)
           + f" | `{short(kernels[0])}` / `{short(kernels[2])}` |",
           "|---:|---:|" + "---:|" * (len(kernels) + 1)]
    for (n, skew), t in times.items():
        mean = {k: math.fsum(v) / len(v) for k, v in t.items()}
        out.append(f"| {n} | {skew} | " + " | ".join(", ".join(f"{x:.1f}" for x in t[k]) for k in kernels)
                   + f" | {mean[kernels[0]] / mean[kernels[2]]:.2f}x |")
    return "\n".join(out)


def k3_trial_ncu(d, trial):
    """A trial against its baseline in ncu (one launch each): time, tensor pipe, L2 and DRAM throughput,
    DRAM bytes read. The report's headers are `== SHAPE OPTIONS KERNEL`."""
    report, log = trial
    path = os.path.join(EVIDENCE, report)
    out = ncu_text(path, header=lambda words: (" ".join(words[:-1]), new_name(words[-1])))
    pct = lambda r, m: f"{r[m + '.avg.pct_of_peak_sustained_' + ('active' if m.startswith('sm__') else 'elapsed')]:.1f}%"  # noqa: E731
    sectors = all(SECTORS in r for r in out.values())
    rows = [f"*Generated by `plots/figdata.py` from `{d.rel(path)}` (ncu, one launch each from a flushed L2, "
            f"clocks as they are; the command heads `{log}` beside it).*", "",
            "| `ggemm run` shape options | kernel | time µs | tensor pipe active | L2 throughput | DRAM throughput "
            "| DRAM read |" + (" L2 read for the SMs |" if sectors else ""),
            "|---|---|---:|---:|---:|---:|---:|" + ("---:|" if sectors else "")]
    for (shape, kernel), r in out.items():
        rows.append(f"| `{shape}` | `{short(kernel)}` | {r['gpu__time_duration.sum']:.1f} | "
                    f"{pct(r, 'sm__pipe_tensor_op_hmma_cycles_active')} | {pct(r, 'lts__throughput')} | "
                    f"{pct(r, 'dram__throughput')} | {r['dram__bytes_read.sum'] / 1e6:.0f} MB |"
                    + (f" {r[SECTORS] / 1e6:.0f} MB |" if sectors else ""))
    if sectors:
        rows.append(f"\nL2 read for the SMs: `{SECTORS}` (32-byte sectors) in bytes.")
    return "\n".join(rows)


def trace_rates(folder, slices=0, slice_us=0.0):
    """A trace cut into `slices` equal slices of its kernel time, or into as many of about `slice_us`
    as fit: (kernel µs, commit, [(useful TFLOP/s,
    B first-touch TB/s)] per slice). A tile's FLOPs are spread evenly over its span (first full stage
    to last store); a B panel (expert and column block, K x BLOCK_N bf16) counts once, spread over the
    span of the first tile that reads it: a lower bound on the rate B comes from DRAM."""
    meta, summary = tables.load(os.path.join(folder, "summary.csv"))
    s = summary[0]
    k, n, kernel_ns = int(s["k"]), int(s["n"]), float(s["kernel_us"]) * 1e3
    with open(os.path.join(folder, "trace.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["role"].startswith("consumer") and r["computed"] == "1"]
    block_n = min(int(r["col0"]) for r in rows if int(r["col0"]) > 0)
    slices = slices or max(1, round(kernel_ns / 1e3 / slice_us))
    width = kernel_ns / slices
    flops, bytes_ = [0.0] * slices, [0.0] * slices

    def spread(acc, a, b, amount):  # amount over [a, b) ns, by overlap with each slice
        b = max(b, a + 1)
        for i in range(max(0, int(a // width)), min(slices, int(b // width) + 1)):
            acc[i] += amount * max(0.0, min(b, (i + 1) * width) - max(a, i * width)) / (b - a)

    first = {}
    for r in rows:
        a, b = int(r["mark_ns"]), int(r["end_ns"])
        cols = min(block_n, n - int(r["col0"]))
        spread(flops, a, b, 2.0 * int(r["rows"]) * cols * k)
        key = (r["expert"], r["col0"])
        if key not in first or a < first[key][0]:
            first[key] = (a, b, cols)
    for a, b, cols in first.values():  # the panels a tile loads: its valid columns
        spread(bytes_, a, b, 2.0 * k * cols)
    sec = width * 1e-9
    return (kernel_ns / 1e3, meta.get("commit", "")[:12],
            [(f / sec / 1e12, x / sec / 1e12) for f, x in zip(flops, bytes_)])


def bulk_and_tail(folder):
    """A trace before and after its first SM runs out of work: (kernel µs, first idle µs, useful TFLOP/s
    until then, share of the kernel after it, median µs per 128 rows of a tile on one CTA). A tile that
    two consumers share counts once (earliest first full stage, latest store); its FLOPs are spread
    evenly over that span; the period is from one tile's first full stage to the next one's on the CTA."""
    _, summary = tables.load(os.path.join(folder, "summary.csv"))
    s = summary[0]
    k, n = int(s["k"]), int(s["n"])
    kernel_ns, idle_ns = float(s["kernel_us"]) * 1e3, float(s["first_idle_us"]) * 1e3
    tiles = {}
    with open(os.path.join(folder, "trace.csv")) as f:
        for r in csv.DictReader(f):
            if not r["role"].startswith("consumer") or r["computed"] != "1":
                continue
            key = (r["cta"], r["tile"])
            a, b = int(r["mark_ns"]), int(r["end_ns"])
            if key in tiles:
                tiles[key] = (min(a, tiles[key][0]), max(b, tiles[key][1])) + tiles[key][2:]
            else:
                tiles[key] = (a, b, int(r["rows"]), int(r["col0"]))
    # The second column block's start; every trace read here has several column blocks.
    block_n = min(c for _, _, _, c in tiles.values() if c > 0)
    done, per_cta = 0.0, {}
    for (cta, _), (a, b, rows, col0) in tiles.items():
        flops = 2.0 * rows * min(block_n, n - col0) * k
        done += flops * max(0.0, min(b, idle_ns) - a) / max(1, b - a)
        per_cta.setdefault(cta, []).append((a, rows))
    periods = []
    for ts in per_cta.values():
        ts.sort()
        periods += [(y[0] - x[0]) / 1e3 / (x[1] / 128) for x, y in zip(ts, ts[1:])]
    return (kernel_ns / 1e3, idle_ns / 1e3, done / idle_ns / 1e3, 1 - idle_ns / kernel_ns,
            statistics.median(periods))


def k3_m256_k32_traces(d):
    """The 256-row tiles at 7 stages against ping-pong in traces: the bulk of the launch and its tail."""
    paths = [os.path.join(EVIDENCE, name) for _, name in K3_M256_K32_TRACES]
    out = ["*Generated by `plots/figdata.py` from " + ", ".join(f"`{d.rel(p)}/`" for p in paths)
           + " (`ggemm trace`, one device script; it heads `" + K3_M256_K32_NCU[1] + "`): until the first SM "
           "runs out of tiles, the useful TFLOP/s finished (each tile's FLOPs spread over its span, from its first "
           "full stage to its last store); the share of the kernel after that moment; and the median time from one "
           "tile's first full stage to the next one's on a CTA, per 128 rows of tile.*", "",
           "| shape | kernel | kernel µs | first SM idle at µs | useful TFLOP/s until then | after it "
           "| µs per 128 rows of a tile |", "|---|---|---:|---:|---:|---:|---:|"]
    gemm, bulk = float(d.meta["ceiling_gemm_tflops"]), []
    for (kernel, _), p in zip(K3_M256_K32_TRACES, paths):
        _, summary = tables.load(os.path.join(p, "summary.csv"))
        shape = f"{int(summary[0]['tokens']) // 1024}k rows, K = {summary[0]['k']}"
        total, idle, rate, after, period = bulk_and_tail(p)
        out.append(f"| {shape} | `{short(kernel)}` | {total:.1f} | {idle:.1f} | {rate:.0f} | {100 * after:.1f}% "
                   f"| {period:.2f} |")
        if kernel == "k3_wgmma_pingpong_m128_n192":
            bulk.append(f"{100 * rate / gemm:.0f}% at {shape}")
    out += ["", "Ping-pong until the first SM idles (traced, a little slower than untraced), against the GEMM "
            f"ceiling of `{d.rel(d.sweep)}` ({gemm:.1f} TFLOP/s): " + ", ".join(bulk) + "."]
    return "\n".join(out)


def streamk_phases(folder):
    """A stream-K trace: (kernel µs, the latest end of a CTA's whole tiles, median and longest hand-in µs), times
    from the first event as in summary.csv. A hand-in is a consumer event with computed = 0 (start: the piece's
    K loop ended; mark: its partial handed in, for the last contributor the others' added too)."""
    _, summary = tables.load(os.path.join(folder, "summary.csv"))
    with open(os.path.join(folder, "trace.csv")) as f:
        rows = list(csv.DictReader(f))
    t0 = min(int(r["start_ns"]) for r in rows)
    consumer = [r for r in rows if r["role"].startswith("consumer")]
    ctas = len({r["cta"] for r in rows})
    tiles = max(int(r["tile"]) for r in consumer) + 1
    split_from = tiles - tiles % ctas
    whole_end = max(int(r["end_ns"]) for r in consumer if r["computed"] == "1" and int(r["tile"]) < split_from)
    hand_in = [(int(r["mark_ns"]) - int(r["start_ns"])) / 1e3 for r in consumer if r["computed"] == "0"]
    return float(summary[0]["kernel_us"]), (whole_end - t0) / 1e3, statistics.median(hand_in), max(hand_in)


def k3_streamk_traces(d):
    """The stream-K versions' traces against ping-pong traced in the same device script: ping-pong's tail (its
    first idle SM to its end) is what a split of the last wave can win; the split is what it took."""
    folder = os.path.join(EVIDENCE, "streamk")
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(folder)}/` (`ggemm trace`, ping-pong and stream-K in one "
           "device script per version; the script heads the log of its commit there or beside it). Ping-pong's "
           "tail: from its first idle SM to its end. The whole tiles end: the latest end of a CTA's whole tiles; "
           "the split: from then to the kernel's end. A hand-in: from a split tile's K loop ending to its partial "
           "written and counted; for the last contributor (and at 46d8cba58695 for the holder of a tile's first "
           "k-block), until the others' partials are added too.*", "",
           "| version | shape | ping-pong µs | its tail µs | stream-K µs | whole tiles end at µs | the split µs "
           "| hand-in median µs | longest |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for what, commit in K3_STREAMK_TRACES:
        for shape, label in K3_STREAMK_SHAPES:
            _, pp = tables.load(os.path.join(folder, f"trace_k3_wgmma_pingpong_{shape}-{commit}", "summary.csv"))
            total, whole, med, longest = streamk_phases(
                os.path.join(folder, f"trace_k3_wgmma_pingpong_sk_{shape}-{commit}"))
            out.append(f"| {what} (`{commit}`) | {label} | {float(pp[0]['kernel_us']):.1f} | "
                       f"{float(pp[0]['kernel_us']) - float(pp[0]['first_idle_us']):.1f} | {total:.1f} | "
                       f"{whole:.1f} | {total - whole:.1f} | {med:.2f} | {longest:.2f} |")
    return "\n".join(out)


def k3_stalls(d):
    """Where k3_wgmma_pingpong_m128_n192's warps were sampled (ncu's warp-state sampling, per SASS instruction): the
    samples of the two reasons that name a wait (barrier, long scoreboard), split by the instruction waiting,
    and the rest; then the stage waits over the MMA waits."""
    cols = ["named barriers (mostly the other consumer's turn)", "a stage: mbarrier try-wait",
            "its own MMAs (`WARPGROUP.DEPBAR`)", "stores and shared loads (mostly the epilogue's)",
            "everything else, issuing included"]
    out = ["*Generated by `plots/figdata.py` from " + " and ".join(f"`{f}`" for _, f in K3_STALLS) + " in `"
           + d.rel(EVIDENCE) + "/` (ncu's per-instruction page, warp-state sampling over one launch; the device "
           "script heads `k3_pingpong_stalls-48209f320b46.log`): the share of all samples. A sample is a warp "
           "that was resident, the producer's one working warp and the eight consumer warps alike; in ping-pong "
           "one consumer always waits for the other's turn or stores. A try-wait is counted on its retry branch "
           "(long scoreboard), `WARPGROUP.DEPBAR` by its barrier reason; the page has no column for the "
           "warpgroup-arrive reason, whose few samples fall under everything else.*", "",
           "| shape | samples | " + " | ".join(cols) + " | stage waits over MMA waits |",
           "|---|---:|" + "---:|" * (len(cols) + 1)]
    for label, name in K3_STALLS:
        with open(os.path.join(EVIDENCE, name)) as f:
            rows = list(csv.DictReader(line for i, line in enumerate(f) if i > 0))
        share = [0] * len(cols)
        total = 0
        for r in rows:
            n = int(r["Warp Stall Sampling (All Samples)"].replace(",", "") or 0)
            total += n
            op = re.sub(r"^@!?U?P\w+\s+", "", r["Source"].strip()).split(" ")[0]
            barrier, long_sb = int(r["stall_barrier"] or 0), int(r["stall_long_sb"] or 0)
            share[2 if op.startswith("WARPGROUP.DEPBAR") else 0] += barrier
            try_wait = long_sb if op == "BRA" else 0  # the retry branch of an mbarrier try-wait loop
            share[1] += try_wait
            share[3 if op.startswith(("STG", "STS", "LDS", "STSM")) else 4] += n - barrier - try_wait
        out.append(f"| {label} | {total} | " + " | ".join(f"{100 * x / total:.0f}%" for x in share)
                   + f" | {share[1] / share[2]:.1f} |")
    return "\n".join(out)


def k3_sms_scaling(d):
    """Kernels traced on fewer SMs (`--sms`): the rate of each SM while all have tiles, and the tail."""
    folder = os.path.join(EVIDENCE, "sms")
    peak = float(d.meta["ceiling_gemm_tflops"]) / int(d.meta["sms"])
    logs = ", ".join(f"`{log}`" for *_, log in K3_SMS)
    out = [f"*Generated by `plots/figdata.py` from `{d.rel(folder)}/` (`ggemm trace --sms N`; the device scripts "
           f"head {logs} beside it, with the untraced medians; `k3_wgmma` ran the configuration it chooses for the "
           "whole GPU): until the first SM runs out of tiles, the useful TFLOP/s of the launch and of one SM; the "
           "share of the kernel after that moment; the median time from one tile's first full stage to the next "
           "one's on a CTA, per 128 rows. The last column puts one SM's rate against the GEMM ceiling of "
           f"`{d.rel(d.sweep)}` shared out over its {d.meta['sms']} SMs.*", "",
           "| shape | kernel | SMs | kernel µs | useful TFLOP/s until the first SM idles | per SM | after it "
           "| µs per 128 rows of a tile | per SM over the ceiling's share |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for commit, kernel, counts, shapes, _ in K3_SMS:
        for shape, label in shapes:
            for n in counts:
                total, _, rate, after, period = bulk_and_tail(
                    os.path.join(folder, f"trace_{kernel}_{shape}_sms{n}-{commit}"))
                out.append(f"| {label} | `{new_name(kernel)}` | {n} | {total:.1f} | {rate:.0f} | {rate / n:.2f} | "
                           f"{100 * after:.1f}% | {period:.2f} | {100 * rate / n / peak:.0f}% |")
    return "\n".join(out)


def k3_l2_breakdown(d):
    """ncu's breakdown of L2 and DRAM throughput for the ping-pong kernel on all and on half the SMs: each
    unit's share of its peak, busiest L2 unit first."""
    report, log = K3_L2_BREAKDOWN
    path = os.path.join(EVIDENCE, report)
    out = ncu_text(path, header=lambda words: (" ".join(words[:-3]), words[-2]))
    pct = ".avg.pct_of_peak_sustained_elapsed"
    units = [("lts__ltcfabric2ltc_cycles_active", "the fabric between L2's partitions"),
             ("lts__d_sectors", "L2 data sectors"), ("lts__t_tag_requests", "L2 tag requests"),
             ("lts__lts2xbar_cycles_active_realtime", "L2 to the SMs"),
             ("lts__xbar2lts_cycles_active", "the SMs to L2"), ("dram__cycles_active", "DRAM")]
    rows = [f"*Generated by `plots/figdata.py` from `{d.rel(path)}` (ncu `breakdown:` of `lts__throughput` and "
            f"`dram__throughput`, one launch each, clocks as they are; the command heads `{log}` beside it): "
            "each unit's activity as a share of its peak.*", "",
            "| `ggemm run` shape options | SMs | time µs | tensor pipe active | "
            + " | ".join(label for _, label in units) + " |", "|---|---:|---:|---:|" + "---:|" * len(units)]
    for (shape, sms), r in out.items():
        rows.append(f"| `{shape}` | {sms} | {r['gpu__time_duration.sum']:.1f} | "
                    f"{r['sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active']:.1f}% | "
                    + " | ".join(f"{r[m + pct]:.1f}%" for m, _ in units) + " |")
    return "\n".join(rows)


def k3_fold_phases(d):
    """Two traces of one configuration, expert-major and folded: per half of each kernel, the useful
    TFLOP/s its consumers finished and the rate at which B panels were first read (trace_rates)."""
    out = ["*Generated by `plots/figdata.py` from " + " and ".join(f"`{d.rel(p)}/trace.csv`" for _, p in K3_FOLD_TRACES)
           + " (`ggemm trace`; the two were captured in different calls, on different machines): per half of "
           "the kernel, the useful TFLOP/s of its tiles (each tile's FLOPs spread over its span), and the rate at "
           "which B panels (an expert's K x BLOCK_N columns) are first read, spread over the span of the first "
           "tile that reads each: a lower bound on the rate B comes from DRAM.*",
           "", "| order | commit | kernel µs | useful TFLOP/s, first half | second half | B panels first read, first "
           "half | second half |", "|---|---|---:|---:|---:|---:|---:|"]
    for label, folder in K3_FOLD_TRACES:
        kernel_us, commit, halves = trace_rates(folder, 2)
        out.append(f"| {label} | {commit} | {kernel_us:.1f} | {halves[0][0]:.0f} | {halves[1][0]:.0f} | "
                   f"{halves[0][1]:.2f} TB/s | {halves[1][1]:.2f} TB/s |")
    # The phase model: experts one after another, each at the larger of its MMA and DRAM times
    # (useful FLOPs over the GEMM ceiling, its A, B and C bytes over the copy ceiling), against the
    # roofline, where the two overlap over the whole launch.
    p = d.problem(16384, 1.2)
    k, n = int(p["k"]), int(p["n"])
    gemm, copy = float(d.meta["ceiling_gemm_tflops"]) * 1e12, float(d.meta["ceiling_copy_gbps"]) * 1e9
    rows_e = [m for m in map(int, p["m_list"].split()) if m > 0]  # an empty expert reads no B
    mma = [2.0 * m * k * n / gemm for m in rows_e]
    dram = [(2.0 * m * k + 2.0 * k * n + 2.0 * m * n) / copy for m in rows_e]
    phases = math.fsum(max(a, b) for a, b in zip(mma, dram))
    roof = max(math.fsum(mma), math.fsum(dram))
    out += ["", f"The phase floor at 16k rows, s = 1.2 (`ggemm problem`'s m_e; the ceilings of `{d.rel(d.sweep)}`): "
            f"every expert at the larger of its MMA time (useful FLOPs) and its DRAM time (its A, B and C "
            f"bytes), one expert after another, takes {phases * 1e6:.1f} µs, {roof / phases * 100:.1f}% of the "
            f"roofline ({roof * 1e6:.1f} µs, where the two overlap over the whole launch)."]
    return "\n".join(out)


def k3_tried(d):
    """Experiments, reverted or (rows marked so) kept: median time of the configuration over the one it changes,
    per case of the A/B sweep in the same run (above 1 = the experiment was faster)."""
    cols, table = [], {}
    for what, fname, k, base in K3_TRIED:
        meta, rows = tables.load(os.path.join(EVIDENCE, fname))
        times = {}
        for r in rows:
            if r["check"] != "pass":
                continue
            c = case_label(r["tokens"], r["skew"], r["k"]) if r["set"] == "stages" else r["set"]
            if c not in cols:
                cols.append(c)
            times[(new_name(r["kernel"]), c)] = float(r["time_us_median"])
        table[(what, fname, k, base)] = {c: times[(base, c)] / times[(k, c)] for c in cols
                                         if (k, c) in times and (base, c) in times}
    out = [f"*Generated by `plots/figdata.py` from the A/B sweeps in `{d.rel(EVIDENCE)}/` (the file names the "
           "commit that was measured; each ran its configurations in one `ggemm sweep`, with the sweep's timing "
           "protocol): the baseline's median time over the experiment's, above 1 = the experiment was faster.*", "",
           "| tried | configuration over baseline | evidence | " + " | ".join(cols) + " |",
           "|---|---|---|" + "---:|" * len(cols)]
    for (what, fname, k, base), r in table.items():
        out.append(f"| {what} | `{short(k)}` over `{short(base)}` | `{fname}` | "
                   + " | ".join(f"{r[c]:.2f}x" if c in r else "–" for c in cols) + " |")
    # The skew sweep of the both-ends order: the range of its ratio at each row count.
    fname = "k3_skew_both_ends-3c5b83a94503.csv"
    _, rows = tables.load(os.path.join(EVIDENCE, fname))
    t = {(new_name(r["kernel"]), r["tokens"], float(r["skew"])): float(r["time_us_median"]) for r in rows
         if r["check"] == "pass"}
    base, ends = "k3_wgmma_coop_m64_n192", "k3_wgmma_ends"
    parts = []
    for tokens in sorted({key[1] for key in t}, key=int, reverse=True):
        ratios = {s_: t[(base, tokens, s_)] / t[(ends, tokens, s_)]
                  for (k, tk, s_) in t if k == ends and tk == tokens and (base, tk, s_) in t}
        if not ratios:
            continue
        lo, hi = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
        parts.append(f"at {int(tokens) // 1024}k rows from {ratios[lo]:.2f}x (s = {lo:g}) to {ratios[hi]:.2f}x "
                     f"(s = {hi:g})")
    skews = sorted({key[2] for key in t})
    if parts:
        out += ["", f"`{short(ends)}` over `{short(base)}` across skews {skews[0]:g} to {skews[-1]:g} (`{fname}`): "
                + "; ".join(parts) + "."]
    # The trials' traces: shared tiles, the gap between a consumer's tiles (stores handed over or not);
    # whole tiles, where the time between turns goes (the between-tiles table's columns).
    import traces  # noqa: E402  (plots/traces.py: gap_stats)
    gaps, turns = [], []
    for name in sorted(glob.glob(os.path.join(EVIDENCE, "trace_k3_wgmma_*_16k_s0-*"))):
        g = traces.gap_stats(os.path.join(name, "trace.csv"))
        label = short(new_name("k3_wgmma_" + os.path.basename(name)[len("trace_k3_wgmma_"):].split("_16k")[0]))
        commit = os.path.basename(name).rsplit("-", 1)[1]
        if g["loop"] is None or g["period"] is None:
            gaps.append(f"`{label}` {g['gap']:.2f} µs (tile span {g['span']:.2f})")
        else:
            turns.append(f"`{label}` (at {commit}): producer step {g['step']:.2f}, hand-off {g['handoff']:.2f}, "
                         f"lead {g['lead']:.2f}, "
                         f"first-stage wait {g['wait']:.2f}, turn's K loop {g['loop']:.2f}, tile period "
                         f"{g['period']:.2f}")
    if gaps or turns:
        out += ["", "Traces at 16k rows, s = 0 (`ggemm trace`, kept in the same folder as "
                "`trace_k3_wgmma_*_16k_s0-COMMIT/`; medians in µs, as the between-tiles table defines them)."]
    if gaps:
        out += ["Shared tiles, the gap from a consumer's last store of a tile to its next tile's start: "
                + "; ".join(gaps) + "."]
    if turns:
        out += ["Ping-pong: " + "; ".join(turns) + "."]
    return "\n".join(out)


def blocks(d):
    """[(where, block name, function of d that makes its text)] of every block `captions` writes; where:
    a stage folder, or "" for the top-level files (README.md and docs/). The captions are made together."""
    def caption_of(key):  # d caches what captions() reads, so making them all once per block is cheap
        return lambda d: captions(d)[key]
    out = [(os.path.dirname(readme), "caption-" + tag, caption_of((readme, tag))) for readme, tag in CAPTIONS]
    out += [("k0_fma", "ncu-k0", ncu_k0),
            ("k1_mmasync", "ncu-k1", lambda d: profile_table(d, K1_PROFILE, "k1_mmasync_bm128")),
            ("k2_tma_ws", "ncu-k2", lambda d: profile_table(d, K2_PROFILE, "k1_mmasync_bm128")),
            ("k2_tma_ws", "k2-over-k1", k2_against_k1)]
    k3 = {"ncu-k3": ncu_k3, "k3-steps": k3_steps, "k3-64row": k3_64row, "k3-pairs": k3_pairs,
          "k3-rows-dram": k3_rows_dram, "k3-tried": k3_tried,
          "k3-m256-ncu": lambda d: k3_trial_ncu(d, K3_M256_NCU),
          "k3-m256-k32-ncu": lambda d: k3_trial_ncu(d, K3_M256_K32_NCU),
          "k3-m256-k32-traces": k3_m256_k32_traces, "k3-fold-ncu": lambda d: k3_trial_ncu(d, K3_FOLD_NCU),
          "k3-streamk-ncu": lambda d: "\n\n".join(k3_trial_ncu(d, t) for t in K3_STREAMK_NCU),
          "k3-streamk-traces": k3_streamk_traces, "k3-stalls": k3_stalls, "k3-sms": k3_sms_scaling,
          "k3-l2-breakdown": k3_l2_breakdown, "k3-pairs-ncu": lambda d: k3_trial_ncu(d, K3_PAIRS_NCU),
          "k3-pingpong64-n128": k3_pingpong64_n128, "k3-fold-phases": k3_fold_phases,
          "k3-pingpong-ncu": k3_pingpong_ncu}
    return out + [("k3_wgmma", tag, make) for tag, make in k3.items()]


def write_blocks(d, check):
    """Every block into whichever file holds it (plots/readme_block.py). A block whose data fail to
    read is named on stderr and left as it is; the others are still written. Returns (blocks that
    would change, blocks that failed)."""
    stale = failed = 0
    for where, tag, make in blocks(d):
        try:
            text = make(d)
        except (OSError, subprocess.CalledProcessError, KeyError, StopIteration, ValueError, TypeError) as e:
            print(f"figdata.py: <!-- {tag} --> not written: {e!r}", file=sys.stderr)
            failed += 1
            continue
        paths = stage_files(where) if where else front_files()
        changed = replace_block(paths, tag, text, check)
        if changed is None:
            print(missing(tag, paths))
        stale += bool(changed and check)
    return stale, failed


def main():
    ap = argparse.ArgumentParser(description="Data and captions of the gnuplot figures.")
    ap.add_argument("what", choices=["data", "captions"])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--sweep", default=os.path.join(ROOT, "results", "h200", "sweep.csv"))
    ap.add_argument("--ncu")
    ap.add_argument("--kernels")
    ap.add_argument("--ggemm", default=os.path.join(ROOT, "build", "bin", "ggemm"))
    ap.add_argument("--check", action="store_true", help="captions: write nothing; exit 1 if a block would change")
    args = ap.parse_args()
    try:
        d = Data(args)
        if args.what == "data":
            if not args.out:
                ap.error("data needs OUT_DIR")
            data(d, args.out)
            return
    except (OSError, subprocess.CalledProcessError, KeyError, StopIteration, ValueError) as e:
        print(f"figdata.py: {e!r}", file=sys.stderr)
        sys.exit(2)
    stale, failed = write_blocks(d, args.check)
    sys.exit(2 if failed else 1 if stale else 0)


if __name__ == "__main__":
    main()
