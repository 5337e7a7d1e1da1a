"""DRAM reads of the layer's wgrad under the two tile orders, from a model of L2 as one LRU cache.

The model. The wgrad list (common/gg_wgrad.h, as `ggemm tiles --kernel k5_wgrad_m256_dyn` lists it
with the dynamic deal's start and end of each item, in blocks) is walked in the order the items
start and end. An item reads two panels when it starts: its rows of A_e across its tile_m columns
of k, and its rows of dC_e across its tile_n columns of n. A panel still in the cache costs
nothing; otherwise its bytes come from DRAM and it enters the cache. When the item ends, its
output tile (bf16, or a split item's fp32 partial) enters the cache too: the L2 allocates the lines
it writes, and dB at these shapes is as large as the operands or larger. The cache drops its least
recently used lines to stay within the L2's bytes. Which
block of k and of n tile t covers is computed here for both orders from the tile index (n block
first: t / n_blocks, t % n_blocks; k block first: t % k_blocks, t / k_blocks); the rule's order
(gg_wgrad_k_first, per expert) is the list's own k_block and n_block, listed with `--l2-mib` of
each GPU's L2. Hopper's L2 is two partitions, and a line may be held in both, so the cache is
priced at half the L2 and at all of it: each cell is that range.

It leaves out what runs in parallel (the items of one wave read their panels together, not one
after another) and partial reuse inside a panel. Where ncu measured the reads of a list (main's n
block first, every expert k block first, the rule's on an H100), the last columns have them.
Writes the `k5-order-model` block of k5_backward/TRIALS.md.

    python3 plots/wgrad_l2.py [--ggemm build/bin/ggemm] [--check]

Standard library only.
"""
import collections
import os
import sys

import readme_block
import work_lists
from tables import load, ncu_value

ROOT = readme_block.ROOT
KERNEL = "k5_wgrad_m256_dyn"
SETS = ["backward_stages", "backward_decode", "backward_mixtral", "backward_qwen3_30b_a3b", "backward_olmoe",
        "backward_deepseek_v3"]
# The GPUs' L2 bytes, from committed runs' headers (l2_bytes).
GPUS = [("H100", "results/h100-80gb-hbm3/backward.csv"), ("H200", "results/h200/sweep.csv")]
# ncu's DRAM reads of KERNEL on an H100: (set, rows, skew) -> {order: report}; "k" is the build that put
# every expert k block first (09de18b), "rule" gg_wgrad_k_first's list on 50 MiB (9d71a3d).
E = "results/h100-80gb-hbm3/evidence/"
NCU = {("backward_mixtral", 8192, 0.8): {"n": E + "ncu-wgrad-ours-mixtral-37ffdec2c3e8.txt",
                                         "k": E + "ncu-wo-new-e8a9e63fe736.txt",
                                         "rule": E + "ncu-mixtral-rule-9d71a3d625d6.txt"},
       ("backward_stages", 16384, 0.0): {"n": E + "ncu-wgrad-ours-stages-37ffdec2c3e8.txt",
                                         "k": E + "ncu-16k-wo-9d71a3d625d6.txt"}}
ORDERS = ("n", "k", "rule")


