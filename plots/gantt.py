#!/usr/bin/env python3
"""Per-SM Gantt chart of a `ggemm trace` (trace.csv): SMs on y, microseconds from the kernel's
start on x, one bar per tile, coloured by expert: consumer 0's span, or consumer 1's for a tile
consumer 0 did not record (ping-pong consumers own whole tiles in turn); the dark start of a bar
is its wait for the tile's first full stage. CTAs that share an SM (k2: two per SM) split its row
into slots. The title carries the C summary (summary.csv beside the trace) and, for an entry
point, the configuration it ran (summary.csv's `# ran=`).

usage: gantt.py TRACE_DIR OUT.png TITLE
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from names import new_name  # noqa: E402  (a trace captured before the renaming names the old configuration)
from tables import load  # noqa: E402  (one reader of the results CSVs' "# key=value" header)


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    tdir, out, title = sys.argv[1:]
    with open(os.path.join(tdir, "trace.csv")) as f:
        events = list(csv.DictReader(f))
    meta, (s, *_) = load(os.path.join(tdir, "summary.csv"))
    if "ran" in meta:
        title = title.replace(s["kernel"], f"{s['kernel']} (ran {new_name(meta['ran'])})", 1)
    tiles = [e for e in events if e["role"] == "consumer0"]
    drawn = {(e["cta"], e["tile"]) for e in tiles}
    tiles += [e for e in events if e["role"] == "consumer1" and (e["cta"], e["tile"]) not in drawn]
    sms = sorted({int(e["sm"]) for e in events})
    row_of = {sm: i for i, sm in enumerate(sms)}
    slots = max(int(e["lane"]) for e in events) + 1
    experts = int(s["experts"])
    cmap, norm = plt.get_cmap("viridis"), Normalize(vmin=0, vmax=experts - 1)

    bars, waits, idle = defaultdict(list), defaultdict(list), defaultdict(list)
    for e in tiles:
        t0, t1, tm = (int(e[k]) / 1e3 for k in ("start_ns", "end_ns", "mark_ns"))
        key = (row_of[int(e["sm"])], int(e["lane"]))
        if e["computed"] == "1":
            bars[key].append(((t0, t1 - t0), cmap(norm(int(e["expert"])))))
            if tm > t0:
                waits[key].append((t0, tm - t0))
        else:
            idle[key].append((t0, t1 - t0))

    fig, ax = plt.subplots(figsize=(11, 8.5), dpi=150)
    height = 0.9 / slots
    for (row, lane), spans in bars.items():
        y = row - 0.45 + lane * height
        ax.broken_barh([b for b, _ in spans], (y, height), facecolors=[c for _, c in spans], linewidth=0)
    for (row, lane), spans in waits.items():
        ax.broken_barh(spans, (row - 0.45 + lane * height, height), facecolors="black", alpha=0.55, linewidth=0)
    for (row, lane), spans in idle.items():
        ax.broken_barh(spans, (row - 0.45 + lane * height, height), facecolors="0.8", linewidth=0)
    kernel, first_idle = float(s["kernel_us"]), float(s["first_idle_us"])
    ax.axvline(first_idle, color="tab:red", linewidth=1)
    ax.axvline(kernel, color="black", linewidth=1)
    ax.axvspan(first_idle, kernel, color="tab:red", alpha=0.08)

    ax.set_xlim(0, kernel * 1.01)
    ax.set_ylim(-0.6, len(sms) - 0.4)
    ticks = list(range(0, len(sms), 12))
    ax.set_yticks(ticks, [str(sms[i]) for i in ticks])
    ax.invert_yaxis()
    ax.set_xlabel("time from the kernel's start (µs, %globaltimer)")
    ax.set_ylabel("SM (%smid)" + (f"; {slots} CTA slots per SM" if slots > 1 else ""))
    ax.set_title(f"{title}\nkernel {kernel:.1f} µs, SMs busy {100 * float(s['busy_fraction']):.1f}%, "
                 f"tail {float(s['tail_us']):.1f} µs, imbalance {float(s['imbalance']):.3f} (max / mean busy per SM)",
                 fontsize=10)
    handles = [Patch(facecolor="black", alpha=0.55, label="waiting for the tile's first full stage"),
               Line2D([], [], color="tab:red", label=f"tail: first SM idle at {first_idle:.1f} µs"),
               Line2D([], [], color="black", label="last event")]
    if idle:
        handles.insert(1, Patch(facecolor="0.8", label="idle half of a pair (follows the ring)"))
    ax.legend(handles=handles, loc="lower left", fontsize=8, framealpha=0.9)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.01)
    bar.set_label("expert (tile colour)")
    fig.tight_layout()
    fig.savefig(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
