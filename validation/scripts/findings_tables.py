#!/usr/bin/env python3
"""Prints the paper's findings, predicted and measured, from an `ftax validate --format json`
report (validation/findings.md). Usage: findings_tables.py REPORT.json"""
import json
import sys


def main():
    rep = json.load(open(sys.argv[1]))
    rows = {(r["model"], r["framework"], r["precision"], r["batch"]): r for r in rep["rows"]}

    def get(m, f, p, b):
        return rows.get((m, f, p, b))

    print("### Framework overhead share at batch 1 (fp16)\n")
    print("| model | framework | measured ms | measured overhead share | predicted ms | predicted overhead share |")
    print("|---|---|---|---|---|---|")
    for m in ("bert-base", "distilbert", "bert-wide", "bert-deep", "gpt2", "resnet50"):
        for f in ("pytorch-eager", "torchscript", "cuda-graph"):
            r = get(m, f, "fp16", 1)
            if not r:
                continue
            ms = r["measured_framework_ms"] / r["measured_ms"]
            ps = max(0.0, r["predicted_ms"] - r["predicted_compute_ms"]) / r["predicted_ms"]
            print(f"| {m} | {f} | {r['measured_ms']:.2f} | {100 * ms:.0f}% | {r['predicted_ms']:.2f} | {100 * ps:.0f}% |")

    print("\n### Width and depth at small batch (fp16, ms, measured / predicted)\n")
    print("| framework | batch | bert-base | bert-wide (2x hidden, 2x FFN) | bert-deep (2x layers) |")
    print("|---|---|---|---|---|")
    for f in ("pytorch-eager", "torchscript", "cuda-graph"):
        for b in (1, 8, 64):
            cells = []
            for m in ("bert-base", "bert-wide", "bert-deep"):
                r = get(m, f, "fp16", b)
                cells.append(f"{r['measured_ms']:.2f} / {r['predicted_ms']:.2f}" if r else "-")
            print(f"| {f} | {b} | " + " | ".join(cells) + " |")

    print("\n### Frameworks at batch 1 (BERT-base, ms, measured / predicted)\n")
    print("| precision | pytorch-eager | torchscript | cuda-graph | CUDA-graph gain over eager (measured / predicted) |")
    print("|---|---|---|---|---|")
    for p in ("fp16", "fp32"):
        e, t, g = (get("bert-base", f, p, 1) for f in ("pytorch-eager", "torchscript", "cuda-graph"))
        if e and t and g:
            print(f"| {p} | {e['measured_ms']:.2f} / {e['predicted_ms']:.2f} | {t['measured_ms']:.2f} / "
                  f"{t['predicted_ms']:.2f} | {g['measured_ms']:.2f} / {g['predicted_ms']:.2f} | "
                  f"{e['measured_ms'] / g['measured_ms']:.1f}x / {e['predicted_ms'] / g['predicted_ms']:.1f}x |")

    print("\n### Batch at which each model turns compute-bound (first batch on the 1..128 grid)\n")
    print("| model | framework | precision | measured | predicted |")
    print("|---|---|---|---|---|")
    for c in rep["crossovers"]:
        fmt = lambda v: str(v) if v is not None else f">{c['max_batch']}"
        print(f"| {c['model']} | {c['framework']} | {c['precision']} | {fmt(c['measured'])} | {fmt(c['predicted'])} |")


if __name__ == "__main__":
    main()
