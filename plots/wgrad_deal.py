"""How evenly k5_wgrad's round robin deals its work list, on the backward sweep's shapes.

For every shape of the `backward_*` sets of harness/cases.csv: `ggemm tiles --pass wgrad` (the
list the kernel builds, common/gg_wgrad.h, on 132 SMs, no GPU), and from it the busiest CTA's
64-row reduction blocks over the mean, the number the tail of the launch follows when every block
costs the same: as the kernel deals the list, as a zig-zag deal would, and both with the expert
sizes in a shuffled order; as the dynamic deal does (common/gg_wgrad.h's model of it, the list of
k5_wgrad_pingpong_dyn, the same tile), sorted and shuffled; and the busiest CTA's work with
k5_wgrad_m256's 256-row tiles over k5_wgrad's. Writes the `k5-wgrad-deal` table (k5_backward/TRIALS.md).

    python3 plots/wgrad_deal.py [--ggemm build/bin/ggemm] [--check]

Standard library only.
"""
import os
import random
import sys

import readme_block
import work_lists

ROOT = readme_block.ROOT
SEED = 1


def values(field):
    """A cases.csv list: space-separated values, or a range start:stop:step."""
    if ":" in field:
        start, stop, step = (float(x) for x in field.split(":"))
        count = int(round((stop - start) / step)) + 1
        return [f"{start + i * step:g}" for i in range(count)]
    return field.split()


def shapes():
    with open(os.path.join(ROOT, "harness", "cases.csv")) as f:
        for line in f:
            if not line.startswith("backward_"):
                continue
            name, tokens, experts, k, n, skews = line.split(",")[:6]
            for t in values(tokens):
                for s in values(skews):
                    yield name, int(t), int(experts), int(k), int(n), s


def deal(ggemm, shape_args):
    """The list's parameters, and the busiest CTA's blocks over the mean as the kernel deals it
    (item t to CTA t mod grid) and as a zig-zag would (every other round dealt backwards)."""
    meta, items = work_lists.tiles(ggemm, "--pass", "wgrad", *shape_args)
    grid = int(meta["grid"])
    dealt, zigzag = [0] * grid, [0] * grid
    for it in items:
        blocks = it["end"] - it["start"]
        dealt[it["cta"]] += blocks
        rnd, c = divmod(it["item"], grid)
        zigzag[grid - 1 - c if rnd % 2 else c] += blocks
    return meta, [max(x) * grid / sum(x) for x in (dealt, zigzag)]


def dealt_blocks(ggemm, shape_args, *kernel):
    """Each CTA's 64-row blocks as the kernel deals its list (`ggemm tiles`), and the list's tile
    rows of k."""
    meta, items = work_lists.tiles(ggemm, "--pass", "wgrad", *kernel, *shape_args)
    dealt = [0] * int(meta["grid"])
    for it in items:
        dealt[it["cta"]] += it["end"] - it["start"]
    return dealt, int(meta["tile_m"])


def dynamic(ggemm, shape_args):
    """The busiest CTA's blocks over the mean as the dynamic deal gives it (the model in
    gg_wgrad_deal: every CTA holds one item ahead), on k5_wgrad's tile."""
    dealt, _ = dealt_blocks(ggemm, shape_args, "--kernel", "k5_wgrad_pingpong_dyn")
    return max(dealt) * len(dealt) / sum(dealt)


def busiest_work(ggemm, shape_args, *kernel):
    """The busiest CTA's work as the kernel deals the list: its 64-row blocks times the tile's rows
    of k (a 256-row block is twice a 128-row one's FLOPs)."""
    dealt, tile_m = dealt_blocks(ggemm, shape_args, *kernel)
    return max(dealt) * tile_m


def compare(pairs):
    """How many (a, b) pairs have a above b, and below, by more than rounding (the table's 3 digits)."""
    return sum(a > b + 5e-4 for a, b in pairs), sum(a < b - 5e-4 for a, b in pairs)


