#!/bin/sh
# usage: trace_from_csv.sh PYTHON GGEMM TRACE_DIR WORK_DIR
# ggemm trace --from, no GPU: TRACE_DIR/trace.csv becomes WORK_DIR/trace.json, which must be valid
# JSON (python -m json.tool) that Perfetto draws as the CSV says: one complete event per row at
# its times, on the thread named for its SM, slot and role, slices nested, no id 0 (Perfetto's
# idle task); and the summary it prints from the rows must be the GPU run's summary.csv. A
# committed TRACE_DIR/trace.json.gz must be exactly what the converter writes now.
set -eu
py=$1 ggemm=$2 dir=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
"$ggemm" trace --from "$dir/trace.csv" --out "$work" >"$work/report.txt"
cat "$work/report.txt"
"$py" -m json.tool "$work/trace.json" >/dev/null
"$py" - "$dir/trace.csv" "$work/trace.json" "$dir/summary.csv" "$work/report.txt" <<'PY'
import csv, json, re, sys

summary = list(csv.DictReader(l for l in open(sys.argv[3]) if not l.startswith("#")))[0]
report = open(sys.argv[4]).read()
# The report rounds to 0.1 us, 0.1 % and 0.001; summary.csv to 0.001 us and 0.0001.
for line, column, scale, tol in (("kernel", "kernel_us", 1, 0.051), ("busy", "busy_fraction", 100, 0.06),
                                 ("tail", "tail_us", 1, 0.051), ("imbalance", "imbalance", 1, 0.00051)):
    got = float(re.search(rf"^{line}: ([0-9.]+)", report, re.M).group(1))
    want = scale * float(summary[column])
    assert abs(got - want) <= tol, f"{line}: ggemm trace --from printed {got}, summary.csv says {want}"

rows = list(csv.DictReader(open(sys.argv[1])))
trace = json.load(open(sys.argv[2]))
events = trace["traceEvents"]
assert "displayTimeUnit" not in trace, "displayTimeUnit: some Perfetto versions read it as the unit of ts"
assert next(iter(trace)) == "traceEvents", "traceEvents first: some Perfetto versions skip what follows a key they do not know"
proc = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
assert all(e["ph"] in ("M", "X") for e in events), "only M and X events"
spans = [e for e in events if e["ph"] == "X" and "args" in e]
waits = [e for e in events if e["ph"] == "X" and "args" not in e]
assert len(spans) == len(rows), f"{len(spans)} complete events for {len(rows)} CSV rows"
want_waits = sum(r["role"] != "setup" and int(r["mark_ns"]) > int(r["start_ns"]) for r in rows)
assert len(waits) == want_waits, f"{len(waits)} nested waits, {want_waits} expected"
for i, (r, e) in enumerate(zip(rows, spans), 2):
    assert e["pid"] > 0 and e["tid"] > 0, f"line {i}: pid/tid 0"
    assert proc.get(e["pid"]) == "SM " + r["sm"], f"line {i}: process {proc.get(e['pid'])}"
    assert thread.get((e["pid"], e["tid"])) == f"slot {r['lane']} {r['role']}", f"line {i}: thread"
    assert round(e["ts"] * 1000) == int(r["start_ns"]), f"line {i}: ts"
    assert round((e["ts"] + e["dur"]) * 1000) == int(r["end_ns"]), f"line {i}: dur"
# Perfetto draws X events on one thread only when they nest (the trace-event format's rule).
by_thread = {}
for e in spans + waits:
    by_thread.setdefault((e["pid"], e["tid"]), []).append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
for key, slices in by_thread.items():
    stack = []
    for start, end in sorted(slices, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1] <= start:
            stack.pop()
        assert not stack or end <= stack[-1], f"thread {key}: slice [{start}, {end}] overlaps its parent"
        stack.append(end)
print(f"{sys.argv[2]}: valid, {len(spans)} complete events for {len(rows)} rows, {len(waits)} nested waits, "
      f"{len(proc)} SMs, {len(thread)} threads")
PY
if [ -f "$dir/trace.json.gz" ] && ! gzip -dc "$dir/trace.json.gz" | cmp -s - "$work/trace.json"; then
    echo "$dir/trace.json.gz is not what ggemm trace --from writes now: regenerate it (results/h200/traces/README.md)"
    exit 1
fi
