#!/usr/bin/env python3
"""Prints the paper's findings once per host run, measured and predicted side by side, from
`ftax validate --format json` reports (validation/findings.md, "Every host run").

    findings_across_hosts.py NAME=REPORT.json [NAME=REPORT.json ...]

Each cell is "measured / predicted". Columns: BERT-base fp16 at batch 1 under each framework
(ms); the CUDA-graph gain over Python eager there; whether TorchScript beats eager there; the
share of latency that is not kernel time at batch 1 under eager and TorchScript, over the six
models (range); BERT-deep over BERT-base and BERT-wide over BERT-base at batch 1 under eager
(depth and width); and how many of the crossover batches (first compute-bound batch per
model, framework and precision) the prediction puts on the measured batch exactly.
"""
import json
import sys

MODELS = ("bert-base", "distilbert", "bert-wide", "bert-deep", "gpt2", "resnet50")
FRAMEWORKS = ("pytorch-eager", "torchscript", "cuda-graph")


def pair(m, p, fmt="{:.2f}"):
    return (fmt.format(m) + " / " + fmt.format(p)) if m is not None and p is not None else "-"


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("| host run | BERT-base fp16 b1 eager / TorchScript / CUDA graph (ms) | CUDA-graph gain | "
          "TorchScript faster than eager | overhead share at b1 (eager, TorchScript) | "
          "depth (deep / base, eager b1) | width (wide / base, eager b1) | crossover on the batch |")
    print("|---|---|---|---|---|---|---|---|")
    for arg in argv[1:]:
        name, path = arg.split("=", 1)
        try:
            with open(path) as f:
                report = json.load(f)
            rows = {(r["model"], r["framework"], r["precision"], r["batch"]): r for r in report["rows"]}
            crossovers = report["crossovers"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"findings_across_hosts: {path}: {e}", file=sys.stderr)
            return 1

        def get(m, fw, b=1, p="fp16"):
            return rows.get((m, fw, p, b))

        base = [get("bert-base", fw) for fw in FRAMEWORKS]
        cells = [" ; ".join(pair(r["measured_ms"], r["predicted_ms"]) if r else "-" for r in base)]
        e, t, g = base
        cells.append(pair(e["measured_ms"] / g["measured_ms"], e["predicted_ms"] / g["predicted_ms"],
                          "{:.1f}x") if e and g else "-")
        cells.append(f"{'yes' if t['measured_ms'] < e['measured_ms'] else 'no'} / "
                     f"{'yes' if t['predicted_ms'] < e['predicted_ms'] else 'no'}" if e and t else "-")
        ms, ps = [], []
        for m in MODELS:
            for fw in FRAMEWORKS[:2]:
                r = get(m, fw)
                if r:
                    ms.append(r["measured_framework_ms"] / r["measured_ms"])
                    ps.append(max(0.0, r["predicted_ms"] - r["predicted_compute_ms"]) / r["predicted_ms"])
        cells.append(f"{100 * min(ms):.0f}–{100 * max(ms):.0f}% / {100 * min(ps):.0f}–{100 * max(ps):.0f}%"
                     if ms else "-")
        for other in ("bert-deep", "bert-wide"):
            o, b = get(other, "pytorch-eager"), get("bert-base", "pytorch-eager")
            cells.append(pair(o["measured_ms"] / b["measured_ms"], o["predicted_ms"] / b["predicted_ms"],
                              "{:.2f}x") if o and b else "-")
        same = sum(1 for c in crossovers if c.get("measured") == c.get("predicted"))
        cells.append(f"{same}/{len(crossovers)}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
