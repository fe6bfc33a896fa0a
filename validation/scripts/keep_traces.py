#!/usr/bin/env python3
"""Keeps the TorchScript files that validation rows were measured with, small enough to commit.

For every row of a validation measurements file that names a TorchScript file ("source"), the
file is copied to --models-out with its weights zeroed and the archive deflated (ftax reads only
dims and dtypes), and the row's "source" is rewritten to data/models/NAME.pt, where the copies
are committed. `ftax validate --measured` can then predict those rows from the very trace that
ran, on any machine.
"""
import argparse
import json
import os
import shutil
import sys

# trace_archive.py (which zeroes a trace's weights) stays in the top-level scripts/, beside
# export_torchscript_fixtures.py, which zeroes the test fixtures with it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("measurements")
    ap.add_argument("--models-out", required=True)
    ap.add_argument("--prefix", default="data/models")
    a = ap.parse_args()
    from trace_archive import zero_and_deflate
    os.makedirs(a.models_out, exist_ok=True)
    doc = json.load(open(a.measurements))
    done = {}
    for row in doc.get("rows", []):
        src = row.get("source")
        if not src or not src.endswith(".pt"):
            continue
        name = os.path.basename(src)
        if src not in done:
            if os.path.exists(src):
                dst = os.path.join(a.models_out, name)
                if not os.path.exists(dst):
                    # Zeroed under a temporary name, then renamed: a run killed in between (a
                    # stage's time running out) leaves no full-size copy behind that a later
                    # run would take for a zeroed one.
                    shutil.copyfile(src, dst + ".tmp")
                    zero_and_deflate(dst + ".tmp")
                    os.replace(dst + ".tmp", dst)
            done[src] = os.path.join(a.prefix, name)
        row["source"] = done[src]
    json.dump(doc, open(a.measurements, "w"), indent=1)
    print("kept %d TorchScript files in %s" % (len(done), a.models_out), file=sys.stderr)


if __name__ == "__main__":
    main()
