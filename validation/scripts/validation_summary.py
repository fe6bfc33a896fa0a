#!/usr/bin/env python3
"""The generated blocks of docs/validation.md: `zoo_report.py` run on the reports that each block's
BEGIN marker names, comma-separated (with each host run's eager.json, compile.json, torchscript-cudagraph.json
and export.json, or their .xz, as failure lists).

    validation_summary.py --check docs/validation.md   # exit 1 when a block is stale
    validation_summary.py --write docs/validation.md   # rewrite the blocks
"""
import argparse
import io
import os
import re
import sys
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK = re.compile(r"(<!-- BEGIN zoo_report (\S+) -->\n)(.*?)(<!-- END zoo_report -->)", re.S)


def render(reports):
    reports = reports.split(",")
    failures = []
    for report in reports:
        run = os.path.dirname(report)
        for f in ("eager.json", "compile.json", "torchscript-cudagraph.json", "export.json"):
            path = os.path.join(ROOT, run, f)
            if os.path.exists(path) or os.path.exists(path + ".xz"):  # run files may be kept xz'd
                failures.append(path if os.path.exists(path) else path + ".xz")
    argv = [os.path.join(ROOT, r) for r in reports] + (["--failures"] + failures if failures else [])
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = zoo_report.main(argv)
    if rc:
        raise SystemExit(f"zoo_report.py failed on {','.join(reports)}")
    return buf.getvalue().replace("### ", "#### ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check")
    g.add_argument("--write")
    a = ap.parse_args()
    path = a.check or a.write
    text = open(path).read()
    blocks = list(BLOCK.finditer(text))
    if not blocks:
        print(f"{path}: no '<!-- BEGIN zoo_report REPORT -->' ... '<!-- END zoo_report -->' block", file=sys.stderr)
        return 2
    # Every block, last first, so that the earlier blocks' offsets stay valid while rewriting.
    stale = []
    for m in reversed(blocks):
        want = render(m.group(2))
        if m.group(3) != want:
            stale.append(m.group(2))
            text = text[:m.start(3)] + want + text[m.end(3):]
    if a.check:
        if stale:
            print(f"{path}: the generated block of {', '.join(reversed(stale))} is stale; "
                  "run validation/scripts/regen_validation_summary.sh", file=sys.stderr)
            return 1
        return 0
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
