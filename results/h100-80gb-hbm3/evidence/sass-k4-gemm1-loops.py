"""Print the innermost loops of the fused GEMM1's two builds that hold HGMMA or LDGSTS (the consumers' k-block loop and
the producer's gather loop), from `cuobjdump --dump-sass` of k4_gemm1_swiglu.cu.o on stdin: per function, each loop's
length in instructions and, for the gather loop, its body. A loop is a backward branch and the instructions it jumps over.
    cuobjdump --dump-sass build/CMakeFiles/k4_moe.dir/k4_moe/k4_gemm1_swiglu.cu.o | python3 sass-k4-gemm1-loops.py
"""
import re
import sys

for func in sys.stdin.read().split("Function : ")[1:]:
    name = func.split("\n")[0].strip()
    ops = [(int(m.group(1), 16), m.group(2)) for m in
           (re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line) for line in func.split("\n")) if m]
    where = {a: i for i, (a, _) in enumerate(ops)}
    print(f"== {name}: {len(ops)} instructions")
    for op in ("HGMMA", "LDGSTS"):
        loops = []
        for i, (a, text) in enumerate(ops):
            m = re.search(r"BRA\s+(0x[0-9a-f]+)", text)
            if m and int(m.group(1), 16) < a:
                body = ops[where[int(m.group(1), 16)]:i + 1]
                if any(op in t for _, t in body):
                    loops.append(body)
        inner = min(loops, key=len)
        print(f"-- innermost loop with {op}: {len(inner)} instructions, {sum(op + '.' in t for _, t in inner)} {op}, "
              f"{sum('LDC' in t for _, t in inner)} LDC")
        if op == "LDGSTS":
            for a, t in inner:
                print(f"   {a:05x}  {t}")
