#!/usr/bin/env python3
"""Pivot a sweep CSV into the table gnuplot's clustered histogram reads.

usage: pivot.py SWEEP.csv OUT.dat [column]
One row per kernel (in the CSV's order), one column per case (tokens/skew/k) of the "stages"
set, holding `column` (default useful_tflops); '-' where a kernel has no passing row for a case.
The metadata lines are copied as comments so the figure can name the device.
Standard library only.
"""
import csv
import sys


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    src, dst = sys.argv[1], sys.argv[2]
    column = sys.argv[3] if len(sys.argv) == 4 else "useful_tflops"
    meta, lines = [], []
    with open(src) as f:
        for line in f:
            (meta if line.startswith("#") else lines).append(line)
    kernels, cases, value = [], [], {}
    for r in csv.DictReader(lines):
        if r.get("set", "stages") != "stages":
            continue
        case = f"{int(r['tokens']) // 1024}k s={r['skew']}" + ("" if r["k"] == "1024" else f" K={r['k']}")
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        if case not in cases:
            cases.append(case)
        if r["check"] == "pass":
            value[(r["kernel"], case)] = r[column]
    with open(dst, "w") as f:
        f.writelines(meta)
        f.write(f"# ncases={len(cases)}\n")
        f.write("kernel " + " ".join(f'"{c}"' for c in cases) + "\n")
        for k in kernels:
            f.write(k + " " + " ".join(value.get((k, c), "-") for c in cases) + "\n")


if __name__ == "__main__":
    main()
