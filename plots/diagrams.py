#!/usr/bin/env python3
"""The layout and pipeline diagrams of the worklog (results/figures/figNN-*.png).

usage: diagrams.py BIN_DIR OUT_DIR [--only NAME[,NAME...]]   (plots/diagrams.sh wraps it)

Every number drawn comes from the code: BIN_DIR/gg_layouts (plots/layouts.c) prints, with the
kernels' own functions compiled for the host, the tile list (common/problem.c, gg_adaptive.h),
the fragment layouts (gg_fragments.h), the swizzle (gg_swizzle.h), the mbarrier ring
(gg_pipeline.h) and the kernels' GgKernelInfo; fig13 also reads k3's registers and setmaxnreg
budgets from BIN_DIR/ggemm with cuobjdump; fig23 is k5_wgrad's work list as `ggemm tiles`
prints it (common/gg_wgrad.h), fig25 a k3 configuration's tiles per CTA as `ggemm tiles --kernel`
prints them (common/gg_schedule.h), fig27 the tiles' order of a wgrad list on a given L2
(gg_wgrad_k_first), fig28 a forward configuration's tiles beside its dgrad twin's (`ggemm tiles
--kernel k5_dgrad_*`), fig29 a dgrad configuration's items beside its split-tail kernel's (its
pieces: gg_tail_item). Prints one line per figure written, or one line
saying why a figure was skipped. Needs python3-matplotlib.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess

import matplotlib

import work_lists

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

DPI = 100
REG_COLORS = ["#8dd3c7", "#fdb462", "#bebada", "#fb8072"]  # registers / matrices 0..3
WARP_COLORS = ["#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6"]


def layout(bin_dir, *args):
    """Rows of `gg_layouts ARGS` as dicts of ints/floats (empty fields: None); '# k=v,...' → meta."""
    out = subprocess.run([os.path.join(bin_dir, "gg_layouts"), *map(str, args)], check=True,
                         capture_output=True, text=True).stdout
    meta, lines = {}, []
    for line in out.splitlines():
        if line.startswith("#"):
            meta.update(kv.split("=", 1) for kv in line[1:].strip().split(","))
        else:
            lines.append(line)

    def num(v):
        if v == "":
            return None
        try:
            return int(v)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return v
    rows = [{k: num(v) for k, v in r.items()} for r in csv.DictReader(lines)]
    return rows, meta


def cell(ax, x, y, text, color, w=1.0, h=1.0, fontsize=7, edge="black", lw=0.5, **kw):
    ax.add_patch(mpatches.Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, linewidth=lw, **kw))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def grid_axes(ax, cols, rows, xlabel, ylabel, title, xticks=None, yticks=None):
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks([t + 0.5 for t in (xticks if xticks is not None else range(cols))])
    ax.set_xticklabels([str(t) for t in (xticks if xticks is not None else range(cols))], fontsize=7)
    ax.set_yticks([t + 0.5 for t in (yticks if yticks is not None else range(rows))])
    ax.set_yticklabels([str(t) for t in (yticks if yticks is not None else range(rows))], fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)


def reg_legend(fig, label, **kw):
    handles = [mpatches.Patch(facecolor=REG_COLORS[r], edgecolor="black", label=label.format(r=r)) for r in range(4)]
    fig.legend(handles=handles, **kw)


# ---------------------------------------------------------------- fig04: ldmatrix
def fig_ldmatrix(bin_dir, out):
    addr, _ = layout(bin_dir, "ldmatrix", "addr")
    frag, _ = layout(bin_dir, "ldmatrix", "frag")
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 6.4), gridspec_kw={"width_ratios": [1, 2, 2]})
    ax = axes[0]
    for r in addr:  # one 8-element-wide cell per row address: (block row, chunk)
        cell(ax, r["chunk"], r["row"], f"lane {r['lane']}\nm{r['matrix']} row {r['matrix_row']}",
             REG_COLORS[r["matrix"]], fontsize=6.5)
    grid_axes(ax, 2, 16, "16-byte chunk of the row (8 bf16)", "row of the 16 x 16 block",
              "(a) who gives which row address\nlane L: row L % 8 of matrix L / 8")
    ax.set_aspect(0.5)
    for trans, ax in ((0, axes[1]), (1, axes[2])):
        for r in (f for f in frag if f["trans"] == trans):
            cell(ax, r["col"], r["row"], str(r["lane"]), REG_COLORS[r["reg"]], fontsize=6.5)
        if trans:
            grid_axes(ax, 16, 16, "n: column of the B slice (bf16)", "k: row of the B slice (smem is k x n)",
                      "(c) ldmatrix.x4.trans (B): the lane that receives each element\n"
                      "register r of lane L: column L / 4, rows 2 (L % 4), +1 of matrix r")
        else:
            grid_axes(ax, 16, 16, "k: column of the A slice (bf16)", "m: row of the A slice",
                      "(b) ldmatrix.x4 (A): the lane that receives each element\n"
                      "register r of lane L: row L / 4, columns 2 (L % 4), +1 of matrix r")
    reg_legend(fig, "matrix {r} -> register {r}", loc="lower center", ncol=4, fontsize=9)
    fig.suptitle("ldmatrix .x4 and .x4.trans as k1 and k2 use them (common/gg_fragments.h):\nfour 8 x 8 matrices "
                 "of one 16 x 16 bf16 block; lane L addresses row L % 16, chunk L / 16", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 0.93))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig05: mma.sync accumulator
def fig_mma(bin_dir, out):
    rows, _ = layout(bin_dir, "mma")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 9), gridspec_kw={"width_ratios": [1, 1.1]})
    for r in rows:
        cell(ax, r["col"], r["row"], f"L{r['lane']}\nr{r['reg']}", REG_COLORS[r["reg"]], fontsize=7.5)
    grid_axes(ax, 8, 16, "n: column of the m16n8 tile", "m: row of the m16n8 tile",
              "(a) the tile: which lane and register hold each element")
    for h in (0, 1):  # the epilogue's bf16x2 store pairs: registers 2h, 2h + 1 of one lane
        for r in (r for r in rows if r["reg"] == 2 * h):
            ax.add_patch(mpatches.Rectangle((r["col"], r["row"]), 2, 1, fill=False, edgecolor="black", linewidth=1.8))
    for r in rows:
        cell(bx, r["reg"], r["lane"], f"({r['row']}, {r['col']})", REG_COLORS[r["reg"]], fontsize=7)
    grid_axes(bx, 4, 32, "accumulator register of the lane", "lane",
              "(b) each lane's four registers: (row, column) of the tile")
    bx.set_aspect(0.35)
    reg_legend(fig, "register {r}", loc="lower center", ncol=4, fontsize=9)
    fig.suptitle("mma.sync m16n8k16 f32 accumulator (C/D) across the 32 lanes of a warp, as the k1/k2 epilogue "
                 "stores it (gg_mma_c_row / gg_mma_c_col)\nthick outline: registers 2h, 2h+1 of one lane = one 4-byte "
                 "bf16x2 store; rows 0-7 from registers 0,1, rows 8-15 from registers 2,3", fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.93))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig06: k1 pipeline
def fig_k1_pipeline(bin_dir, out):
    ev, meta = layout(bin_dir, "k1pipe", 5)
    stages = int(meta["stages"])
    fig, ax = plt.subplots(figsize=(16, 6.5))
    lanes = {"warps": 0}  # y rows: the block's warps, then one row per shared-memory stage
    for s in range(stages):
        lanes[s] = 1 + s
    style = {"issue": ("#969696", "cp.async issue + commit"), "wait": ("#fb8072", "cp.async.wait_group (stall)"),
             "barrier": ("#252525", "block barrier (__syncthreads)"), "compute": ("#80b1d3", "ldmatrix + mma.sync on the stage")}
    slice_end = {}
    for e in ev:
        if e["event"] in style and e["end"] > e["start"]:
            color, _ = style[e["event"]]
            ax.add_patch(mpatches.Rectangle((e["start"], 0.15), e["end"] - e["start"], 0.7, facecolor=color,
                                            edgecolor="black", linewidth=0.4))
            if e["event"] == "compute":
                ax.text((e["start"] + e["end"]) / 2, 0.5, f"slice {e['slice']}\nstage {e['stage']}", ha="center",
                        va="center", fontsize=8)
                slice_end[e["slice"]] = e["end"]
    landed = {}
    for e in ev:
        if e["event"] == "copy":
            y = lanes[e["stage"]]
            ax.add_patch(mpatches.Rectangle((e["start"], y + 0.15), e["end"] - e["start"], 0.7, facecolor="#fdb462",
                                            edgecolor="black", linewidth=0.4))
            ax.text((e["start"] + e["end"]) / 2, y + 0.5, f"slice {e['slice']} in flight\n(group {e['group']})",
                    ha="center", va="center", fontsize=8)
            landed[e["slice"]] = (e["end"], e["stage"])
    for s, (t, stage) in landed.items():  # resident from landing until its slice's MMAs are done
        y = lanes[stage]
        ax.add_patch(mpatches.Rectangle((t, y + 0.15), slice_end[s] - t, 0.7, facecolor="#b3de69",
                                        edgecolor="black", linewidth=0.4))
        ax.text((t + slice_end[s]) / 2, y + 0.5, f"slice {s} resident", ha="center", va="center", fontsize=8)
    for e in ev:
        if e["event"] == "empty_commit":
            ax.plot([e["start"]], [0.1], marker="v", color="black")
            ax.text(e["start"], -0.05, f"empty\ngroup {e['group']}", fontsize=8, ha="center", va="bottom")
    end = max(e["end"] for e in ev)
    ax.set_xlim(0, end + 0.3)
    ax.set_ylim(stages + 1, -0.45)  # the top margin holds the empty-group labels
    ax.set_yticks([0.5] + [lanes[s] + 0.5 for s in range(stages)])
    ax.set_yticklabels(["all 8 warps\n(copy + compute)"] + [f"shared stage {s}" for s in range(stages)])
    ax.set_xlabel(f"time (schematic: one slice's MMAs = 1 unit; a cp.async copy assumed to land {meta['latency']} "
                  "units after issue; not measured)")
    handles = [mpatches.Patch(facecolor=c, edgecolor="black", label=l) for c, l in style.values()]
    handles += [mpatches.Patch(facecolor="#fdb462", edgecolor="black", label="copy in flight (one commit group)"),
                mpatches.Patch(facecolor="#b3de69", edgecolor="black", label="landed, kept until its MMAs are done")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4, fontsize=9)
    ax.set_title(f"k1 ({meta['kernel']}): cp.async ring of STAGES = {stages}, BLOCK_K = {meta['block_k']}; slice kt "
                 f"uses stage kt % {stages}; wait_group<{stages - 1}>, barrier, MMAs, barrier, refill with slice "
                 f"kt + {stages}", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig09: swizzle
def fig_swizzle(bin_dir, out, phase_chunk=2):
    rows, _ = layout(bin_dir, "swizzle")
    fig, axes = plt.subplots(1, 3, figsize=(16, 6.2), gridspec_kw={"width_ratios": [1, 1, 1.1]})
    for ax, key, name in ((axes[0], "naive_group", "(a) unswizzled: 128-byte rows, row-major, no pad"),
                          (axes[1], "swizzled_group", "(b) 128B swizzle: chunk c of row r at c XOR (r % 8)")):
        for r in rows:
            hit = r["chunk"] == phase_chunk
            cell(ax, r[key], r["row"], f"c{r['chunk']}", "#fb8072" if hit else "#f0f0f0", fontsize=9,
                 lw=1.5 if hit else 0.5)
        grid_axes(ax, 8, 8, "16-byte slot in the row = bank group (banks 4g .. 4g+3)", "row (one 128-byte row each)",
                  name)
    width = 0.38
    for i, (key, label, color) in enumerate((("naive_group", "unswizzled", "#bdbdbd"),
                                             ("swizzled_group", "128B swizzle", "#fb8072"))):
        hits = [sum(1 for r in rows if r["chunk"] == phase_chunk and r[key] == g) for g in range(8)]
        axes[2].bar([g + (i - 0.5) * width for g in range(8)], hits, width, label=f"{label}: max {max(hits)} per group",
                    color=color, edgecolor="black")
    axes[2].set_xticks(range(8))
    axes[2].set_xlabel("bank group")
    axes[2].set_ylabel("row reads of the phase in that group")
    axes[2].set_title(f"(c) one ldmatrix phase: rows 0-7, logical chunk {phase_chunk}\n"
                      "8 reads in one group = 8 serialised wavefronts; 1 each = one", fontsize=10)
    axes[2].legend(fontsize=9)
    fig.suptitle(f"The 128-byte swizzle (gg_swizzle128, common/gg_swizzle.h) over one 1 KiB atom: cell = the logical "
                 f"16-byte chunk c stored there; red = the chunk ({phase_chunk}) the 8 row addresses of one ldmatrix "
                 "phase read", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig10: mbarrier ring
def fig_ring(bin_dir, out, stages=3, kblocks=8):
    rows, _ = layout(bin_dir, "ring", stages, kblocks)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(15, 10), gridspec_kw={"height_ratios": [1, 1.5]})
    # (a) the roles around one stage s
    ax.set_xlim(0, 14)
    ax.set_ylim(-0.1, 3.3)
    ax.axis("off")
    w, h = 3.0, 0.9
    boxes = {"producer": (0.3, 1.15, "producer\n(one thread issues TMA)", "#fdb462"),
             "full": (5.5, 2.3, "full[s]\nexpects the stage's bytes", "#b3de69"),
             "consumers": (10.7, 1.15, "consumers\n(MMA warps / warpgroups)", "#80b1d3"),
             "empty": (5.5, 0.0, "empty[s]\none arrive per consumer warp", "#fb8072")}
    for x, y, text, color in boxes.values():
        ax.add_patch(mpatches.FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.05", facecolor=color,
                                             edgecolor="black"))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=10)
    arrows = [((3.4, 1.95), (5.4, 2.75), "arrive.expect_tx;\nTMA bytes complete the phase"),
              ((8.6, 2.75), (10.6, 1.95), "wait(parity p):\nstage s is full"),
              ((10.6, 1.2), (8.6, 0.45), "after its MMAs:\narrive"),
              ((5.4, 0.45), (3.4, 1.2), "wait(parity p ^ 1):\nstage s is free")]
    for a, b, text in arrows:
        ax.annotate("", b, a, arrowprops={"arrowstyle": "-|>", "lw": 1.5})
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, text, fontsize=9, ha="center", va="center",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    ax.set_title("(a) one stage s of the ring: who arrives on and who waits for which barrier", fontsize=10)
    # (b) the ring unrolled over k-blocks, from GgPipe
    phase_colors = ["#deebf7", "#9ecae1"]
    for r in rows:
        x, y = r["kblock"], r["stage"]
        wait = f"producer waits\nempty parity {r['empty_parity']}" if r["producer_blocks"] else \
            f"empty parity {r['empty_parity']}:\nfresh, no wait"
        cell(bx, x, y, f"k-block {x}: use {r['use']}\nconsumers wait\nfull parity {r['full_parity']}\n{wait}",
             phase_colors[r["full_parity"]], fontsize=8)
        later = [q for q in rows if q["stage"] == y and q["kblock"] > x]
        if later:  # the stage's next use waits for this use's release
            bx.annotate("", (later[0]["kblock"] + 0.1, y + 0.12), (x + 0.9, y + 0.12),
                        arrowprops={"arrowstyle": "-|>", "color": "#cb181d", "connectionstyle": "arc3,rad=-0.12"})
    grid_axes(bx, kblocks, stages, "k-block (order of use, one GgPipe advance each)", "ring stage",
              "(b) successive uses of each stage (GgPipe: stage, phase); red: the refill waits for the previous "
              "use's release on empty[s]")
    bx.set_aspect("auto")
    handles = [mpatches.Patch(facecolor=phase_colors[p], edgecolor="black", label=f"full parity {p}") for p in (0, 1)]
    bx.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=9)
    fig.suptitle(f"The mbarrier ring of k2/k3 with {stages} stages over {kblocks} k-blocks "
                 "(common/gg_pipeline.h: gg_pipe_advance, gg_pipe_full_parity, gg_pipe_empty_parity)", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig12: wgmma accumulator
def fig_wgmma(bin_dir, out, n=64, zoom_rows=20, zoom_cols=16):
    rows, _ = layout(bin_dir, "wgmma", n)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 7.6), gridspec_kw={"width_ratios": [1, 1]})
    block = {}
    for r in rows:
        ax.add_patch(mpatches.Rectangle((r["col"], r["row"]), 1, 1, facecolor=WARP_COLORS[r["warp"]], linewidth=0))
        block.setdefault((r["row"] // 8, r["col"] // 8), set()).add(r["reg"])
    for (by, bxx), regs in block.items():  # every 8 x 8 block is one register pair of every lane of one warp
        ax.text(bxx * 8 + 4, by * 8 + 4, "d" + ",".join(map(str, sorted(regs))), ha="center", va="center", fontsize=7)
    for v in range(0, n + 1, 8):
        ax.axvline(v, color="black", linewidth=0.4)
    for h in range(0, 65, 8):
        ax.axhline(h, color="black", linewidth=0.4 if h % 16 else 1.5)
    ax.set_xlim(0, n)
    ax.set_ylim(64, 0)
    ax.set_aspect("equal")
    ax.set_xlabel(f"n: column of the m64n{n} accumulator")
    ax.set_ylabel("m: row")
    ax.set_title(f"(a) N = {n}: warp w owns rows 16w..16w+15;\neach 8 x 8 block = registers d(i), d(i+1) of its 32 "
                 "lanes", fontsize=10)
    handles = [mpatches.Patch(facecolor=WARP_COLORS[w], label=f"warp {w} (threads {32 * w}-{32 * w + 31})")
               for w in range(4)]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=9)
    for r in (r for r in rows if r["row"] < zoom_rows and r["col"] < zoom_cols):
        cell(bx, r["col"], r["row"], f"T{r['thread']}\nd{r['reg']}", WARP_COLORS[r["warp"]], fontsize=6)
    grid_axes(bx, zoom_cols, zoom_rows, "n: column", "m: row",
              f"(b) rows 0-{zoom_rows - 1}, columns 0-{zoom_cols - 1}: thread T and register d holding each element\n"
              "d(i): row 16 warp + lane / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (lane % 4) + i % 2")
    fig.suptitle(f"wgmma m64nNk16 f32 accumulator D across the 128 threads of a warpgroup (N / 2 = {n // 2} registers "
                 "per thread here),\nas k3's epilogue reads it (gg_wgmma_d_row / gg_wgmma_d_col)", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.93))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig13: k3 roles
def cuobjdump_path(bin_dir):
    found = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if found:
        return found
    cache = os.path.join(bin_dir, os.pardir, "CMakeCache.txt")  # tests/CMakeLists.txt looks it up at configure
    if os.path.exists(cache):
        for line in open(cache):
            if line.startswith("GG_CUOBJDUMP:") and not line.rstrip().endswith("NOTFOUND"):
                return line.split("=", 1)[1].strip()
    return None


def k3_registers(tool, binary):
    """From the k3_wgmma kernels of the binary (all instances must agree): the registers ptxas
    gave each thread at launch (-res-usage REG) and the setmaxnreg budgets (USETMAXREG in the SASS)."""
    def k3_values(flag, pattern):
        text = subprocess.run([tool, flag, binary], check=True, capture_output=True, text=True).stdout
        found, k3 = {}, False
        for line in text.splitlines():
            if "Function" in line:
                k3 = "_ZN2k3" in line  # the k3 steps' kernels live in namespace k3
            for m in re.finditer(pattern, line) if k3 else ():
                found.setdefault(m.group(1), set()).add(int(m.group(2), 0))
        return found
    regs = k3_values("-res-usage", r"(REG):(\d+)")
    budgets = k3_values("-sass", r"USETMAXREG\.(DEALLOC|TRY_ALLOC)\S*\s+(?:\w+,\s*)?(0x[0-9a-f]+)")
    values = {"launch": regs.get("REG"), "producer": budgets.get("DEALLOC"), "consumer": budgets.get("TRY_ALLOC")}
    if any(v is None or len(v) != 1 for v in values.values()):
        raise SystemExit(f"fig13: the k3_wgmma kernels disagree on registers or setmaxnreg (or have none): {values}")
    return {k: v.pop() for k, v in values.items()}


def fig_k3_roles(bin_dir, out, kernel="k3_wgmma"):
    tool = cuobjdump_path(bin_dir)
    if not tool:
        return "skipped: cuobjdump not found for the register budgets (pip install nvidia-cuda-cuobjdump)"
    info, _ = layout(bin_dir, "kernel", kernel)
    num = info[0]
    regs = k3_registers(tool, os.path.join(bin_dir, "ggemm"))
    wg = 128  # threads per warpgroup (hardware)
    groups = num["threads"] // wg
    a_rows = num["block_m"] or 128  # block_m 0 = adaptive 128/64: the A box holds 128 rows (gg_adaptive.h)
    stage_bytes = (a_rows * num["block_k"] + num["block_k"] * num["block_n"]) * 2
    ring = num["stages"] * stage_bytes
    rest = num["dynamic_smem"] - ring

    fig, (ax, rx, sx) = plt.subplots(1, 3, figsize=(16, 7.5), gridspec_kw={"width_ratios": [1.5, 1, 1.1]})
    ax.set_xlim(0, 10)
    ax.set_ylim(0, groups * 2.2 + 0.5)
    ax.axis("off")
    for g in range(groups):
        y = (groups - 1 - g) * 2.2 + 0.5
        producer = g == 0
        text = (f"warpgroup {g}: producer (threads {g * wg}-{g * wg + wg - 1})\n"
                f"one thread issues the TMA loads into the ring\nsetmaxnreg.dec -> {regs['producer']} registers / thread"
                ) if producer else \
               (f"warpgroup {g}: consumer {g - 1} (threads {g * wg}-{g * wg + wg - 1})\n"
                f"wgmma m64n{num['block_n']}k16: rows {64 * (g - 1)}-{64 * g - 1} of a 128-row tile,\n"
                f"a share of the columns of a 64-row tile; then the epilogue\n"
                f"setmaxnreg.inc -> {regs['consumer']} registers / thread")
        ax.add_patch(mpatches.FancyBboxPatch((0.2, y), 9.6, 1.7, boxstyle="round,pad=0.05",
                                             facecolor="#fdb462" if producer else "#80b1d3", edgecolor="black"))
        ax.text(5, y + 0.85, text, ha="center", va="center", fontsize=10)
    ax.set_title(f"(a) {kernel}: {num['threads']} threads = {groups} warpgroups, persistent, one CTA per SM",
                 fontsize=10)

    total_regs = 65536  # register file per SM on sm_90
    launch = num["threads"] * regs["launch"]
    rx.bar(0, launch, 0.6, color="#d9d9d9", edgecolor="black")
    rx.text(0, launch / 2, f"{num['threads']} threads\nx {regs['launch']}", ha="center", va="center", fontsize=9)
    after = [("producer", regs["producer"], "#fdb462")] + \
            [(f"consumer {c}", regs["consumer"], "#80b1d3") for c in range(groups - 1)]
    bottom = 0
    for name, per_thread, color in after:
        rx.bar(1, wg * per_thread, 0.6, bottom=bottom, color=color, edgecolor="black")
        rx.text(1, bottom + wg * per_thread / 2, f"{name}\n128 x {per_thread}", ha="center", va="center", fontsize=9)
        bottom += wg * per_thread
    rx.axhline(total_regs, color="red", linestyle="--", label=f"register file: {total_regs} per SM")
    rx.set_xticks([0, 1])
    rx.set_xticklabels(["at launch\n(ptxas)", "after setmaxnreg"])
    rx.set_ylabel("32-bit registers per CTA")
    rx.set_ylim(0, total_regs * 1.12)
    rx.legend(loc="upper center", fontsize=9)
    rx.set_title(f"(b) registers: {launch} at launch, {bottom} after setmaxnreg\n"
                 "(from the binary: REG and USETMAXREG)", fontsize=10)

    parts = [(f"stage {s}: A {a_rows}x{num['block_k']} + B {num['block_k']}x{num['block_n']}", stage_bytes,
              "#b3de69" if s % 2 else "#ccebc5") for s in range(num["stages"])]
    parts.append(("epilogue staging\n+ 1 KiB alignment slack", rest, "#fb8072"))
    bottom = 0
    for name, b, color in parts:
        sx.bar(0, b / 1024, 0.6, bottom=bottom / 1024, color=color, edgecolor="black")
        sx.text(0.35, (bottom + b / 2) / 1024, f"{name}: {b / 1024:.0f} KiB", va="center", fontsize=9)
        bottom += b
    sx.set_xlim(-0.4, 2.8)
    sx.set_xticks([])
    sx.set_ylabel("KiB of dynamic shared memory per CTA")
    sx.set_title(f"(c) shared memory: a ring of {num['stages']} stages (bf16),\n"
                 f"{num['dynamic_smem']} B dynamic", fontsize=10)
    fig.suptitle(f"k3 warp specialisation: one producer and {groups - 1} consumer warpgroups "
                 f"(from {kernel}'s GgKernelInfo and the k3 SASS)", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out, dpi=DPI)
    return None


# ---------------------------------------------------------------- fig02: the tile list
def fig_tile_list(bin_dir, out, tokens=1024, experts=16, skew=1.2):
    tiles, meta = layout(bin_dir, "tiles", tokens, experts, skew)
    policies = [(128, "BM = 128"), (64, "BM = 64"), ("adaptive", "adaptive 128/64 (k3)")]
    fig, axes = plt.subplots(1, len(policies), figsize=(13, 6.5), sharey=True)
    colors = plt.cm.tab20.colors
    tallest = 0
    for ax, (policy, name) in zip(axes, policies):
        y = 0
        mine = [t for t in tiles if t["policy"] == policy]
        for t in mine:  # scheduled rows stacked in list order: valid rows, then the padding
            ax.add_patch(mpatches.Rectangle((0, y), 1, t["rows"], facecolor=colors[t["expert"] % 20],
                                            edgecolor="black", linewidth=0.6))
            if t["height"] > t["rows"]:
                ax.add_patch(mpatches.Rectangle((0, y + t["rows"]), 1, t["height"] - t["rows"], facecolor="white",
                                                edgecolor="black", hatch="///", linewidth=0.6))
            y += t["height"]
        tallest = max(tallest, y)
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        ax.set_title(f"{name}\n{len(mine)} row tiles, eta = {float(meta[f'eta_{policy}']):.3f}", fontsize=10)
    axes[0].set_ylim(tallest, 0)  # shared: the first expert at the top
    axes[0].set_ylabel("scheduled rows (each band: one expert's row tiles, in list order)")
    handles = [mpatches.Patch(facecolor=colors[0], edgecolor="black", label="valid rows (colour = expert)"),
               mpatches.Patch(facecolor="white", edgecolor="black", hatch="///",
                              label="padding: computed, never stored")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=9)
    fig.suptitle(f"The flat expert-major tile list (gg_build_tiles, gg_adaptive_m_tiles): {experts} experts, {tokens} "
                 f"rows, skew {skew}\nm_e = {meta['m_e'].replace(' ', ', ')}", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig20: k4's gate/up pairing
GATE, UP, H = "#a6cee3", "#fdbf6f", "#b2df8a"


def fig_glu(bin_dir, out, f=768):
    rows, _ = layout(bin_dir, "glu", f)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(16, 6.6), gridspec_kw={"height_ratios": [1, 2.2]})
    width, panel = len(rows), 64
    for r in rows:
        ax.add_patch(mpatches.Rectangle((r["packed_col"], 0), 1, 1, facecolor=UP if r["up"] else GATE, linewidth=0))
    for p in range(width // panel):
        part = rows[p * panel:(p + 1) * panel]
        lo, hi, up = min(r["src_col"] for r in part), max(r["src_col"] for r in part), part[0]["up"]
        name = f"up: W1 columns F+{lo - f}..F+{hi - f}" if up else f"gate: W1 columns {lo}..{hi}"
        ax.text(p * panel + panel / 2, 0.5, f"{name}\n(pair {part[0]['pair']})", ha="center", va="center", fontsize=9)
        ax.axvline(p * panel, color="black", linewidth=1)
    ax.set_xlim(0, width)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xticks(range(0, width + 1, 32))
    ax.set_xlabel("column of the first 256-column block of the packed W1 (one fused GEMM1 tile: 128 H columns)")
    ax.set_title(f"(a) k4_pack_w1 (k4_packed_w1_column), F = {f}: 64-column panels alternate gate and up", fontsize=10)
    # (b) thread 0, accumulator row 0: each gate register and its up register, 32 apart, and where h goes
    held = {r["reg_thread0"]: r for r in rows if r["reg_thread0"] >= 0}
    gates = sorted(reg for reg, r in held.items() if not r["up"])
    for k, reg in enumerate(gates):
        g, u = held[reg], held[reg + 32]
        assert u["src_col"] == g["src_col"] + f, "the up register must hold the gate column's partner"
        cell(bx, k, 0, f"d{reg}\n{g['src_col']}", GATE, fontsize=6)
        cell(bx, k, 1, f"d{reg + 32}\nF+{u['src_col'] - f}", UP, fontsize=6)
        cell(bx, k, 2, f"d{reg - 32 * g['pair']}\nH {g['src_col']}", H, fontsize=6)
    grid_axes(bx, len(gates), 3, "gate/up register pairs of thread 0 (warp 0, lane 0) in accumulator row 0",
              "", "(b) in the m64n256 accumulator a gate column and its up column sit 32 registers apart in the "
              "same thread;\nh = silu(gate) * up lands in register 32 pair + i, the layout the epilogue stores "
              "(64 H columns per pair)", yticks=[])
    bx.set_yticks([0.5, 1.5, 2.5])
    bx.set_yticklabels(["gate: d(i), W1 col", "up: d(i+32), W1 col", "h: register, H col"], fontsize=8)
    bx.set_xticks([])
    fig.suptitle("k4_gemm1_swiglu: SwiGLU in the accumulator registers, from the packing and the wgmma D layout "
                 "(gg_layouts glu)", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig23: k5_wgrad's work list
WGRAD_EXAMPLE = dict(m_list="3000,1400,600,200,64,3,0,1", k=256, n=384, sms=16)


def wgrad_item_bars(ax, items, colors, labels=False, cross=9):
    """A wgrad work list on ax, one row per CTA: each item a bar over its blocks, coloured by
    expert, hatched if split (labelled when long enough and `labels`), an empty expert's item a
    cross (nothing loaded, zeros stored)."""
    for it in items:
        color = colors[it["expert"] % 10]
        if it["rows"] == 0:
            ax.plot(it["start"], it["cta"] + 0.5, marker="x", color=color, markersize=cross, mew=2)
            continue
        split = it["splits"] > 1
        ax.add_patch(mpatches.Rectangle((it["start"], it["cta"] + 0.1), it["end"] - it["start"], 0.8, facecolor=color,
                                        edgecolor="black", linewidth=0.6, hatch="///" if split else None))
        if labels and it["end"] - it["start"] >= 4:
            label = f"e{it['expert']} t{it['tile']}" + (f" s{it['split']}" if split else "")
            ax.text((it["start"] + it["end"]) / 2, it["cta"] + 0.5, label, ha="center", va="center", fontsize=7,
                    bbox=dict(facecolor="white", edgecolor="none", pad=0.5, alpha=0.8))


def fig_wgrad_list(bin_dir, out, m_list=WGRAD_EXAMPLE["m_list"], k=WGRAD_EXAMPLE["k"], n=WGRAD_EXAMPLE["n"],
                   sms=WGRAD_EXAMPLE["sms"]):
    meta, items = work_lists.tiles(os.path.join(bin_dir, "ggemm"), "--pass", "wgrad", "--m-list", m_list, "--k", k,
                                   "--n", n, "--sms", sms)
    grid, chunk = int(meta["grid"]), int(meta["chunk"])
    colors = plt.cm.tab10.colors
    fig, ax = plt.subplots(figsize=(13, 6.8))
    wgrad_item_bars(ax, items, colors, labels=True)
    tickets = {}  # the fix-up: on the split that ends last (fixup_cta), where the partials are added
    for it in items:
        if it["splits"] > 1 and it["cta"] == it["fixup_cta"]:
            best = tickets.get(it["ticket"])
            tickets[it["ticket"]] = it if best is None or it["end"] >= best["end"] else best
    for it in tickets.values():
        ax.plot(it["end"], it["cta"] + 0.5, marker="*", color="black", markersize=13)
    width = max(it["end"] for it in items)
    ax.set_xlim(-0.5, width + 1)
    ax.set_ylim(grid, 0)
    ax.set_yticks([c + 0.5 for c in range(grid)])
    ax.set_yticklabels([str(c) for c in range(grid)], fontsize=8)
    ax.set_xlabel(f"reduction work in the CTA's order, in {meta['block_r']}-row blocks (one ring stage each; "
                  "a count of work, not a measured time)")
    ax.set_ylabel("CTA (blockIdx.x): item t runs on CTA t mod grid")
    experts = len(meta["m_e"].split())
    handles = [mpatches.Patch(facecolor=colors[e % 10], edgecolor="black", label=f"expert {e}: {m} rows")
               for e, m in enumerate(meta["m_e"].split())]
    handles += [mpatches.Patch(facecolor="white", edgecolor="black", hatch="///",
                               label=f"split item: equal splits of at most {chunk} blocks, fp32 partial + ticket"),
                plt.Line2D([], [], marker="*", color="black", linestyle="", markersize=12,
                           label="fix-up: the last ticket adds the partials in split order"),
                plt.Line2D([], [], marker="x", color="gray", linestyle="", markersize=9, mew=2,
                           label="empty expert: zeros stored, nothing loaded")]
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    tiles = sum(1 for it in items if it["expert"] == 0 and it["split"] == 0)
    ax.set_title(f"k5_wgrad's work list (gg_wgrad_params, gg_wgrad_at; printed by `ggemm tiles --pass wgrad`)\n"
                 f"{experts} experts, k {k} x n {n} in {meta['tile_m']} x {meta['tile_n']} tiles = {tiles} per expert, "
                 f"{sms} SMs -> grid {grid},\nchunk {chunk} blocks: {meta['items']} items, {meta['split_tiles']} split "
                 f"tiles (one fix-up each), {meta['slots']} fp32 partial slots", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig26: the two deals of one list
def fig_wgrad_deal(bin_dir, out, ex=dict(WGRAD_EXAMPLE, sms=8)):
    """One work list (fig23's, on fewer SMs) dealt by the round robin and by the dynamic deal, as
    `ggemm tiles --kernel` lists them for two kernels of the same tile (gg_wgrad_deal's model)."""
    kernels = (("k5_wgrad_pingpong", "round robin: item t on CTA t mod grid"),
               ("k5_wgrad_pingpong_dyn", "dynamic deal: the next item to the CTA whose draw comes first"))
    colors = plt.cm.tab10.colors
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6), sharey=True)
    for ax, (kernel, what) in zip(axes, kernels):
        meta, items = work_lists.tiles(os.path.join(bin_dir, "ggemm"), "--kernel", kernel, "--m-list", ex["m_list"],
                                       "--k", ex["k"], "--n", ex["n"], "--sms", ex["sms"])
        grid = int(meta["grid"])
        wgrad_item_bars(ax, items, colors, cross=8)
        ends = [max([it["end"] for it in items if it["cta"] == c] or [0]) for c in range(grid)]
        mean = sum(ends) / grid
        ax.axvline(max(ends), color="black", linestyle="-", linewidth=1)
        ax.axvline(mean, color="gray", linestyle="--", linewidth=1)
        ax.set_title(f"`{kernel}`: {what}\nbusiest CTA {max(ends)} blocks, mean {mean:.1f} "
                     f"({max(ends) / mean:.2f}x)", fontsize=9)
        ax.set_xlim(-0.5, max(ends) + 2)
        ax.set_ylim(grid, 0)
        ax.set_yticks([c + 0.5 for c in range(grid)])
        ax.set_yticklabels([str(c) for c in range(grid)], fontsize=8)
        ax.set_xlabel(f"reduction work in the CTA's order, in {meta['block_r']}-row blocks (a count, not a time)")
    axes[0].set_ylabel("CTA")
    handles = [mpatches.Patch(facecolor=colors[e % 10], edgecolor="black", label=f"expert {e}: {m} rows")
               for e, m in enumerate(meta["m_e"].split())]
    handles += [mpatches.Patch(facecolor="white", edgecolor="black", hatch="///", label="split item"),
                plt.Line2D([], [], marker="x", color="gray", linestyle="", markersize=8, mew=2, label="empty expert"),
                plt.Line2D([], [], color="black", label="busiest CTA's end"),
                plt.Line2D([], [], color="gray", linestyle="--", label="mean CTA's end")]
    axes[1].legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.suptitle(f"One wgrad work list, two deals ({ex['sms']} SMs; gg_wgrad_deal, printed by `ggemm tiles --kernel`)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig27: the tiles' order inside an expert
ORDER_EXAMPLE = dict(m_list="400,1500,3000", k=768, n=2304, l2_mib=8, sms=4)


def fig_wgrad_order(bin_dir, out, ex=ORDER_EXAMPLE):
    """Each expert's tiles numbered in the order the list visits them, as `ggemm tiles --l2-mib`
    gives it (gg_wgrad_order, gg_wgrad_k_first): one expert in each of three of the rule's four
    cases (the fourth, dC_e staying and A_e not, needs k wider than n), on an L2 small enough
    that they fall on a few thousand rows."""
    meta, items = work_lists.tiles(os.path.join(bin_dir, "ggemm"), "--kernel", "k5_wgrad_m256_dyn", "--m-list",
                                   ex["m_list"], "--k", ex["k"], "--n", ex["n"], "--l2-mib", ex["l2_mib"],
                                   "--sms", ex["sms"])
    m_e = [int(m) for m in meta["m_e"].split()]
    dc_rows, a_rows, grid = int(meta["dc_stays_rows"]), int(meta["a_stays_rows"]), int(meta["grid"])
    k_blocks = max(it["k_block"] for it in items) + 1
    n_blocks = max(it["n_block"] for it in items) + 1
    fig, axes = plt.subplots(len(m_e), 1, figsize=(12, 2.3 * len(m_e) + 1.2))
    for e, (ax, m) in enumerate(zip(axes, m_e)):
        order = [it for it in items if it["expert"] == e and it["split"] == 0]  # list order inside the expert
        k_first = len(order) > 1 and order[1]["k_block"] != order[0]["k_block"]
        for i, it in enumerate(order):
            x, y = it["n_block"], it["k_block"]
            cell(ax, x, y, str(i), plt.cm.Blues(0.15 + 0.7 * (i // grid) / max(1, (len(order) - 1) // grid)),
                 fontsize=8)
        path = [(it["n_block"] + 0.2, it["k_block"] + 0.8) for it in order]  # beside the numbers
        ax.plot(*zip(*path), color="#d95f02", linewidth=1, alpha=0.7)
        dc, a = m <= dc_rows, m <= a_rows
        stays = {(True, True): "both sweeps stay", (False, True): "A_e's sweep stays, dC_e's does not",
                 (True, False): "dC_e's sweep stays, A_e's does not", (False, False): "neither sweep stays"}[(dc, a)]
        why = "the bytes tie, n block first kept" if dc and a else "it reads fewer DRAM bytes"
        grid_axes(ax, n_blocks, k_blocks, f"n block ({meta['tile_n']} columns of dB_e)",
                  f"k block ({meta['tile_m']} rows of dB_e)",
                  f"expert {e}, m_e = {m}: {stays}; {'k' if k_first else 'n'} block first ({why})")
    fig.suptitle(f"The tiles' order inside an expert (gg_wgrad_k_first; `ggemm tiles --kernel k5_wgrad_m256_dyn "
                 f"--m-list {ex['m_list']} --k {ex['k']} --n {ex['n']} --l2-mib {ex['l2_mib']} --sms {ex['sms']}`)\n"
                 f"half the L2 holds dC_e's sweep up to {dc_rows} rows and A_e's up to {a_rows}; numbers: the visit "
                 f"order, each shade a wave of {grid} CTAs in flight; the line follows the list", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig25: how the static stride deals B
FORWARD_EXAMPLE = dict(tokens=1536, experts=12, k=64, n=1024, sms=12)


def fig_forward_deal(bin_dir, out, ex=FORWARD_EXAMPLE):
    kernels = ("k3_wgmma_pingpong_m128_n192", "k3_wgmma_coop_m128_n256")
    colors = plt.cm.tab20.colors
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=True)
    for ax, kernel in zip(axes, kernels):
        meta, tiles = work_lists.tiles(os.path.join(bin_dir, "ggemm"), "--kernel", kernel,
                                       *(x for key, v in ex.items() for x in (f"--{key}", v)))
        grid, block_n = int(meta["grid"]), int(meta["block_n"])
        ends = {}
        for t in tiles:
            narrow = t["width"] < block_n
            ax.add_patch(mpatches.Rectangle((t["start"], t["cta"] + 0.1), t["end"] - t["start"], 0.8,
                                            facecolor=colors[t["expert"] % 20], edgecolor="black", linewidth=0.5,
                                            hatch="///" if narrow else None))
            if t["end"] - t["start"] >= 128:
                ax.text((t["start"] + t["end"]) / 2, t["cta"] + 0.5, f"e{t['expert']} c{t['col0'] // block_n}",
                        ha="center", va="center", fontsize=7)
            ends[t["cta"]] = t["end"]
        share = max(ends.values()) * len(ends) / sum(ends.values())
        ax.set_xlim(0, max(ends.values()) * 1.02)
        ax.set_ylim(grid, 0)
        ax.set_yticks([c + 0.5 for c in range(grid)])
        ax.set_yticklabels([str(c) for c in range(grid)], fontsize=8)
        ax.set_xlabel("columns of B loaded, in the CTA's order (each tile reads K rows of its valid columns;\n"
                      "a count, not a measured time)")
        ax.set_title(f"{kernel}: {block_n} wide, {len(tiles)} tiles on {grid} CTAs\n"
                     f"B share (busiest CTA's columns over the mean) = {share:.3f}", fontsize=10)
    axes[0].set_ylabel("CTA (blockIdx.x): tile t runs on CTA t mod grid")
    handles = [mpatches.Patch(facecolor="white", edgecolor="black", hatch="///",
                              label="narrow tile: the last column block, N not a multiple of BLOCK_N"),
               mpatches.Patch(facecolor=colors[0], edgecolor="black", label="colour: the expert (eE cC: its column block)")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8)
    fig.suptitle(f"How the static stride deals B (`ggemm tiles --kernel`): {ex['experts']} experts of "
                 f"{ex['tokens'] // ex['experts']} rows, N = {ex['n']}, {ex['sms']} SMs", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    fig.savefig(out, dpi=DPI)



# ---------------------------------------------------------------- fig28: dgrad's tiles against the forward's
# k < n in the forward is dgrad's wider output: at equal width, twice the tiles, each half as long.
DGRAD_EXAMPLE = dict(tokens=1536, experts=12, k=1024, n=512, sms=12)


def kblock_bars(ax, items, grid, block_n):
    """`ggemm tiles --kernel` rows per CTA, each a bar over the k-blocks it reduces (kb0..kb1) in the CTA's order:
    a whole tile ends in its epilogue (a thick tick), a piece of a split tile (hatched) in its fp32 partial (a
    thin one)."""
    done, pieces = {}, {}
    for it in items:
        pieces[it["tile"]] = pieces.get(it["tile"], 0) + 1
    for it in items:
        x, span = done.get(it["cta"], 0), it["kb1"] - it["kb0"]
        piece = pieces[it["tile"]] > 1
        ax.add_patch(mpatches.Rectangle((x, it["cta"] + 0.1), span, 0.8, facecolor=plt.cm.tab20.colors[it["expert"] % 20],
                                        edgecolor="black", linewidth=0.5, hatch="//" if piece else None))
        ax.plot([x + span] * 2, [it["cta"] + 0.02, it["cta"] + 0.98], color="black", linewidth=0.8 if piece else 2.2)
        label = f"t{it['tile']} k{it['kb0']}-{it['kb1']}" if piece else f"e{it['expert']} c{it['col0'] // block_n}"
        ax.text(x + span / 2, it["cta"] + 0.5, label, ha="center", va="center", fontsize=7,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.5) if piece else None)
        done[it["cta"]] = x + span
    ax.set_ylim(grid, 0)
    ax.set_yticks([c + 0.5 for c in range(grid)])
    ax.set_yticklabels([str(c) for c in range(grid)], fontsize=8)
    ax.set_ylabel("CTA")


def fig_dgrad_tiles(bin_dir, out, ex=DGRAD_EXAMPLE):
    """The same MACs as the forward's tiles and as dgrad's, both 128 x 256 (k3's coop_m128_n256 and its
    dgrad configuration), per CTA as `ggemm tiles --kernel` lists them: each tile a bar as long as the
    k-blocks it reduces, each ending in its epilogue (a tick)."""
    kernels = ("k3_wgmma_coop_m128_n256", "k5_dgrad_coop_m128_n256")
    colors = plt.cm.tab20.colors
    fig, axes = plt.subplots(2, 1, figsize=(12, 6.4), sharex=True)
    for ax, kernel in zip(axes, kernels):
        meta, tiles = work_lists.tiles(os.path.join(bin_dir, "ggemm"), "--kernel", kernel,
                                       *(x for key, v in ex.items() for x in (f"--{key}", v)))
        grid, block_n, dgrad = int(meta["grid"]), int(meta["block_n"]), meta["pass"] == "dgrad"
        k_blocks = tiles[0]["kb1"]  # the reduction's: n for dgrad, k forward (no tile is split)
        kblock_bars(ax, tiles, grid, block_n)
        width = "k" if dgrad else "n"
        ax.set_title(f"{kernel} ({'dgrad, dA = dC B_e^T' if dgrad else 'forward, C = A B_e'}): output {width} = "
                     f"{meta[width]} wide in {block_n}-wide tiles, reduction {k_blocks} k-blocks per tile; "
                     f"{len(tiles)} tiles, {len(tiles)} epilogues", fontsize=10)
    axes[1].set_xlabel("k-blocks reduced, in each CTA's order (a count of work, not a measured time); "
                       "a thick tick: the tile's epilogue, its C or dA tile stored")
    handles = [mpatches.Patch(facecolor=colors[0], edgecolor="black", label="colour: the expert (eE cC: its column block)")]
    fig.legend(handles=handles, loc="lower center", fontsize=8)
    fig.suptitle(f"The same MACs, twice the epilogues: {ex['experts']} experts of {ex['tokens'] // ex['experts']} rows, "
                 f"k = {ex['k']}, n = {ex['n']}, {ex['sms']} SMs (`ggemm tiles --kernel`)", fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    fig.savefig(out, dpi=DPI)


# ---------------------------------------------------------------- fig29: dgrad's last wave in pieces
# 28 tiles on 12 SMs: two full waves, then 4 tiles, each cut into 3 pieces of 10 or 11 k-blocks.
TAIL_EXAMPLE = dict(tokens=896, experts=7, k=1024, n=2048, sms=12)


def fig_dgrad_tail(bin_dir, out, ex=TAIL_EXAMPLE):
    """Step 2's dgrad and its split-tail kernel (k5_dgrad_tail.cu) on a shape whose last wave is a third
    full, per CTA as `ggemm tiles --kernel` lists them: each item a bar over the k-blocks it reduces
    (kb0..kb1), a whole tile ending in its epilogue (a thick tick), a piece in its fp32 partial (a thin
    one); one piece of each tile, whichever arrives last, adds the partials and stores the tile."""
    kernels = ("k5_dgrad_coop_m128_n256", "k5_dgrad_tail_m128_n256")
    colors = plt.cm.tab20.colors
    fig, axes = plt.subplots(2, 1, figsize=(12, 6.4), sharex=True)
    for ax, kernel in zip(axes, kernels):
        meta, items = work_lists.tiles(os.path.join(bin_dir, "ggemm"), "--kernel", kernel,
                                       *(x for key, v in ex.items() for x in (f"--{key}", v)))
        grid, block_n, splits = int(meta["grid"]), int(meta["block_n"]), int(meta["splits"])
        kblock_bars(ax, items, grid, block_n)
        ax.set_title(f"{kernel}: {meta['tiles']} tiles on {grid} CTAs, "
                     + (f"the last wave's tiles in {splits} pieces each ({len(items)} items)" if splits > 1
                        else "the last wave a whole tile long"), fontsize=10)
    axes[1].set_xlabel("k-blocks reduced, in each CTA's order (a count of work, not a measured time); thick tick: "
                       "a tile stored; thin: a piece's fp32 partial written")
    handles = [mpatches.Patch(facecolor=colors[0], edgecolor="black", label="colour: the expert (eE cC: its column block)"),
               mpatches.Patch(facecolor="white", edgecolor="black", hatch="//", label="a piece of tile tT, k-blocks a-b")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8)
    fig.suptitle(f"dgrad's last wave in pieces: {ex['experts']} experts of {ex['tokens'] // ex['experts']} rows, "
                 f"k = {ex['k']}, n = {ex['n']}, {ex['sms']} SMs (`ggemm tiles --kernel`; gg_tail_splits)", fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "fig02-tile-list.png": fig_tile_list,
    "fig04-ldmatrix.png": fig_ldmatrix,
    "fig05-mma-accumulator.png": fig_mma,
    "fig06-k1-pipeline.png": fig_k1_pipeline,
    "fig09-swizzle.png": fig_swizzle,
    "fig10-mbarrier-ring.png": fig_ring,
    "fig12-wgmma-accumulator.png": fig_wgmma,
    "fig13-k3-roles.png": fig_k3_roles,
    "fig20-k4-glu-pairing.png": fig_glu,
    "fig23-wgrad-work-list.png": fig_wgrad_list,
    "fig25-k3-forward-deal.png": fig_forward_deal,
    "fig26-wgrad-deal.png": fig_wgrad_deal,
    "fig27-wgrad-order.png": fig_wgrad_order,
    "fig28-dgrad-tiles.png": fig_dgrad_tiles,
    "fig29-dgrad-tail.png": fig_dgrad_tail,
}


def main():
    ap = argparse.ArgumentParser(description="Redraw the layout and pipeline diagrams.")
    ap.add_argument("bin_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--only", help="comma-separated figure names (default: all)")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        ap.error(f"unknown figure(s) {', '.join(unknown)}; known: {', '.join(FIGURES)}")
    os.makedirs(a.out_dir, exist_ok=True)
    for name in names:
        out = os.path.join(a.out_dir, name)
        draw = FIGURES[name]
        skipped = draw(a.bin_dir, out)
        plt.close("all")
        print(f"== figure {name}: {skipped}" if skipped else f"== figure: {out}")


if __name__ == "__main__":
    main()