def main():
    a = readme_block.ggemm_args(__doc__.splitlines()[0], "the k5-wgrad-deal block is")
    if a is None:
        return 0
    lines = ["| set | tokens | experts | K | N | skew | chunk | items | split tiles | busiest CTA / mean | "
             "zig-zag | experts shuffled | shuffled, zig-zag | dynamic deal | shuffled, dynamic | "
             "256-row tiles: busiest CTA's work / 128-row's |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows, sms = [], "?"
    for name, t, e, k, n, s in shapes():
        shape = ["--tokens", str(t), "--experts", str(e), "--k", str(k), "--n", str(n), "--skew", s]
        meta, (ratio, zigzag) = deal(a.ggemm, shape)
        tall = busiest_work(a.ggemm, shape, "--kernel", "k5_wgrad_m256") / busiest_work(a.ggemm, shape)
        m = meta["m_e"].split()
        random.Random(SEED).shuffle(m)  # the same sizes in a router's order: no reason to be sorted
        listed = ["--m-list", ",".join(m), "--k", str(k), "--n", str(n)]
        _, (shuffled, shuffled_zigzag) = deal(a.ggemm, listed)
        dyn, shuffled_dyn = dynamic(a.ggemm, shape), dynamic(a.ggemm, listed)
        sms = meta["sms"]
        rows.append((ratio, zigzag, shuffled, shuffled_zigzag, dyn, shuffled_dyn))
        lines.append(f"| {name} | {t} | {e} | {k} | {n} | {s} | {meta['chunk']} | {meta['items']} | "
                     f"{meta['split_tiles']} | {ratio:.3f} | {zigzag:.3f} | {shuffled:.3f} | {shuffled_zigzag:.3f} | "
                     f"{dyn:.3f} | {shuffled_dyn:.3f} | {tall:.3f} |")
    zz_worse, zz_better = compare([(r[3], r[2]) for r in rows])
    sh_worse, sh_better = compare([(r[2], r[0]) for r in rows])
    dyn_worse, dyn_better = compare([(r[4], r[0]) for r in rows] + [(r[5], r[2]) for r in rows])
    note = ("*Generated by `plots/wgrad_deal.py` from `ggemm tiles --pass wgrad` on the `backward_*` shapes of "
            f"`harness/cases.csv` ({sms} SMs, no GPU): the chunk, the items and the split tiles of the list, and the "
            "busiest CTA's 64-row reduction blocks over the mean (1 is an even deal; a count of work, not a "
            "measured time) as the kernel deals the list; as a zig-zag would (every other round of the grid "
            f"dealt backwards; not built); and both again with the same expert sizes shuffled (seed {SEED}): the "
            f"harness's skewed splits put the largest expert first, a router does not. Of the {len(rows)} rows, "
            f"with the sizes shuffled the zig-zag is less even than the round robin on {zz_worse} and more even on "
            f"{zz_better}; the round robin is less even shuffled than sorted on {sh_worse} and more even on "
            f"{sh_better}. The dynamic deal (gg_wgrad_deal's model, each CTA holding one item ahead; "
            "`ggemm tiles --kernel k5_wgrad_pingpong_dyn`, the same tile), sorted and shuffled: against the round "
            f"robin on the same order, less even on {dyn_worse} of the {2 * len(rows)} and more even on {dyn_better}. "
            "The last column: the busiest CTA's work (blocks times the tile's rows of k) with "
            "k5_wgrad_m256's 256-row tiles over the same with k5_wgrad's 128 (`ggemm tiles --kernel k5_wgrad_m256`): "
            "above 1, the taller tile's busiest CTA has more work, the tail a launch follows if every block-row "
            "costs the same.*")
    lines = [note, ""] + lines
    return readme_block.write_block(readme_block.stage_files("k5_backward"), "k5-wgrad-deal", "\n".join(lines),
                                    a.check)


if __name__ == "__main__":
    sys.exit(main())
