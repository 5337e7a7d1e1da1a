"""The one writer of the generated blocks of the Markdown files: the text between
`<!-- NAME:begin -->` and `<!-- NAME:end -->`, each marker on a line of its own.

A generator names the block and the files it may be in, not the one file that holds it: a stage's
blocks may sit in its README.md or in its TRIALS.md (stage_files), the front door's in README.md or
in a page of docs/ (front_files), so a block moves between them without its generator changing.
Standard library only.
"""
import argparse
import difflib
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stage_files(stage):
    """The files a stage's generated blocks may be in: its lesson (README.md) and its lab notebook
    (TRIALS.md, where there is one)."""
    return [os.path.join(ROOT, stage, "README.md"), os.path.join(ROOT, stage, "TRIALS.md")]


def front_files():
    """The files the repository-wide blocks may be in: the top README.md and the pages of docs/."""
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def _pattern(name):
    return re.compile(rf"(<!-- {re.escape(name)}:begin -->\n).*?(<!-- {re.escape(name)}:end -->)", re.S)


def _rel(path):
    return os.path.relpath(path, ROOT)


def rerun():
    """The command that runs this generator again, writing: its command line without --check."""
    script = os.path.abspath(sys.argv[0])
    if script.startswith(ROOT + os.sep):
        script = _rel(script)
    return " ".join(["python3", script] + [a for a in sys.argv[1:] if a != "--check"])


def _around_change(line, lines, width=200):
    """A diff line cut to `width` characters around where it first differs from the nearest line of
    the other sign, so that a long line's change is in what is printed."""
    if len(line) <= width or line[0] not in "+-":
        return line[:width]
    others = [o for o in lines if o[:1] in "+-" and o[0] != line[0]]
    if not others:
        return line[:width]
    other = max(others, key=lambda o: len(os.path.commonprefix([line[1:], o[1:]])))
    at = len(os.path.commonprefix([line[1:], other[1:]]))
    start = max(0, at - width // 4)
    return line[0] + ("…" if start else "") + line[1 + start:1 + start + width]


def replace_block(paths, name, text, check=False, prog=None):
    """Put `text` between the NAME markers in every file of `paths` (one path or a list; missing
    files are skipped) that holds them. Returns True if a block changed (with check=True: would
    change, and nothing is written), False if every block found already holds `text`, None if no
    file holds the block. Prints one line per file that holds it, prefixed with `prog` (default:
    the running script's name)."""
    prog = prog or os.path.basename(sys.argv[0])
    paths = [paths] if isinstance(paths, str) else list(paths)
    pattern, found, changed = _pattern(name), False, False
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            body = f.read()
        new, n = pattern.subn(lambda m: m.group(1) + text + "\n" + m.group(2), body)
        if not n:
            continue
        found = True
        where = f"{_rel(path)} [{name}]"
        if new == body:
            print(f"{prog}: unchanged {where}")
            continue
        changed = True
        if check:
            print(f"{prog}: would change {where} ({rerun()} rewrites it)")
            # What differs, briefly: a failure on another machine then says why without a rerun there.
            diff = list(difflib.unified_diff(body.splitlines(), new.splitlines(), "committed", "generated", n=0,
                                             lineterm=""))[2:14]
            for line in diff:
                print(f"{prog}:   {_around_change(line, diff)}")
            continue
        with open(path, "w") as f:
            f.write(new)
        print(f"{prog}: updated {where}")
    return changed if found else None


def ggemm_args(description, blocks):
    """A generator's command line that reads `ggemm`'s no-GPU commands: --ggemm PATH (default the
    build's) and --check. None, after one line, when that ggemm is not built: `blocks` (what the
    generator writes) stay as they are."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--ggemm", default=os.path.join(ROOT, "build", "bin", "ggemm"))
    ap.add_argument("--check", action="store_true", help="only say whether the blocks would change")
    a = ap.parse_args()
    if not os.access(a.ggemm, os.X_OK):
        print(f"{os.path.basename(sys.argv[0])}: {a.ggemm} not built: {blocks} not regenerated")
        return None
    return a


def write_block(paths, name, text, check=False):
    """replace_block as a generator's exit code: 1 when no file of `paths` holds the block (after
    missing()'s line) or, with check, when it would change; else 0."""
    changed = replace_block(paths, name, text, check)
    if changed is None:
        print(missing(name, paths))
        return 1
    return 1 if changed and check else 0


def missing(name, paths, prog=None):
    """The line a generator prints for a block that no file of `paths` holds."""
    prog = prog or os.path.basename(sys.argv[0])
    paths = [paths] if isinstance(paths, str) else list(paths)
    return f"{prog}: no <!-- {name}:begin/end --> block in " + " or ".join(_rel(p) for p in paths)