def dram_bytes(items, k, n, tile_m, tile_n, order, cache):
    """The model's DRAM reads of the list (items with their start and end) with `cache` bytes of L2;
    order: "n" or "k" (that block first for every expert) or "rule" (the list's own blocks)."""
    k_blocks, n_blocks = -(-k // tile_m), -(-n // tile_n)
    events = sorted([(r["start"], 0, r) for r in items] + [(r["end"], 1, r) for r in items],
                    key=lambda e: (e[0], e[1], e[2]["cta"]))  # at one time: reads, then writes
    lru, held, read = collections.OrderedDict(), 0, 0
    for _, ends, r in events:
        if ends:  # its output tile, written through the L2
            lines = [(("dB", r["item"]), tile_m * tile_n * (2 if r["splits"] == 1 else 4))]
        else:
            t = r["tile"]
            kb, nb = {"k": (t % k_blocks, t // k_blocks), "n": (t // n_blocks, t % n_blocks),
                      "rule": (r["k_block"], r["n_block"])}[order]
            width_k, width_n = min(tile_m, k - kb * tile_m), min(tile_n, n - nb * tile_n)  # the last blocks' part
            lines = [(("A", r["expert"], kb, r["row0"]), r["rows"] * width_k * 2),
                     (("dC", r["expert"], nb, r["row0"]), r["rows"] * width_n * 2)]
        for key, size in lines:
            if size == 0:  # an empty expert's item reads nothing
                continue
            if key in lru:
                lru.move_to_end(key)
                continue
            if not ends:
                read += size
            lru[key] = size
            held += size
            while held > cache:
                held -= lru.popitem(last=False)[1]
    return read


def shapes(ggemm):
    """(set, tokens, experts, k, n, skew) of each wgrad case of SETS, as `ggemm cases` lists them."""
    return [(r["set"], int(r["tokens"]), int(r["experts"]), int(r["k"]), int(r["n"]), float(r["skew"]))
            for r in work_lists.cases(ggemm, "--set", ",".join(SETS), "--pass", "backward", "--kernels", KERNEL)]


def main():
    a = readme_block.ggemm_args(__doc__.splitlines()[0], "the k5-order-model block is")
    if a is None:
        return 0
    l2 = [(gpu, int(load(os.path.join(ROOT, path))[0]["l2_bytes"])) for gpu, path in GPUS]
    head = "| set | rows | skew | k | n | operands MB | " + " | ".join(
        f"{gpu} n first MB | {gpu} k first MB | {gpu} rule MB (k first experts) " for gpu, _ in l2) + \
        " | " + " | ".join(f"ncu, H100, {o} first" if o != "rule" else "ncu, H100, rule" for o in ORDERS) + " |"
    lines = [head, "|---|---:|---:|---:|---:|---:|" + "---:|---:|---:|" * len(l2) + "---:|" * len(ORDERS)]
    for cset, tokens, experts, k, n, skew in shapes(a.ggemm):
        cells = []
        for _, size in l2:
            meta, items = work_lists.tiles(a.ggemm, "--kernel", KERNEL, "--tokens", tokens, "--experts", experts,
                                           "--k", k, "--n", n, "--skew", f"{skew:g}", "--sms", 132,
                                           "--l2-mib", size >> 20)
            tile_m, tile_n = int(meta["tile_m"]), int(meta["tile_n"])
            for order in ORDERS:
                lo, hi = (dram_bytes(items, k, n, tile_m, tile_n, order, c) / 1e6 for c in (size, size // 2))
                cell = f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f}"
                cells.append(cell + (f" ({meta['k_first_experts']})" if order == "rule" else ""))
        measured = []
        for order in ORDERS:
            report = NCU.get((cset, tokens, skew), {}).get(order)
            got = report and ncu_value(report, "dram__bytes_read.sum")
            measured.append(f"{got[1]} {got[0]}" if got else "")  # as ncu printed it
        lines.append(f"| {cset[len('backward_'):]} | {tokens} | {skew:g} | {k} | {n} | {tokens * (k + n) * 2 / 1e6:.0f} | "
                     + " | ".join(cells + measured) + " |")
    note = ("*Generated by `plots/wgrad_l2.py` (its docstring has the model) from `ggemm tiles --kernel "
            f"{KERNEL}` of this build on 132 SMs, the L2 bytes in the headers of "
            + ", ".join(f"`{p}`" for _, p in GPUS) + " and ncu's reads in "
            + ", ".join(f"`{p}`" for reports in NCU.values() for p in reports.values()) + ". Operands: A and dC once (2 bytes x rows x (k + n)). "
            "Each model cell: L2 priced whole, then at half; one number where both agree. The rule: each expert's "
            "order as gg_wgrad_k_first picks it for that GPU's L2, with how many experts it puts k block first.*")
    return readme_block.write_block(readme_block.stage_files("k5_backward"), "k5-order-model",
                                    "\n".join([note, ""] + lines), a.check)


if __name__ == "__main__":
    sys.exit(main())
