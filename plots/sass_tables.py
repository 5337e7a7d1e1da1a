#!/usr/bin/env python3
"""Write each stage README's resource table and main-loop instruction mix from the build's SASS.

usage: sass_tables.py [--check] [--build DIR] [--cuobjdump PATH] [--kernels-csv CSV]

For each stage it runs `cuobjdump --dump-resource-usage` and `--dump-sass` on BUILD/lib<stage>.a
(its sm_90a code, which the H200 runs; a library without any, k3_tcgen05, each of its cubins side
by side) and rewrites the text between `<!-- resources:begin/end -->` and `<!-- sass:begin/end -->`
in <stage>/README.md or <stage>/TRIALS.md, whichever holds each (plots/readme_block.py); a stage
without either pair is skipped with one line. Blocks per SM, the
limiting resource, threads and dynamic shared memory come from results/h200/kernels.csv
(`ggemm list --format csv` on the H200) when it exists. The main-loop rule is stated in the
generated caption (MIX_RULE). Traced twins (common/gg_trace.cuh) are left out. --check writes
nothing and exits 1 if any README would change.
Exit 77 without cuobjdump (pip install nvidia-cuda-cuobjdump), 2 when a library is missing.
Standard library only.
"""
import argparse
import csv
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_block import ROOT, replace_block, stage_files  # noqa: E402

STAGES = ["k0_fma", "k1_mmasync", "k2_tma_ws", "k3_wgmma", "k3_tcgen05"]
ME = "plots/sass_tables.py"
KERNELS_CSV = "results/h200/kernels.csv"

# A kernel's math instruction: the first of these present in its SASS.
MATH = [("UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCMMA"), ("HGMMA",), ("HMMA",), ("FFMA",)]
# Table rows in this order; any other opcode is counted as "other".
GROUPS = [
    ("FFMA", "HMMA", "HGMMA", "UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCMMA"),
    ("LDS", "LDSM", "STS", "STSM", "LDTM", "STTM"),
    ("LDG", "STG", "LDGSTS", "LDGDEPBAR", "DEPBAR", "RED", "ATOM", "ATOMG", "ATOMS"),
    ("UTMALDG", "UTMASTG", "UTMAPF", "UBLKCP"),
    ("BAR", "SYNCS", "WARPGROUP", "MEMBAR", "FENCE", "UTCBAR", "WARPSYNC", "ELECT", "USETMAXREG", "NANOSLEEP"),
    ("BRA", "EXIT", "RET", "CALL"),
]
RANK = {root: n for n, root in enumerate(r for g in GROUPS for r in g)}

MIX_RULE = (
    "Main loop: the innermost loop closed by a conditional backward branch (`@P BRA` to a lower "
    "address) whose address range holds the kernel's math instruction (`UTC*MMA`, else `HGMMA`, "
    "else `HMMA`, else `FFMA`); where several do, the one with the most multiply-adds per pass (on a "
    "tie, the first). Each instruction in that range is counted once, i.e. one pass; instructions "
    "ptxas placed out of line (mbarrier retry loops at the end of the kernel) and never-executed "
    "`@!PT` placeholders are not counted. In the warp-specialised kernels (k2, k3) this is the consumers' "
    "loop; the producer issues the TMA loads from another. “other” is integer, address, move, "
    "conversion and predicate work.")
SMEM_NOTE = ("Static shared memory is cuobjdump's `SHARED`; in sm_90 and later code it includes the "
             "1 KiB per block that the system reserves. Dynamic shared memory is requested at launch.")


def find_cuobjdump(given):
    if given:
        return given if os.access(given, os.X_OK) else None
    if shutil.which("cuobjdump"):
        return shutil.which("cuobjdump")
    # the README's install line: the pip wheels in the project's .venv
    for path in sorted(glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages", "nvidia", "cu*",
                                              "bin", "cuobjdump"))):
        if os.access(path, os.X_OK):
            return path
    try:
        import nvidia  # the pip wheel nvidia-cuda-cuobjdump
        for base in nvidia.__path__:
            path = os.path.join(base, "cu13", "bin", "cuobjdump")
            if os.access(path, os.X_OK):
                return path
    except ImportError:
        pass
    return None


