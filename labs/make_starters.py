#!/usr/bin/env python3
"""Write the starter labs from the stage sources, so that a lab cannot drift from its stage.

usage: make_starters.py            write labs/<lab>/<lab>.cu for every lab below
       make_starters.py --check    exit 1 if a committed starter differs from what this writes
                                   (committed: the working file, or, where a student has filled
                                   its gaps, the file as committed at HEAD)
       make_starters.py --solved DIR   write DIR/<lab>_solved/<lab>_solved.cu: the same file with
                                   the stage's own code in every gap (what grading a correct
                                   solution means; CMake builds them with -DGG_LABS_SOLVED=ON)

A stage source marks its lesson's core with `// lab:gap-begin NAME` ... `// lab:gap-end` and,
where its registrations start, `// lab:configs`. A starter is the stage source with each gap
replaced by the stub below, the stage's symbols renamed to the lab's, and the registrations
replaced by the lab's one configuration. The markers are comments: the stages' SASS does not
change. Standard library only.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Lab:
    def __init__(self, name, stage, source, header, desc, minutes, register, stubs, inline=None):
        self.name, self.stage, self.source, self.header = name, stage, source, header
        self.desc, self.minutes, self.register, self.stubs = desc, minutes, register, stubs
        # inline: a header of the stage whose text replaces its #include in the starter (its
        # gaps are the lab's too), so that the starter holds every line the student writes.
        self.inline = inline


# Each stub: the comment that asks for the gap's code, and the least code that compiles without
# it. No stub waits on a barrier: a starter must fail its check, never hang.
LABS = [
    Lab("lab_k0_tiles", "k0_fma", "k0_fma/k0_fma.cu", "k0_fma.h",
        "k0_fma with its shared-memory tile loop to write", 45, None, {
            "tile-loop": [
                "// Stage this K-slice as fp32: A rows [0, 64) of the tile x k [k0, k0 + 16) into As (zeros",
                "// for rows >= tile.rows), B k rows [k0, k0 + 16) x the tile's 64 columns into Bs (zeros for",
                "// columns >= n); the staging roles a_row/a_col, b_row/b_col are above. Then, with every",
                "// thread's stores visible, acc[i][j] += As[ty * 4 + i][kk] * Bs[kk][tx * 4 + j] over the",
                "// slice; and no thread may refill As/Bs while another still reads them.",
            ]}),
    Lab("lab_k1_fragments", "k1_mmasync", "k1_mmasync/k1_mmasync.cu", "k1_mmasync.h",
        "k1_mmasync_bm128 with its ldmatrix addresses and epilogue to write", 90,
        "K1_CONFIG(lab_k1_fragments, 128, 64, 32, false, 2)", {
            "ldmatrix-addresses": [
                "// For k16 step ks of this stage: a_frag[set][fm] (fm < FRAG_M) from s.a with",
                "// gg::ldmatrix_x4, b_frag[set][j] (j < FRAG_N / 2) from s.b with gg::ldmatrix_x4_trans.",
                "// Each lane gives one 16-byte row address of a 16 x 16 block: which row, which 8-column",
                "// chunk? The four matrices must arrive as a0..a3 of mma.m16n8k16 (A) and as b0, b1 of",
                "// columns 0-7 then 8-15 (B). PTX ISA: \"ldmatrix\", \"Matrix Fragments for mma.m16n8k16\".",
            ],
            "epilogue": [
                "// Store acc as bf16: acc[fm][fn] is the m16n8 f32 accumulator of rows warp_row + 16 fm,",
                "// columns warp_col + 8 fn of the tile. Which row and column does register i of this lane",
                "// hold? Rows >= tile.rows are the next expert's, columns >= n do not exist: skip both.",
                "// gg::pack_bf16x2 (ptx/ptx_ampere.cuh) packs a register pair for one 4-byte store.",
            ]}),
    Lab("lab_k2_ring", "k2_tma_ws", "k2_tma_ws/k2_tma_ws.cu", "k2_tma_ws.h",
        "k2_tma_ws_s3 with its mbarrier ring to write", 90,
        "K2_CONFIG(lab_k2_ring, 128, 3, 2)", {
            "producer-wait": [
                "// Wait until the consumers have released this stage (empty[stage]). Which phase parity?",
                "// The first pass over the ring must not block (common/gg_pipeline.h).",
            ],
            "expect-tx": [
                "// Announce on full[stage] the bytes the loads below deliver (stage_tx), with this",
                "// thread's one arrival, before any of them can land.",
            ],
            "consumer-wait": [
                "// Wait until full[stage] says this stage's bytes have landed (which parity?).",
            ],
            "release": [
                "// Hand the stage back: empty[stage] counts one arrival per consumer warp. The ldmatrix",
                "// reads (generic proxy) must be complete before the next TMA write (async proxy) lands.",
            ]}),
    Lab("lab_k3_wgmma", "k3_wgmma", "k3_wgmma/step1_tile.cu", "k3_wgmma/k3_wgmma.h",
        "k3_wgmma step 1 with its wgmma descriptors and producer/consumer handshake to write", 120,
        "K3_REGISTER(lab_k3_wgmma, lab_k3::tile_kernel, (lab_k3::Shape{192, false, true, false}), 192)", {
            "consumer-wait": [
                "// Wait until full[pipe.stage] says this stage's bytes have landed (which parity?).",
            ],
            "release": [
                "// Stage s may be overwritten: one arrival per consumer warp on empty[s] (lane 0 of",
                "// each warp is `leader`; LOADS::release knows where the arrival goes).",
            ],
            "descriptors": [
                "// Describe this stage to wgmma (common/gg_desc_sm90.h, PTX ISA \"Matrix Descriptor",
                "// Format\"): desc_a0 / desc_a1, A's two 64-row halves at a_addr and a_addr +",
                "// HALF_A_BYTES, K-major, 128B swizzle; desc_b, B at b_addr, N-major, 128B swizzle, its",
                "// 64-column panels PANEL_BYTES apart. Start address, LBO, SBO, base offset, swizzle?",
                "const uint64_t desc_a0 = 0, desc_a1 = 0, desc_b = 0;",
            ],
            "producer-wait": [
                "// Wait until both consumers have released this stage (empty[stage]). Which parity?",
            ],
            "expect-tx": [
                "// Announce on full[stage] the bytes the loads below deliver (stage_tx).",
            ]}, inline="k3_wgmma/k3_wgmma.cuh"),
]

GAP = re.compile(r"^(\s*)// lab:gap-begin (\S+)\s*$")
END = re.compile(r"^\s*// lab:gap-end\s*$")


def render(lab, solved):
    """The lab's source: the stage source with gaps cut (or kept, solved) and names changed."""
    name = lab.name + ("_solved" if solved else "")
    with open(os.path.join(ROOT, lab.source)) as f:
        source = f.read()
    if lab.inline:
        with open(os.path.join(ROOT, lab.inline)) as f:
            header = f.read().replace("#pragma once\n", "")
        source = source.replace(f'#include "{lab.inline}"\n', f"// ---- {lab.inline}, inlined ----\n" + header +
                                f"// ---- end of {lab.inline} ----\n")
        # Its own namespace: the starter's gaps must not meet the stage's code of the same name.
        source = re.sub(rf"\b{lab.stage.split('_')[0]}::", f"lab_{lab.stage.split('_')[0]}::", source)
        source = re.sub(rf"namespace {lab.stage.split('_')[0]}\b", f"namespace lab_{lab.stage.split('_')[0]}", source)
    lines = source.split("\n")
    out, gap, seen = [], None, []
    for line in lines:
        m = GAP.match(line)
        if m:
            indent, gap = m.group(1), m.group(2)
            if gap not in lab.stubs:
                raise SystemExit(f"make_starters.py: {lab.source}: gap '{gap}' has no stub in {lab.name}")
            seen.append(gap)
            if not solved:
                out.append(f"{indent}// ---- LAB GAP {gap}: your code here ----")
                out += [indent + s for s in lab.stubs[gap]]
                out.append(f"{indent}// ---- end of LAB GAP {gap} ----")
            continue
        if END.match(line):
            gap = None
            continue
        if line.strip() == "// lab:configs":
            out.append(lab.register.replace(lab.name, name))
            out.append("")
            break
        if gap is None or solved:
            out.append(line)
    missing = set(lab.stubs) - set(seen)
    if missing:
        raise SystemExit(f"make_starters.py: {lab.source} lacks the gap(s) {', '.join(sorted(missing))}")
    text = "\n".join(out)
    lab_line = f'#include "gg_lab.h"\n\nGG_LAB({name}, {lab.stage}, "{lab.desc}{" (solved)" if solved else ""}")'
    # An inlined header keeps the stage header it includes (its constants); else the stage
    # header, which declares the stage's own functions, gives way to the lab's.
    keep = f'#include "{lab.header}"\n' if lab.inline else ""
    text = text.replace(f'#include "{lab.header}"', keep + lab_line, 1)
    text = re.sub(rf"\b{lab.stage}_(can_implement|info|launch|kernel)\b", rf"{name}_\1", text)
    what = ("the stage's own code in every gap: the reference solution" if solved else
            "each LAB GAP left for you to write. Fill the gaps, then\n"
            f"//   cmake --build build && build/bin/ggemm grade --kernel {name}\n"
            f"// ggemm run --kernel {name} checks one shape; the stage itself is the answer")
    head = (f"// {name}: a lab generated by labs/make_starters.py from {lab.source}, with\n"
            f"// {what}.\n"
            f"// The stage's own notes follow.\n//\n")
    return head + text


