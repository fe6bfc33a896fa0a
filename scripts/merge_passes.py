#!/usr/bin/env python3
"""Merges repeated measurement passes of one validation campaign into one file.

On a shared host the CPU side of a run can slow down for seconds to minutes (another tenant,
frequency changes), and a whole stretch of a sweep then measures the host's state rather
than the framework. The campaign therefore measures every point in two or more passes,
minutes apart, and keeps per point the pass with the lowest median latency: the quietest
observation of the host. Every pass's median stays in the row ("pass_medians_ms"), so the
spread between passes is visible next to the spread within one.

    scripts/merge_passes.py OUT.json PASS1.json PASS2.json [...]

Rows are matched by (model, framework, precision, batch, seq); a point measured in only some
passes keeps the passes it has.
"""
import json
import sys


def key(row):
    return (row.get("model"), row.get("framework"), row.get("precision"), row.get("batch"),
            row.get("seq"))


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, inputs = argv[1], argv[2:]
    merged, order, failures = {}, [], []
    for i, path in enumerate(inputs):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"merge_passes: {path}: {e}", file=sys.stderr)
            return 1
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            print(f"merge_passes: {path}: expected an object with a list 'rows'", file=sys.stderr)
            return 1
        base = {k: v for k, v in doc.items() if k not in ("rows", "failures")}
        failures += [dict(f, pass_file=path) for f in doc.get("failures", [])]
        for row in doc["rows"]:
            median = row.get("latency_ms", {}).get("median")
            if not isinstance(median, (int, float)):
                continue
            k = key(row)
            if k not in merged:
                order.append(k)
                merged[k] = {"best": row, "best_pass": i, "medians": []}
            m = merged[k]
            m["medians"].append(median)
            if median < m["best"]["latency_ms"]["median"]:
                m["best"], m["best_pass"] = row, i
    rows = []
    for k in order:
        m = merged[k]
        row = dict(m["best"])
        row["pass_medians_ms"] = m["medians"]
        row["pass_used"] = m["best_pass"]  # index into merged_from
        rows.append(row)
    base.update({"rows": rows, "failures": failures, "merged_from": inputs,
                 "merge_rule": "per point, the pass with the lowest median latency"})
    with open(out, "w") as f:
        json.dump(base, f, indent=1)
    spread = [max(r["pass_medians_ms"]) / min(r["pass_medians_ms"]) - 1 for r in rows
              if len(r["pass_medians_ms"]) > 1]
    spread.sort()
    med = spread[len(spread) // 2] * 100 if spread else float("nan")
    print(f"merge_passes: {len(rows)} points from {len(inputs)} passes; median spread between "
          f"passes {med:.1f}%, largest {spread[-1] * 100 if spread else float('nan'):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
