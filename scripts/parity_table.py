#!/usr/bin/env python3
"""Tabulate ftax's answers for one model given in every form (tests/data/parity/corpus.json).

Per model and form (.pt, .onnx, .dynamo.onnx, --arch where a family fits) it runs
`ftax inspect` (MACs) and `ftax predict` (kernels and latency per framework, fp16, batch 1 and
32, no interval) and prints a markdown table; with --json the raw numbers. Stdlib only.

Usage:
  scripts/parity_table.py [--ftax build/ftax] [--profile validation/h200/2026-11-22b/profile-refined.json]
                          [--framework cuda-graph] [--only bert_base] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data", "parity")
FORMS = ["pt", "onnx", "dynamo.onnx", "static.onnx", "arch"]


def model_args(entry, name, form):
    if form == "arch":
        return ["--arch", entry["arch"], "--flavor", "torch"] if entry.get("arch") else None
    f = entry["forms"].get(form)
    if not f:
        return None
    path = os.path.join(DATA, f)
    if form == "pt":
        args = [path]
        for s in entry.get("pt_input_shapes") or [
                ("x" if n == "input" else n) + "=" + v for n, v in entry["inputs"].items()]:
            args += ["--input-shape", s]
        return args
    return [path]


def run(ftax, args):
    p = subprocess.run([ftax] + args, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[0] if p.stderr.strip() else "exit %d" % p.returncode
    return json.loads(p.stdout), None


def measure(ftax, profile, entry, name, form, frameworks, batches):
    margs = model_args(entry, name, form)
    if margs is None:
        return None
    out = {"form": form}
    insp = list(margs)
    if form in ("onnx", "dynamo.onnx"):
        insp += ["--dim", "batch=1"]
    if form == "arch":
        insp = ["--arch", entry["arch"], "--flavor", "torch"]
    j, err = run(ftax, ["inspect"] + insp + ["--format", "json"])
    if err:
        out["error"] = err
        return out
    out["macs"] = j["totals"]["macs"]
    out["uncounted"] = j.get("uncounted_ops", 0)
    pred = ["predict"] + margs + ["--profile", profile, "--framework", ",".join(frameworks),
                                  "--precision", "fp16", "--batch", ",".join(map(str, batches)),
                                  "--samples", "0", "--format", "json"]
    if form == "arch":
        pred += ["--dim", "seq=128"]
    j, err = run(ftax, pred)
    if err:
        out["error"] = err
        return out
    out["points"] = {"%s@%d" % (p["framework"], p["batch"]): {"ms": p["latency_ms"], "kernels": p["kernels"],
                                                              "dispatches": p["dispatches"]}
                     for p in j["predictions"]}
    out["unpriced"] = j.get("unpriced_ops", {})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ftax", default=os.path.join(ROOT, "build", "ftax"))
    ap.add_argument("--profile", default="validation/h200/2026-11-22b/profile-refined.json")
    ap.add_argument("--framework", action="append")
    ap.add_argument("--batch", default="1,32")
    ap.add_argument("--only", action="append")
    ap.add_argument("--json")
    a = ap.parse_args()
    frameworks = a.framework or ["cuda-graph"]
    batches = [int(b) for b in a.batch.split(",")]
    corpus = json.load(open(os.path.join(DATA, "corpus.json")))
    results = {}
    print("| model | form | GMACs | " + " | ".join(
        "%s b%d kernels / ms" % (f, b) for f in frameworks for b in batches) + " |")
    print("|---|---|---|" + "---|" * (len(frameworks) * len(batches)))
    for name in a.only or sorted(corpus):
        entry = corpus[name]
        results[name] = {}
        for form in FORMS:
            r = measure(a.ftax, a.profile, entry, name, form, frameworks, batches)
            if r is None:
                continue
            results[name][form] = r
            if "error" in r:
                print("| %s | %s | error: %s |" % (name, form, r["error"][:90]))
                continue
            cells = []
            for f in frameworks:
                for b in batches:
                    p = r["points"].get("%s@%d" % (f, b))
                    cells.append("%d / %.3f" % (p["kernels"], p["ms"]) if p else "-")
            print("| %s | %s | %.3f | %s |" % (name, form, r["macs"] / 1e9, " | ".join(cells)), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
