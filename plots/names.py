"""k3_wgmma's configuration names: the old ones, which the evidence files and trace folders recorded
before the renaming, and the one grammar that replaced them,

    k3_wgmma_<schedule>_<rows>_<width>[_<ablation>]
    schedule  tile: one CTA per tile of the host-built tile list; coop: persistent grid over the
              device-side schedule, both consumer warpgroups share each tile; pingpong: persistent,
              the two consumer warpgroups own whole tiles in turn
    rows      m128: every tile 128 rows; m64: an expert's remainder of 1..64 rows gets a 64-row tile
    width     n128, n192, n256 (BLOCK_N)
    ablation  solo: the 64-row tile on consumer 0 alone; mcb: 2-CTA clusters of row-tile pairs, B
              multicast; mca: 2-CTA clusters of column-block pairs, A multicast

The evidence under results/h200/evidence/ and the old trace folders keep the old names: they are
records. Every generator of plots/ that reads a kernel name from such a file passes it through
new_name(), so its tables speak the new names; a name this map does not hold (the entry point
k3_wgmma, the other stages, a trial configuration that was never renamed) passes unchanged.
Standard library only; `python3 plots/names.py` prints the map as a Markdown table.
"""

OLD_TO_NEW = {
    "k3_wgmma_tile": "k3_wgmma_tile_m128_n192",
    "k3_wgmma_persist": "k3_wgmma_coop_m128_n192",
    "k3_wgmma_persist_n256": "k3_wgmma_coop_m128_n256",
    "k3_wgmma_split64": "k3_wgmma_coop_m64_n192",
    "k3_wgmma_n128": "k3_wgmma_coop_m64_n128",
    "k3_wgmma_n256": "k3_wgmma_coop_m64_n256",
    "k3_wgmma_pingpong": "k3_wgmma_pingpong_m128_n192",
    "k3_wgmma_pingpong64": "k3_wgmma_pingpong_m64_n192",
    "k3_wgmma_pingpong_n128": "k3_wgmma_pingpong_m128_n128",
    "k3_wgmma_pingpong64_n128": "k3_wgmma_pingpong_m64_n128",
    "k3_wgmma_solo64": "k3_wgmma_coop_m64_n192_solo",
    "k3_wgmma_mc": "k3_wgmma_coop_m64_n192_mcb",
    "k3_wgmma_mc_n256": "k3_wgmma_coop_m64_n256_mcb",
    "k3_wgmma_mca": "k3_wgmma_coop_m64_n192_mca",
}


def new_name(kernel):
    """A kernel's name today: the new name of an old k3_wgmma configuration, else the name itself."""
    return OLD_TO_NEW.get(kernel, kernel)


if __name__ == "__main__":
    print("| old name | new name |\n|---|---|")
    for old, new in OLD_TO_NEW.items():
        print(f"| `{old}` | `{new}` |")
