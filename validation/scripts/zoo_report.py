#!/usr/bin/env python3
"""Renders the model-zoo accuracy of `ftax validate --format json` reports as Markdown: the
targets on the evaluation models (data/zoo/split.json), one row per evaluation model and
framework with its error and the cause of its misses, and every model that could not run, with
its reason.

Usage: zoo_report.py REPORT.json [REPORT.json ...] [--failures FILE ...] [--side evaluation|calibration|all]

REPORT files are `ftax validate --measured ... --format json` outputs (one per host run is
fine: rows are pooled). --failures takes the measured files and export.json files of the runs
(their "failures" lists), so that a model that failed is listed, never dropped.
"""
import argparse
import json
import lzma
import os
import statistics
import sys
from collections import Counter, defaultdict

# model_zoo.py (the zoo's models and families) runs on the GPU host and stays in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import model_zoo  # noqa: E402

TARGET_WITHIN = {"cuda-graph": 90, "cuda-graph-eager": 90, "torch-compile-reduce-overhead": 90, "torchscript": 80,
                 "pytorch-eager": 80, "pytorch-eager-no-grad": 80, "torch-compile": 80}


def load(path):
    """A report or run file, plain or xz-compressed (FILE.json.xz)."""
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def spearman(xs, ys):
    """Spearman rank correlation (average ranks for ties)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else None


def ok(r):
    """A point counts as right when within the framework's tolerance, or (not for the frameworks
    that replay a CUDA graph: cuda-graph, cuda-graph-eager, torch.compile's reduce-overhead)
    inside the measured p10-p90 spread, as in `ftax validate`'s summary."""
    graph = r["framework"].startswith("cuda-graph") or r["framework"] == "torch-compile-reduce-overhead"
    return r["within_tolerance"] or (not graph and r["inside_spread"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--failures", nargs="*", default=[])
    ap.add_argument("--side", choices=["evaluation", "calibration", "all"], default="evaluation")
    a = ap.parse_args(argv)
    keep = {"evaluation": set(model_zoo.EVALUATION), "calibration": set(model_zoo.CALIBRATION),
            "all": set(model_zoo.ZOO)}[a.side]
    rows, crossovers = [], []
    for path in a.reports:
        rep = load(path)
        rows += [r for r in rep["rows"] if r["model"] in keep]
        crossovers += [c for c in rep.get("crossovers", []) if c["model"] in keep]
    if not rows:
        sys.exit(f"zoo_report: no rows of {a.side} models in {', '.join(a.reports)}")

    print(f"### Targets ({a.side} models: {len({r['model'] for r in rows})} of {len(keep)})\n")
    print("| framework | points | right (target) | median abs error | bound agrees | crossover within 2x |")
    print("|---|---|---|---|---|---|")
    for fw in TARGET_WITHIN:
        rs = [r for r in rows if r["framework"] == fw]
        if not rs:
            continue
        n = len(rs)
        good = sum(ok(r) for r in rs)
        bound = sum(r["bound_agrees"] for r in rs)
        cx = [c for c in crossovers if c["framework"] == fw]
        cxs = f"{sum(c['agrees'] for c in cx)}/{len(cx)}" if cx else "–"
        print(f"| {fw} | {n} | {good}/{n} ({100 * good / n:.0f}%; ≥{TARGET_WITHIN[fw]}%) | "
              f"{statistics.median(abs(r['error_pct']) for r in rs):.1f}% | {100 * bound / n:.0f}% (≥95%) | {cxs} |")

    # Spearman across models at each (framework, precision, batch): does ftax rank models right?
    rho = []
    groups = defaultdict(list)
    for r in rows:
        groups[(r["framework"], r["precision"], r["batch"])].append(r)
    for key, rs in sorted(groups.items()):
        s = spearman([r["predicted_ms"] for r in rs], [r["measured_ms"] for r in rs])
        if s is not None:
            rho.append((key, s, len(rs)))
    if rho:
        worst = min(rho, key=lambda t: t[1])
        meets = sum(s >= 0.95 for _, s, _ in rho)
        print(f"\nSpearman (predicted, measured) across models, per framework, precision and batch: "
              f"median {statistics.median(s for _, s, _ in rho):.3f}, {meets}/{len(rho)} groups ≥ 0.95; "
              f"lowest {worst[1]:.3f} ({' '.join(map(str, worst[0]))}, {worst[2]} models).")

    print("\n### Per model\n")
    print("| model | family | predicted from | framework | right | median error | range | main cause of misses |")
    print("|---|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[(r["model"], r["framework"])].append(r)
    order = {m: i for i, m in enumerate(model_zoo.ZOO)}
    for (m, fw), rs in sorted(by.items(), key=lambda kv: (order.get(kv[0][0], 999), kv[0][1])):
        errs = sorted(r["error_pct"] for r in rs)
        good = sum(ok(r) for r in rs)
        causes = Counter((r.get("miss_cause") or {}).get("kind") for r in rs if not ok(r))
        causes.pop(None, None)
        cause = ", ".join(f"{k} ({v})" for k, v in causes.most_common(2)) or "–"
        src = "arch spec" if rs[0].get("arch") else "trace"
        print(f"| {m} | {model_zoo.family(m) if m in model_zoo.ZOO else '?'} | {src} | {fw} | {good}/{len(rs)} | "
              f"{statistics.median(errs):+.0f}% | {errs[0]:+.0f}..{errs[-1]:+.0f}% | {cause} |")

    fails = []
    measured = {r["model"] for r in rows}
    exported = []  # models an export report says were traced: the run meant to measure them
    for path in a.failures:
        doc = load(path)
        if doc.get("kind") == "ftax-export-report":
            exported += [e["model"] for e in doc.get("exported", []) if e.get("model") in keep]
        for f in doc.get("failures", []):
            if f.get("model") in keep:
                fails.append((f.get("model"), f.get("framework", f.get("stage", "")), f.get("precision", ""),
                              f.get("batch", ""), (f.get("error") or f.get("reason") or "")[:160]))
    failed = {f[0] for f in fails}
    for m in dict.fromkeys(exported):
        if m not in measured and m not in failed:
            fails.append((m, "all", "", "", "not measured: the run ended (its time limit) before this model "
                                           "finished; no row was written"))
    if fails:
        print("\n### Models and points that could not run\n")
        print("| model | framework or stage | precision | batch | reason |")
        print("|---|---|---|---|---|")
        seen = set()
        for f in sorted(fails, key=lambda t: tuple(str(x) for x in t)):
            key = (f[0], f[1], f[2], f[4][:60])
            if key in seen:
                continue
            seen.add(key)
            # Python exception reprs carry their newlines as the two characters backslash, n.
            reason = f[4].replace("|", "/").replace("\n", " ").replace("\\n", " ")
            print(f"| {f[0]} | {f[1]} | {f[2]} | {f[3]} | {reason} |")


if __name__ == "__main__":
    main()
