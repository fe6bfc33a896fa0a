#!/usr/bin/env python3
"""Checks that ftax counts and prices every op of every zoo model: each TorchScript trace that
export_torchscript.py wrote (DIR/NAME.PRECISION.pt with its NAME.PRECISION.json) is predicted
with `ftax predict --strict` (exit 2 when an op is neither counted nor priced, or a shape
cannot be computed) under CUDA graphs, Python eager and TorchScript, at batch 1.

No GPU is needed: the traces can be made on any machine with PyTorch, torchvision, timm and
transformers (`export_torchscript.py --device cpu --precisions fp32`).

    python3 scripts/export_torchscript.py --out /tmp/zoo --device cpu --precisions fp32
    python3 validation/scripts/zoo_strict_check.py /tmp/zoo [--ftax build/ftax] [--profile h100]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys


def input_names(ftax, pt):
    r = subprocess.run([ftax, "inspect", pt], capture_output=True, text=True)
    m = re.search(r"every input of forward \(([\w, ]+)\)", r.stderr)
    return [n.strip() for n in m.group(1).split(",")] if m else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--ftax", default="build/ftax")
    ap.add_argument("--profile", default="h100")
    a = ap.parse_args()
    bad = 0
    metas = sorted(glob.glob(os.path.join(a.dir, "*.json")))
    for k, meta_path in enumerate(metas, 1):
        with open(meta_path) as f:
            meta = json.load(f)
        pt = meta_path[:-5] + ".pt"
        shapes = ["x".join(str(d) for d in x["shape"]) + ":" + x["dtype"] for x in meta["inputs"]]
        if len(shapes) > 1:
            names = input_names(a.ftax, pt)
            if len(names) != len(shapes):
                print(f"{k}/{len(metas)} {meta['model']}: cannot name its {len(shapes)} inputs")
                bad += 1
                continue
            shapes = [f"{n}={s}" for n, s in zip(names, shapes)]
        args = [a.ftax, "predict", pt, "--profile", a.profile, "--framework", "cuda-graph,pytorch-eager,torchscript",
                "--precision", meta["precision"], "--batch", "1", "--strict", "--format", "json"]
        for s in shapes:
            args += ["--input-shape", s]
        p = subprocess.run(args, capture_output=True, text=True)
        status = "ok" if p.returncode == 0 else f"exit {p.returncode}: {p.stderr.strip().splitlines()[-1][:300]}"
        bad += p.returncode != 0
        print(f"{k}/{len(metas)} {meta['model']}: {status}", flush=True)
    print(f"{len(metas) - bad} of {len(metas)} counted and priced")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