def by_arch(text):
    """{arch: [lines]} for each ELF section of a cuobjdump listing (a library may hold several)."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*arch = (\S+)", line)
        if line.startswith("Fatbin"):
            cur = None
        elif m and cur is None:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None:
            cur.append(line)
    return out


def cuobjdump(tool, what, lib):
    # cuobjdump runs nvdisasm from PATH: the directory holding cuobjdump goes first
    env = dict(os.environ, PATH=os.path.dirname(tool) + os.pathsep + os.environ.get("PATH", ""))
    text = subprocess.run([tool, what, lib], check=True, stdout=subprocess.PIPE, env=env,
                          universal_newlines=True).stdout
    return by_arch(text)


def resources(lines):
    """{symbol: {"REG": .., "STACK": .., "SHARED": .., "LOCAL": ..}}"""
    out, name = {}, None
    for line in lines:
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            name = m.group(1)
        elif name and "REG:" in line:
            out[name] = {k: int(v) for k, v in re.findall(r"\b([A-Z]+):(\d+)", line)}
    return out


def functions(lines):
    """{symbol: [(address, guard, opcode, operands)]}, executable instructions only."""
    out, cur = {}, None
    for line in lines:
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?(\S+)\s*([^;]*);", line)
        if m and cur is not None and (m.group(2) or "").strip() != "@!PT":
            cur.append((int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3), m.group(4)))
    return out


def root(op):
    return op.split(".")[0]


def macs(op):
    """Multiply-adds of one math instruction where the opcode carries its shape (HGMMA.64x192x16)."""
    m = re.search(r"\.(\d+)x(\d+)x(\d+)", op)
    return int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else 1


def main_loop(instrs):
    """(first, last) address of the main loop by MIX_RULE, and how many innermost loops hold math."""
    present = {root(i[2]) for i in instrs}
    math = next((g for g in MATH if present & set(g)), ())
    spans = []
    for addr, guard, op, args in instrs:
        conditional = guard not in ("", "@PT") or "," in args  # BRA.U UP0, target
        target = re.findall(r"0x([0-9a-f]+)", args)
        if root(op) == "BRA" and conditional and target and int(target[-1], 16) <= addr:
            lo = int(target[-1], 16)
            work = sum(macs(i[2]) for i in instrs if lo <= i[0] <= addr and root(i[2]) in math)
            if work:
                spans.append((lo, addr, work))
    inner = [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]
    if not inner:
        return None, 0
    lo, hi, _ = min(inner, key=lambda s: (-s[2], s[0]))
    return (lo, hi), len(inner)


def split_symbol(sym):
    """(kernel name, template arguments) of a mangled kernel symbol. Our kernels' template
    arguments are int, bool and enum literals (Itanium ABI: L<type><value>E), given as their
    value, or classes (a configuration type), given as the class's own name."""
    i, name, values = 3 if sym.startswith("_ZN") else 2, sym, []

    def ident(i):  # <length><identifier> at i: (identifier, end)
        n = re.match(r"\d+", sym[i:]).group()
        return sym[i + len(n):i + len(n) + int(n)], i + len(n) + int(n)

    def type_name(i):  # a class or enum type at i, N<prefix>...E or <length><identifier>: (its own name, end)
        if sym[i] != "N":
            return ident(i)
        i += 1
        while sym[i] != "E":  # the last component of the nested name is the type's own name
            if sym[i] == "S":  # a substitution for a prefix seen before (S_, S0_, ...)
                i = sym.index("_", i) + 1
            elif sym[i] == "I":  # a class template's arguments: their literal values, name<v,...>
                j, depth, vals = i + 1, 1, []
                while depth:
                    if sym[j] == "L":
                        end = sym.index("E", j)
                        vals.append(re.search(r"n?\d+$", sym[j:end]).group().replace("n", "-"))
                        j = end + 1
                    else:
                        depth += {"I": 1, "E": -1}.get(sym[j], 0)
                        j += 1
                last, i = f"{last}<{','.join(vals)}>", j
            else:
                last, i = ident(i)
        return last, i + 1

    while i < len(sym) and sym[i].isdigit():  # <length><identifier>..., the last is the kernel
        name, i = ident(i)
    if sym.startswith("I", i):
        i += 1
        while sym[i] != "E":
            if sym[i] == "L":  # a literal: L<type><value>E
                i = type_name(i + 1)[1] if sym[i + 1] in "N0123456789" else i + 2  # builtin: i, b, j, ...
                m = re.match(r"(n?)(\d+)E", sym[i:])
                values.append(-int(m.group(2)) if m.group(1) else int(m.group(2)))
                i += m.end()
            else:
                value, i = type_name(i)
                values.append(value)
    return name, values


