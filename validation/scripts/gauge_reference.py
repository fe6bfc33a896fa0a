#!/usr/bin/env python3
"""Where a host run's model rows ran on the bench's CPU-speed scale.

`ftax calibrate` brings every gauged bench row to the host's fast state, the 10th percentile of
the bench rows' CPU gauge (src/calibrate/cpu_gauge.h), and ftax predicts at that speed. The
model rows a campaign measures carry the same gauge, read around their own timing. Per host
run with both, this prints the bench's gauge at its 10th and 50th percentiles, and per group of
model rows (calibration or evaluation models of data/zoo/split.json; Python eager or
torch.compile) their median gauge, its ratio to the bench's fast state, and q: the percentile
of the bench's readings at which the bench read the group's median (0.10 would be the fast
state itself), and the median's ratio to the bench's median reading (the typical speed
`ftax predict --whatif cpu=typical` prices at). Then, per group, the median over host runs of
q and of the ratios. A ratio of 1.14 to the fast state means the group's rows ran their
CPU-side work about 14% slower than ftax prices it.

    validation/scripts/gauge_reference.py [RUN_DIR ...]      # default: validation/h*/*

Model rows come from every JSON file of the run (xz-compressed or not) with a "rows" list,
except the bench, reports, profiles and exports; a row found in two files (a merged file and
its parts) counts once. Stdlib only.
"""
import argparse
import glob
import json
import lzma
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = ("bench", "report", "profile", "export", "host", "layer-shapes")


def load(path):
    with (lzma.open if path.endswith(".xz") else open)(path, "rt") as f:
        return json.load(f)


def quantile(values, p):
    """The p-th quantile (0..1), linearly interpolated, as src/calibrate/cpu_gauge.cc takes it."""
    s = sorted(values)
    pos = p * (len(s) - 1)
    i = int(pos)
    if i + 1 >= len(s):
        return s[-1]
    return s[i] + (pos - i) * (s[i + 1] - s[i])


def rank(values, v):
    """The q at which quantile(values, q) == v (clamped to 0..1): the inverse of quantile."""
    s = sorted(values)
    if v <= s[0]:
        return 0.0
    if v >= s[-1]:
        return 1.0
    for i in range(len(s) - 1):
        if s[i] <= v <= s[i + 1]:
            f = 0.0 if s[i + 1] == s[i] else (v - s[i]) / (s[i + 1] - s[i])
            return (i + f) / (len(s) - 1)
    return 1.0


def gauged(value):
    return isinstance(value, (int, float)) and value > 0


def bench_gauges(run):
    paths = sorted(glob.glob(os.path.join(run, "bench.measurements.json*")))
    if not paths:
        return []
    return [r["cpu_gauge_us"] for r in load(paths[0]).get("dispatch", []) if gauged(r.get("cpu_gauge_us"))]


def model_rows(run):
    rows, seen = [], set()
    for path in sorted(glob.glob(os.path.join(run, "*.json")) + glob.glob(os.path.join(run, "*.json.xz"))):
        if os.path.basename(path).startswith(SKIP):
            continue
        try:
            doc = load(path)
        except (OSError, ValueError, EOFError, lzma.LZMAError):
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            continue
        for r in doc["rows"]:
            if not isinstance(r, dict) or not gauged(r.get("cpu_gauge_us")) or "model" not in r:
                continue
            lat = r.get("latency_ms")
            key = (r["model"], r.get("framework"), r.get("precision"), r.get("batch"), r["cpu_gauge_us"],
                   lat.get("median") if isinstance(lat, dict) else lat)
            if key not in seen:
                seen.add(key)
                rows.append(r)
    return rows


def family(framework):
    if framework in ("pytorch-eager", "pytorch-eager-no-grad"):
        return "eager"
    if str(framework).startswith("torch-compile"):
        return "compile"
    return None


def analyse(runs, split):
    """[(run, bench n, p10, p50, side, family, n, median, median/p10, q, median/p50)]"""
    out = []
    for run in runs:
        bench = bench_gauges(run)
        if len(bench) < 2:
            continue
        groups = {}
        for r in model_rows(run):
            fam = family(r.get("framework"))
            side = split.get(r["model"])
            if fam and side:
                groups.setdefault((side, fam), []).append(r["cpu_gauge_us"])
        p10, p50 = quantile(bench, 0.1), quantile(bench, 0.5)
        for (side, fam), g in sorted(groups.items()):
            m = statistics.median(g)
            out.append((run, len(bench), p10, p50, side, fam, len(g), m, m / p10, rank(bench, m), m / p50))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", help="host-run folders (default: validation/h*/*)")
    a = ap.parse_args(argv)
    runs = a.runs or sorted(d for d in glob.glob(os.path.join(ROOT, "validation", "h*", "*")) if os.path.isdir(d))
    split_doc = load(os.path.join(ROOT, "data", "zoo", "split.json"))
    split = {m: side for side in ("calibration", "evaluation") for m in split_doc[side]}
    rows = analyse(runs, split)
    if not rows:
        print("no host run has both a gauged bench and gauged model rows", file=sys.stderr)
        return 1
    print("| host run | bench rows | bench p10 µs | bench p50 µs | models | framework | rows | median µs | median / p10 | q "
          "| median / p50 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run, nb, p10, p50, side, fam, n, m, ratio, q, typical in rows:
        name = os.path.relpath(run, os.path.join(ROOT, "validation")) if run.startswith(ROOT) else run
        print(f"| {name} | {nb} | {p10:.2f} | {p50:.2f} | {side} | {fam} | {n} | {m:.2f} | {ratio:.2f} | {q:.2f} "
              f"| {typical:.2f} |")
    print()
    print("| models | framework | host runs | q: median (min-max) | median / p10: median (min-max) "
          "| median / p50: median (min-max) |")
    print("|---|---|---|---|---|---|")
    for side in ("calibration", "evaluation"):
        for fam in ("eager", "compile"):
            g = [r for r in rows if r[4] == side and r[5] == fam]
            if not g:
                continue
            cols = []
            for k in (9, 8, 10):
                v = [r[k] for r in g]
                cols.append(f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})")
            print(f"| {side} | {fam} | {len(g)} | " + " | ".join(cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
