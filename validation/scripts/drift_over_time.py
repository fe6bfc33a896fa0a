#!/usr/bin/env python3
"""How the host's speed moved over a validation run measured in rounds (ftax validate --rounds,
validate_eager.py --rounds): the run's visits in the order they were made, cut into BINS
stretches of equal length; per stretch and framework, the median over its visits of (the
visit's median latency / the point's pooled median), separately for points whose latency is
mostly host time (CPU-bound: kernel time under half the latency) and the others (GPU-bound),
and the host probe's median over the run's (where visits were probed). A stretch at 1.3 in the
CPU-bound column ran the host side 30% slower than the run as a whole.

    validation/scripts/drift_over_time.py RUN.json [RUN.json ...] [--bins 12] [--log CAMPAIGN.log]
                               [--plot drift.png]

--plot draws every visit (its median over its point's pooled median, against its place in the
run; host-bound and GPU-bound points apart, and the probe), one panel per run file and
framework, with gnuplot.

Rows record each visit's place in the run ("visit_order"). Files written before that was
recorded need --log, the campaign log whose "round r/R" progress lines give the visit order
(each line is matched to its row by framework, model, batch and the visit's median).
"""
import argparse
import json
import re
import statistics
import sys


def visits_from_rows(rows):
    """[(order, row, visit index)] from rows that record visit_order."""
    out = []
    for r in rows:
        for i, o in enumerate(r.get("visit_order") or []):
            out.append((o, r, i))
    return out


def visits_from_log(rows, log_lines):
    """The same from a campaign log's progress lines; lines that match no row are skipped."""
    pat_eager = re.compile(r"round \d+/\d+ eager (\S+) (fp\d+|bf16) b(\d+): ([\d.]+) ms")
    pat_ts = re.compile(r"\[validate\] round \d+/\d+ (torchscript|cuda-graph) (\S+) b(\d+): ([\d.]+) ms")
    out = []
    for n, line in enumerate(log_lines):
        m = pat_eager.search(line)
        if m:
            fw, model, prec, batch, v = "pytorch-eager", m[1], m[2], int(m[3]), float(m[4])
        else:
            m = pat_ts.search(line)
            if not m:
                continue
            fw, model, prec, batch, v = m[1], m[2], None, int(m[3]), float(m[4])
        for r in rows:
            if (r["framework"], r["model"], r["batch"]) != (fw, model, batch) or \
                    (prec and r["precision"] != prec):
                continue
            hits = [i for i, x in enumerate(r.get("visit_medians_ms") or []) if abs(x - v) <= 0.006]
            if len(hits) == 1:
                out.append((n, r, hits[0]))
                break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--bins", type=int, default=12)
    ap.add_argument("--log", default="")
    ap.add_argument("--plot", default="", help="write the visits as a plot (.png or .svg, gnuplot)")
    a = ap.parse_args()
    panels = []  # (title, {series: [(x, y)]})
    log_lines = open(a.log).read().splitlines() if a.log else []
    print("| run | framework | visits | " + " | ".join(f"{k + 1}" for k in range(a.bins)) + " |")
    print("|---|---|---|" + "---|" * a.bins)
    for path in a.runs:
        try:
            rows = json.load(open(path))["rows"]
        except (OSError, ValueError, KeyError) as e:
            print(f"drift_over_time: {path}: {e}", file=sys.stderr)
            return 1
        rows = [r for r in rows if len(r.get("visit_medians_ms") or []) > 1]
        if not rows:
            print(f"drift_over_time: {path}: no row was visited more than once (not measured in rounds)",
                  file=sys.stderr)
            return 1
        visits = visits_from_rows(rows) or visits_from_log(rows, log_lines)
        if not visits:
            print(f"drift_over_time: {path}: rows do not record visit_order; give --log CAMPAIGN.log",
                  file=sys.stderr)
            return 1
        visits.sort(key=lambda v: v[0])
        probes = [p for r in rows for p in (r.get("visit_probe_us") or [])]
        probe_median = statistics.median(probes) if probes else None
        for fw in sorted({r["framework"] for r in rows}):
            mine = [v for v in visits if v[1]["framework"] == fw]
            size = max(1, -(-len(mine) // a.bins))
            cells = {"CPU-bound": [], "GPU-bound": [], "probe": []}
            for k in range(0, len(mine), size):
                chunk = mine[k:k + size]
                for kind in ("CPU-bound", "GPU-bound"):
                    ratios = [r["visit_medians_ms"][i] / r["latency_ms"]["median"] for _, r, i in chunk
                              if (r.get("kernel_ms", 0) < 0.5 * r["latency_ms"]["median"]) == (kind == "CPU-bound")]
                    cells[kind].append(f"{statistics.median(ratios):.2f}" if ratios else "–")
                pr = [r["visit_probe_us"][i] / probe_median for _, r, i in chunk
                      if probe_median and len(r.get("visit_probe_us") or []) > i]
                cells["probe"].append(f"{statistics.median(pr):.2f}" if pr else "–")
            for kind, vals in cells.items():
                if all(v == "–" for v in vals):
                    continue
                print(f"| {path.split('/')[-1]} | {fw}, {kind} | {len(mine)} | " + " | ".join(vals) + " |")
            series = {"host-bound points": [], "GPU-bound points": [], "host probe": []}
            for x, (_, r, i) in enumerate(mine):
                cpu = r.get("kernel_ms", 0) < 0.5 * r["latency_ms"]["median"]
                series["host-bound points" if cpu else "GPU-bound points"].append(
                    (x, r["visit_medians_ms"][i] / r["latency_ms"]["median"]))
                if probe_median and len(r.get("visit_probe_us") or []) > i:
                    series["host probe"].append((x, r["visit_probe_us"][i] / probe_median))
            panels.append((f"{path.split('/')[-1]}: {fw}", series))
    if a.plot:
        return plot(panels, a.plot)
    return 0


def plot(panels, path):
    """One panel per (run, framework): each visit's ratio against its place in the run."""
    import os
    import subprocess
    data, script = path + ".dat", path + ".gp"
    png = path.endswith(".png")
    cols = 2 if len(panels) > 1 else 1
    rows = -(-len(panels) // cols)
    with open(data, "w") as d, open(script, "w") as g:
        g.write(f"set terminal {'pngcairo' if png else 'svg'} size {560 * cols},{340 * rows}\n")
        g.write(f"set output '{path}'\nset multiplot layout {rows},{cols}\n")
        g.write("set logscale y 2\nset yrange [0.5:2]\nset grid\nset key top left font ',8'\n"
                "set xlabel 'visit, in the order the run made them'\n"
                "set ylabel 'visit median / point median'\n")
        block = 0
        for title, series in panels:
            g.write(f"set title '{title}' font ',9' noenhanced\n")
            parts = []
            for (name, pts), color in zip(series.items(), (1, 3, 7)):
                if not pts:
                    continue
                for x, y in pts:
                    d.write(f"{x} {y}\n")
                d.write("\n\n")
                parts.append(f"'{data}' index {block} using 1:2 with points pt 7 ps 0.35 lc {color} "
                             f"title '{name}'")
                block += 1
            g.write("plot " + ", ".join(parts) + "\n")
        g.write("unset multiplot\n")
    res = subprocess.run(["gnuplot", script], capture_output=True, text=True)
    if res.returncode != 0:
        print(f"drift_over_time: gnuplot failed or is missing: {res.stderr.strip()[:300]}; data in {data}",
              file=sys.stderr)
        return 1
    os.remove(script)
    os.remove(data)
    print(f"plot: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