def committed(path):
    """The file as committed at HEAD, or None (not a git checkout, not committed)."""
    try:
        return subprocess.run(["git", "-C", os.path.dirname(path), "show", "HEAD:./" + os.path.basename(path)],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def path_of(lab, base, solved):
    name = lab.name + ("_solved" if solved else "")
    return os.path.join(base, name, name + ".cu")


def main():
    ap = argparse.ArgumentParser(description="Write the starter labs from the stage sources.")
    ap.add_argument("--check", action="store_true", help="compare with the committed starters, write nothing")
    ap.add_argument("--solved", metavar="DIR", help="write the solved copies under DIR instead")
    a = ap.parse_args()
    solved = a.solved is not None
    base = os.path.abspath(a.solved) if solved else os.path.join(ROOT, "labs")
    stale = 0
    for lab in LABS:
        text, path = render(lab, solved), path_of(lab, base, solved)
        old = open(path).read() if os.path.exists(path) else None
        if a.check:
            # A student fills the gaps in place: the shipped file is then HEAD's, not the working one.
            if old != text and committed(path) != text:
                print(f"make_starters.py: {os.path.relpath(path, ROOT)} differs from what {lab.source} gives;"
                      f" run python3 labs/make_starters.py")
                stale += 1
            continue
        if old != text:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    if a.check and not stale:
        print(f"make_starters.py: {len(LABS)} starters match their stages")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
