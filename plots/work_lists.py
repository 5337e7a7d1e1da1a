"""`ggemm tiles` read once for every generator that draws or counts a work list (harness/cmd_tiles.c
writes it: a '# key=value,...' line, then CSV of integers), and `ggemm cases`, the one reader of
harness/cases.csv, for the generators that need a set's shapes. Standard library only."""
import csv
import subprocess


def tiles(ggemm, *args):
    """(meta, rows) of `ggemm tiles ARGS`: meta the first line's keys as strings, rows dicts of numbers
    (ints; a split-tail piece's start and end, columns counted for its share of the k-blocks, may be fractional)."""
    lines = subprocess.run([ggemm, "tiles", *map(str, args)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    meta = dict(kv.split("=", 1) for kv in lines[0][1:].strip().split(",") if "=" in kv)
    return meta, [{k: float(v) if "." in v or "e" in v else int(v) for k, v in r.items()}
                  for r in csv.DictReader(lines[1:])]


def cases(ggemm, *args):
    """The rows of `ggemm cases ARGS --format csv`, dicts of strings."""
    out = subprocess.run([ggemm, "cases", *map(str, args), "--format", "csv"], check=True, capture_output=True,
                         text=True).stdout
    return list(csv.DictReader(out.splitlines()))
