#!/usr/bin/env python3
"""Do a host's bench chains, or its whole models, carry what differs from host to host?

For host runs with a bench that times per-op chains and Python eager runs of the evaluation
models (eager.json), prints two tables (no GPU needed):

1. per host run: the bench's 64-op chain of small adds (per op, Python eager and TorchScript)
   beside the median ratio of its models' measured latencies to one reference host run's,
   point by point (Python eager and TorchScript, fp16);
2. per host run: Python eager points right (within 15% or inside p10-p90) when the host is
   priced from its own bench, and when its Python eager costs are instead the median of the
   other host runs' (each from its own bench), with the rest of its profile its own.

Run from a folder holding data/models/ (a host run's models.tar.xz unpacked), since the rows
name data/models/NAME.fp16.pt:

    validation/scripts/eager_costs_across_hosts.py --ftax build/ftax \\
        validation/h200/2026-11-26y validation/h200/2026-11-26z validation/h200/2026-11-26af \\
        validation/h200/2026-11-26ai validation/h100/2026-11-26ak validation/h200/2026-11-26ad

Each host's profile is made with `ftax calibrate BENCH --prior` the refined profiles of host
runs p, q, s and u, as the zoo reports are.
"""
import argparse
import copy
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRIOR = ["h200/2026-11-23p", "h100/2026-11-23q", "h100/2026-11-25s", "h100/2026-11-25u"]


def load(path):
    """path or path.xz, parsed; None when neither exists."""
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    if os.path.exists(path + ".xz"):
        with lzma.open(path + ".xz") as f:
            return json.load(f)
    return None


def chain_us(bench, framework):
    """Per-op cost of the bench's 64-op chain of small adds (no modules), or None."""
    for r in bench.get("dispatch", []):
        if (r.get("framework") == framework and r.get("class") == "kernel" and r.get("n_ops") == 64
                and not r.get("op") and not r.get("modules") and not r.get("elements") and r.get("mode", "inference") == "inference"):
            return r["call_us"]["median"] / 64
    return None


def medians(doc, framework):
    return {(r["model"], r["batch"]): r["latency_ms"]["median"] for r in (doc or {}).get("rows", [])
            if r.get("framework") == framework and r.get("precision") == "fp16"}


def pooled(profiles, framework, others):
    """The framework's costs, each the median of the other hosts' (keys the first one has)."""
    f = copy.deepcopy(profiles[others[0]]["frameworks"][framework])

    def med(objs):
        vals = [o["value"] for o in objs if isinstance(o, dict) and o.get("value") is not None]
        if not vals:
            return None
        out = copy.deepcopy(next(o for o in objs if isinstance(o, dict)))
        out["value"] = statistics.median(vals)
        return out

    for key, val in list(f.items()):
        if isinstance(val, dict) and "value" in val:
            m = med([profiles[o]["frameworks"][framework].get(key) for o in others])
            if m:
                f[key] = m
        elif isinstance(val, dict) and key in ("dispatch_us", "op_us", "op_launch_us"):
            for k in list(val):
                m = med([profiles[o]["frameworks"][framework].get(key, {}).get(k) for o in others])
                if m:
                    val[k] = m
    return f


def right(ftax, measured, profile, models, framework, tmp):
    """(points right, points, median |error| %) of one framework's rows."""
    prof = os.path.join(tmp, "profile.json")
    rep = os.path.join(tmp, "report.json")
    with open(prof, "w") as f:
        json.dump(profile, f)
    subprocess.run([ftax, "validate", "--measured", measured, "--profile", prof, "--report-models", models,
                    "--format", "json", "-o", rep], capture_output=True, text=True, check=True)
    rows = load(rep)
    rows = [r for r in (rows if isinstance(rows, list) else rows["rows"]) if r["framework"] == framework]
    ok = sum(1 for r in rows if r["within_tolerance"] or r["inside_spread"])
    return ok, len(rows), statistics.median(abs(r["error_pct"]) for r in rows) if rows else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="host run folders (validation/GPU/DATE+ID)")
    ap.add_argument("--ftax", default=os.path.join(ROOT, "build", "ftax"))
    ap.add_argument("--reference", default="", help="host run the model ratios are to (default: the third)")
    a = ap.parse_args()
    if len(a.runs) < 3:
        ap.error("give at least three host runs")
    ref = a.reference or a.runs[min(2, len(a.runs) - 1)]
    models = subprocess.check_output([sys.executable, os.path.join(ROOT, "scripts", "model_zoo.py"),
                                      "--side", "evaluation"], text=True).strip()
    prior = [os.path.join(ROOT, "validation", p, "profile-refined.json") for p in PRIOR]
    with tempfile.TemporaryDirectory() as tmp:
        profiles, eager, script = {}, {}, {}
        print("| host run | eager chain µs/op | TorchScript chain µs/op | eager models / reference | TorchScript models / reference |")
        print("|---|---|---|---|---|")
        benches = {}
        for run in a.runs:
            bench = load(os.path.join(run, "bench.measurements.json"))
            if bench is None:
                sys.exit(f"{run}: no bench.measurements.json(.xz)")
            benches[run] = bench
            bpath = os.path.join(tmp, "bench.json")
            with open(bpath, "w") as f:
                json.dump(bench, f)
            ppath = os.path.join(tmp, os.path.basename(run) + ".profile.json")
            subprocess.run([a.ftax, "calibrate", bpath, "-o", ppath, "--prior", *prior], capture_output=True,
                           check=True)
            profiles[run] = load(ppath)
            doc = load(os.path.join(run, "eager.json"))
            epath = os.path.join(tmp, os.path.basename(run) + ".eager.json")
            with open(epath, "w") as f:
                json.dump(doc or {"rows": []}, f)
            eager[run] = (epath, medians(doc, "pytorch-eager"))
            script[run] = medians(load(os.path.join(run, "torchscript-cudagraph.json")), "torchscript")
        for run in a.runs:
            def ratio(mine, theirs):
                r = [mine[k] / theirs[k] for k in mine if k in theirs]
                return f"{statistics.median(r):.2f} ({len(r)} points)" if r else "–"
            ce, ct = chain_us(benches[run], "pytorch-eager"), chain_us(benches[run], "torchscript")
            print(f"| {run} | {ce or float('nan'):.2f} | {ct or float('nan'):.2f} | "
                  f"{ratio(eager[run][1], eager[ref][1])} | {ratio(script[run], script[ref])} |")
        print()
        print("| host run | Python eager right, own bench | median error | costs the others' median | median error |")
        print("|---|---|---|---|---|")
        tot = [0, 0, 0]
        for run in a.runs:
            own = right(a.ftax, eager[run][0], profiles[run], models, "pytorch-eager", tmp)
            p = copy.deepcopy(profiles[run])
            p["frameworks"]["pytorch-eager"] = pooled(profiles, "pytorch-eager", [o for o in a.runs if o != run])
            pool = right(a.ftax, eager[run][0], p, models, "pytorch-eager", tmp)
            tot = [tot[0] + own[0], tot[1] + pool[0], tot[2] + own[1]]
            print(f"| {run} | {own[0]}/{own[1]} | {own[2]:.1f}% | {pool[0]}/{pool[1]} | {pool[2]:.1f}% |")
        print(f"| all | {tot[0]}/{tot[2]} | | {tot[1]}/{tot[2]} | |")


if __name__ == "__main__":
    sys.exit(main())
