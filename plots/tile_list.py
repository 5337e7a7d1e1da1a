#!/usr/bin/env python3
"""Diagram: the flat, expert-major tile list and the padding each row-tile policy pays.

usage: tile_list.py GGEMM_BINARY OUT.png
Asks `ggemm problem` for a small skewed split (16 experts, 1024 rows, s = 1.2), then draws
each expert's rows as a band and the row tiles that cover it under BM = 128, BM = 64 and
the adaptive 128/64 policy of k3; padded rows (computed, never stored) are hatched.
Needs python3-matplotlib (Debian).
"""
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

TOKENS, EXPERTS, SKEW = 1024, 16, 1.2


def split(binary):
    out = subprocess.run([binary, "problem", "--tokens", str(TOKENS), "--experts", str(EXPERTS), "--skew",
                          str(SKEW)], check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("m_e:"))
    return [int(x) for x in line.split()[1:]]


def row_tiles(m, policy):
    """Heights of the row tiles covering m rows (the same rules as common/gg_adaptive.h)."""
    if policy == "adaptive":
        full, rest = divmod(m, 128)
        return [128] * full + ([64] if 0 < rest <= 64 else [128] if rest else [])
    return [policy] * -(-m // policy)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    m = split(sys.argv[1])
    policies = [128, 64, "adaptive"]
    fig, axes = plt.subplots(1, len(policies), figsize=(13, 6.5), sharey=True)
    colors = plt.cm.tab20.colors
    tallest = 0
    for ax, policy in zip(axes, policies):
        y = 0
        useful = scheduled = tiles = 0
        for e, rows in enumerate(m):
            for h in row_tiles(rows, policy):
                valid = min(h, rows)
                ax.add_patch(mpatches.Rectangle((0, y), 1, valid, facecolor=colors[e % 20], edgecolor="black",
                                                linewidth=0.6))
                if h > valid:
                    ax.add_patch(mpatches.Rectangle((0, y + valid), 1, h - valid, facecolor="white",
                                                    edgecolor="black", hatch="///", linewidth=0.6))
                rows -= valid
                y += h
                tiles += 1
                scheduled += h
            useful += m[e]
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        tallest = max(tallest, y)
        name = f"BM = {policy}" if policy != "adaptive" else "adaptive 128/64 (k3)"
        ax.set_title(f"{name}\n{tiles} row tiles, eta = {useful / scheduled:.3f}")
    axes[0].set_ylim(tallest, 0)  # shared: the first expert at the top
    axes[0].set_ylabel("scheduled rows (each band: one expert's row tiles, in order)")
    fig.suptitle(f"The flat expert-major tile list: {EXPERTS} experts, {TOKENS} rows, skew {SKEW} "
                 f"(m_e = {', '.join(map(str, m))})\nColour = an expert's valid rows; hatched = padding the "
                 "tile computes but never stores", fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