def source(*patterns):
    """The text of the matching files under ROOT, comments removed and macro lines joined."""
    text = ""
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path) as f:
                text += f.read() + "\n"
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S).replace("\\\n", " ")


def configurations(stage):
    """[(configuration name, template values or None[, kernel name])] from the stage's
    `#define X_CONFIG(NAME, ...)` and its `X_CONFIG(name, ...)` lines, or from k3's
    `K3_REGISTER(NAME, KERNEL, SHAPE, TARGS...)` lines (then with the kernel's name), in the
    registry's order (harness/registry.c); a stage without either declares one configuration
    (GG_DECLARE_CONFIG) for its one kernel."""
    src = source(f"{stage}/*.cu", f"{stage}/*.cuh", f"{stage}/*.h")
    enums = {}
    for name, body in re.findall(r"enum\s+class\s+(\w+)[^{;]*\{([^}]*)\}", src + source("common/*.h", "common/*.cuh")):
        value = 0
        for item in filter(None, (s.strip() for s in body.split(","))):
            m = re.match(r"(\w+)\s*(?:=\s*(-?\d+))?", item)
            value = int(m.group(2)) if m.group(2) else value
            enums[f"{name}::{m.group(1)}"] = value
            value += 1
    out = []
    for macro, params, body in re.findall(r"#define\s+(\w+_CONFIG)\(NAME,([^)]*)\)([^\n]*)", src):
        params = [p.strip() for p in params.split(",")]
        targs = re.search(r"<([^<>]*)>", body).group(1).split(",")
        for args in re.findall(rf"^\s*{macro}\((\w+),([^)]*)\)", src, flags=re.M):
            bind = dict(zip(params, (a.strip() for a in args[1].split(","))))
            values = []
            for t in targs:
                param, t = t.strip() in bind, re.sub(r"\w+", lambda w: bind.get(w.group(), w.group()), t.strip())
                v = {"true": 1, "false": 0}.get(t, int(t) if re.fullmatch(r"-?\d+", t)
                                                else enums.get("::".join(t.split("::")[-2:])))
                if v is None and param:
                    v = t.split("::")[-1]  # a class (K3_CONFIG's CFG): the symbol holds its own name
                # A name that is not a parameter (None) is a constant shared by every configuration.
                values.append(v)
            out.append((args[0], values))
    # k3's K3_REGISTER(NAME, KERNEL, SHAPE, TARGS...) instantiates KERNEL<TARGS..., false>, written
    # out or through a macro of the step's file; it is matched on the kernel's name too.
    register = r"K3_REGISTER\((\w+),\s*(?:\w+::)*(\w+),\s*\([^()]*\),\s*([^)]*)\)"
    pairing = {"GG_PAIR_NONE": 0, "GG_PAIR_ROWS": 1, "GG_PAIR_COLS": 2}  # gg_schedule.h
    def literal(t):
        t = t.strip()
        if re.fullmatch(r"-?\d+", t) or t in ("true", "false"):
            return {"true": 1, "false": 0}.get(t, int(t) if t not in ("true", "false") else 0)
        t = t.split("::")[-1]  # a class: the symbol holds its own name, with its template's values
        return re.sub(r"<(\w+)>", lambda m: f"<{pairing.get(m.group(1), m.group(1))}>", t)
    for name, kernel, targs in re.findall(rf"^\s*{register}", src, flags=re.M):
        if name != "NAME":
            out.append((name, [literal(t) for t in targs.split(",")] + [0], kernel))
    for macro, params, _, kernel, targs in re.findall(rf"#define\s+(\w+)\(NAME,([^)]*)\)\s*{register}", src):
        if macro == "K3_REGISTER":
            continue
        params = [p.strip() for p in params.split(",")]
        for name, args in re.findall(rf"^\s*{macro}\((\w+),([^)]*)\)", src, flags=re.M):
            bind = dict(zip(params, (a.strip() for a in args.split(","))))
            out.append((name, [literal(bind.get(t.strip(), t)) for t in targs.split(",")] + [0], kernel))
    if not out:
        out = [(n, None) for n in re.findall(r"GG_DECLARE_CONFIG\((\w+)\)", src)]
    registry = re.findall(r"^\s*(?:ROW|TRACED|LESSON|ABLATION)\((\w+),", source("harness/registry.c"), flags=re.M)
    return sorted(out, key=lambda c: registry.index(c[0]) if c[0] in registry else len(registry))


