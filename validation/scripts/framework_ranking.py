#!/usr/bin/env python3
"""The paper's framework ranking at one batch, with every framework ftax predicts, measured and
predicted, from `ftax validate --format json` reports of one host run (validation/findings.md).

    framework_ranking.py [--batch 1] [--precision fp16] REPORT.json [REPORT.json ...]

One row per model measured under at least three frameworks: each framework's measured /
predicted latency in ms, then the order of the frameworks from slowest to fastest, measured
and predicted (frameworks whose measured latencies are within 5% of each other share a rank,
and so do predicted ones). A framework with no row for the model is "-".
"""
import argparse
import json
import lzma
import sys

FRAMEWORKS = [
    ("pytorch-eager", "Python eager"),
    ("torchscript", "TorchScript"),
    ("torch-compile", "torch.compile"),
    ("cuda-graph", "CUDA graph (trace)"),
    ("cuda-graph-eager", "CUDA graph (eager)"),
    ("torch-compile-reduce-overhead", "reduce-overhead"),
]
SHORT = {"pytorch-eager": "E", "torchscript": "TS", "torch-compile": "C", "cuda-graph": "G",
         "cuda-graph-eager": "GE", "torch-compile-reduce-overhead": "RO"}


def order(values):
    """Frameworks from slowest to fastest; '=' joins those within 5% of the one before (a tie,
    written in a fixed order, so that two orders compare equal when their ranks do)."""
    ranked = sorted(values.items(), key=lambda kv: -kv[1])
    groups = []
    for i, (fw, v) in enumerate(ranked):
        if i and ranked[i - 1][1] <= v * 1.05:
            groups[-1].append(SHORT[fw])
        else:
            groups.append([SHORT[fw]])
    return " > ".join(" = ".join(sorted(g)) for g in groups)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--precision", default="fp16")
    a = ap.parse_args(argv)
    rows = {}
    for path in a.reports:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:  # reports may be kept xz'd
            report_rows = json.load(f)["rows"]
        for r in report_rows:
            if r["batch"] == a.batch and r["precision"] == a.precision:
                rows[(r["model"], r["framework"])] = r
    models = sorted({m for m, _ in rows}, key=lambda m: [m for m, _ in rows].index(m))
    shown = [(fw, label) for fw, label in FRAMEWORKS if any(f == fw for _, f in rows)]
    print("| model | " + " | ".join(label for _, label in shown) + " | order, measured | order, predicted |")
    print("|---|" + "---|" * (len(shown) + 2))
    agree = total = 0
    for m in models:
        have = {fw: rows[(m, fw)] for fw, _ in shown if (m, fw) in rows}
        if len(have) < 3:
            continue
        cells = [f"{have[fw]['measured_ms']:.2f} / {have[fw]['predicted_ms']:.2f}" if fw in have else "-"
                 for fw, _ in shown]
        om = order({fw: r["measured_ms"] for fw, r in have.items()})
        op = order({fw: r["predicted_ms"] for fw, r in have.items()})
        total += 1
        agree += om == op
        print(f"| {m} | " + " | ".join(cells) + f" | {om} | {op} |")
    if total == 0:
        sys.exit("framework_ranking: no model with three or more frameworks at that batch and precision")
    print(f"\nThe predicted order equals the measured one for {agree} of {total} models "
          f"({', '.join(f'{s} {label}' for fw, label in shown for k, s in SHORT.items() if k == fw)}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