def name_kernels(stage, symbols):
    """[(display name, symbol)] in configurations()' order; unmatched kernels last, as name<values>."""
    configs = configurations(stage)
    ablations = re.findall(r"^\s*ABLATION\((\w+),", source("harness/registry.c"), flags=re.M)
    named = []
    for sym in symbols:
        kernel, values = split_symbol(sym)
        hits = [(n, c[0]) for n, c in enumerate(configs)
                if (len(c) < 3 or c[2] == kernel)
                and ((c[1] is None and len(symbols) == 1 and not values)
                     or (c[1] is not None and len(c[1]) == len(values)
                         and all(a in (None, b) for a, b in zip(c[1], values))))]
        if len(hits) == 1 and hits[0][1] in ablations:
            continue  # built with GG_ABLATIONS only: the tables are the default build's
        if len(hits) == 1:
            named.append((hits[0][0], hits[0][1], sym))
        else:
            label = f"{kernel}<{', '.join(map(str, values))}>" if values else kernel
            named.append((len(configs), label, sym))
    return [(name, sym) for _, name, sym in sorted(named)]


def read_gpu_listing(path):
    """({meta}, {kernel: row}) of `ggemm list --format csv`, or None without the file."""
    if not os.path.exists(path):
        return None
    meta, lines = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                key, eq, value = line[1:].strip().partition("=")
                if eq:
                    meta[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    return meta, {r["kernel"]: r for r in csv.DictReader(lines)}


def nvcc_version(build):
    for path in glob.glob(os.path.join(build, "CMakeFiles", "*", "CMakeCUDACompiler.cmake")):
        with open(path) as f:
            m = re.search(r'CMAKE_CUDA_COMPILER_VERSION "([^"]+)"', f.read())
        if m:
            return m.group(1)
    return "unknown"


def resources_block(kernels, res, gpu, prov):
    n = lambda v: f"{int(v):,}" if str(v).lstrip("-").isdigit() else (v or "—")
    head = ["configuration", "registers", "stack B", "spill (local) B", "static shared B"]
    lines = [prov]
    if gpu is None:
        lines.append(f"*Blocks per SM and the limiting resource are not listed: they come from `ggemm list "
                     f"--format csv` run on the H200 and committed as `{KERNELS_CSV}`, which does not exist yet.*")
    else:
        meta, rows = gpu
        where = ", ".join(x for x in (meta.get("device"), meta.get("commit") and f"commit {meta['commit']}") if x)
        lines.append(f"*Threads, dynamic shared memory, blocks per SM and the limiting resource: `ggemm list "
                     f"--format csv` on the GPU, `{KERNELS_CSV}`{' (' + where + ')' if where else ''}.*")
        head += ["threads", "dynamic shared B", "blocks/SM", "limited by"]
    align = ["---"] + ["---:"] * (len(head) - 1)
    if gpu is not None:
        align[-1] = "---"  # the limiter is a word
    lines += ["", "| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    notes = []
    for name, head, key in kernels:
        r = res.get(key, {})
        cells = [head, n(r.get("REG", "?")), n(r.get("STACK", 0)), n(r.get("LOCAL", 0)), n(r.get("SHARED", 0))]
        if gpu is not None:
            g = gpu[1].get(name, {})
            if g.get("registers") and int(g["registers"]) != r.get("REG"):
                cells[1] += " †"
                notes.append(f"† The GPU listing has {g['registers']} registers for `{name}`: it was made from "
                             f"another build, so its residency columns may not hold for this one.")
            if g.get("status") not in (None, "", "ok"):
                notes.append(f"No blocks per SM for `{name}` from that GPU: “{g['status']}”.")
            cells += [n(g.get("threads")), n(g.get("dynamic_smem")), n(g.get("blocks_per_sm")), g.get("limiter") or "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", SMEM_NOTE] + [x for note in dict.fromkeys(notes) for x in ("", note)])


def mix_block(kernels, funcs, prov):
    counts, loops = [], []
    for _, _, key in kernels:
        span, n_inner = main_loop(funcs[key])
        c = {}
        for addr, _, op, _ in funcs[key]:
            if span and span[0] <= addr <= span[1]:
                c[op] = c.get(op, 0) + 1
        counts.append(c)
        loops.append((span, n_inner))
    ops = sorted({op for c in counts for op in c if root(op) in RANK}, key=lambda op: (RANK[root(op)], op))
    lines = [prov, "", MIX_RULE, "",
             "| instruction | " + " | ".join(head for _, head, _ in kernels) + " |",
             "|---|" + "---:|" * len(kernels)]
    for op in ops:
        lines.append(f"| `{op}` | " + " | ".join(str(c.get(op, "·")) for c in counts) + " |")
    lines.append("| other | " + " | ".join(str(sum(v for op, v in c.items() if root(op) not in RANK))
                                           for c in counts) + " |")
    lines.append("| **all instructions** | " + " | ".join(f"**{sum(c.values())}**" for c in counts) + " |")
    if any(n > 1 for _, n in loops):
        lines.append("| innermost loops with the math instruction | " + " | ".join(str(n) for _, n in loops) + " |")
    lines.append("| loop addresses | " + " | ".join(f"0x{s[0]:04x}–0x{s[1]:04x}" if s else "no loop"
                                                  for s, _ in loops) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a README would change")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build directory (default build/)")
    ap.add_argument("--cuobjdump", help="default: on PATH, else the pip wheel's")
    ap.add_argument("--kernels-csv", default=os.path.join(ROOT, KERNELS_CSV), help="the H200's `ggemm list --format csv`")
    a = ap.parse_args()

    tool = find_cuobjdump(a.cuobjdump)
    if not tool or not (os.access(os.path.join(os.path.dirname(tool), "nvdisasm"), os.X_OK) or shutil.which("nvdisasm")):
        what = "no nvdisasm next to cuobjdump or on PATH" if tool else "no cuobjdump"
        if a.check and os.environ.get("CI") == "true":
            print(f"FAIL: {what} (CI must run the SASS tests: see the README's install line)")
            return 1
        print(f"skip: {what} (the README's install line puts nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm in .venv)")
        return 77
    gpu = read_gpu_listing(a.kernels_csv)
    nvcc = nvcc_version(a.build)
    stale = 0
    for stage in STAGES:
        lib = os.path.join(a.build, f"lib{stage}.a")
        if not os.path.exists(lib):
            print(f"missing {lib}: build first (cmake --build build)")
            return 2
        sass, usage = cuobjdump(tool, "--dump-sass", lib), cuobjdump(tool, "--dump-resource-usage", lib)
        # The H200 runs the sm_90a code; a library without any (k3_tcgen05: sm_100a and sm_103a)
        # shows every cubin, each configuration once per cubin, headed `name` arch.
        archs = ["sm_90a"] if "sm_90a" in sass else sorted(sass)
        funcs, res, kernels = {}, {}, []
        for arch in archs:
            # A traced twin (common/gg_trace.cuh) is its configuration plus the recorder, not a
            # row of its own: it is the kernel whose SASS reads the global timer.
            instrs = {sym: code for sym, code in functions(sass[arch]).items()
                      if not any("SR_GLOBALTIMER" in ops for _, _, _, ops in code)}
            regs = resources(usage[arch])
            for name, sym in name_kernels(stage, list(instrs)):
                funcs[arch, sym], res[arch, sym] = instrs[sym], regs.get(sym, {})
                kernels.append((name, f"`{name}`" + (f" {arch}" if len(archs) > 1 else ""), (arch, sym)))

        def prov(flag, unit):
            code = " and ".join(archs) + " code" + (f", one {unit} per cubin" if len(archs) > 1 else "")
            return (f"*Generated by `{ME}` from `cuobjdump {flag} build/lib{stage}.a` ({code}, nvcc {nvcc}); "
                    f"`python3 {ME}` regenerates it.*")
        blocks = {
            "resources": resources_block(kernels, res, gpu, prov("--dump-resource-usage", "row")),
            "sass": mix_block(kernels, funcs, prov("--dump-sass", "column")),
        }
        found = False
        for tag, body in blocks.items():
            changed = replace_block(stage_files(stage), tag, body, a.check)
            found |= changed is not None
            stale += bool(changed and a.check)
        if not found:
            print(f"skipped {stage}: no <!-- resources:begin/end --> or <!-- sass:begin/end --> markers")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
