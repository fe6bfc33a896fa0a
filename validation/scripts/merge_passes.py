#!/usr/bin/env python3
"""Merges repeated measurement passes of one validation campaign into one file.

On a shared host the CPU side of a run can slow down for seconds to minutes (another tenant,
frequency changes), and a whole stretch of a sweep then measures the host's state rather
than the framework. The campaign therefore measures every point in two or more passes,
minutes apart, and keeps per point the pass with the lowest median latency: the quietest
observation of the host. Every pass's median stays in the row ("pass_medians_ms", one entry
per file of "merged_from", null where that pass did not measure the point), so the spread
between passes is visible next to the spread within one. Rows without a positive numeric
latency_ms.median are not merged and are listed under "failures".

    validation/scripts/merge_passes.py OUT.json PASS1.json PASS2.json [...]

Rows are matched by (model, framework, precision, batch, seq); a point measured in only some
passes keeps the passes it has. A pass may time without recording kernels (validate_eager.py
--no-kernels: its rows carry "kernels_pending"); where such a pass is the fastest, the row takes
its kernel fields from a pass that recorded them ("kernels_from_pass") and its measured
framework time is its own median less that pass's kernel time.
"""
import json
import sys


# What a profiled pass adds to a row (validate_eager.py's profiled_fields).
KERNEL_FIELDS = ("kernels_per_iter", "kernel_ms", "aten_ops_per_iter", "kernels")


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
        if i == 0:  # the header of the first pass (started, host, ...)
            base = {k: v for k, v in doc.items() if k not in ("rows", "failures")}
        failures += [dict(f, pass_file=path) for f in doc.get("failures", [])]
        for row in doc["rows"]:
            lat = row.get("latency_ms") if isinstance(row, dict) else None
            median = lat.get("median") if isinstance(lat, dict) else None
            if isinstance(median, bool) or not isinstance(median, (int, float)) or not median > 0:
                failures.append({"pass_file": path, "error": "row without a positive numeric "
                                 "latency_ms.median, not merged",
                                 "row": {f: row.get(f) for f in ("model", "framework", "precision",
                                                                 "batch", "seq")}
                                 if isinstance(row, dict) else row})
                continue
            k = key(row)
            if k not in merged:
                order.append(k)
                merged[k] = {"best": row, "best_pass": i, "medians": [None] * len(inputs),
                             "kernels": None}
            m = merged[k]
            if m["kernels"] is None and not row.get("kernels_pending") and "kernels_per_iter" in row:
                m["kernels"] = (row, i)
            # One median per pass (the lowest, if a pass measured the point twice).
            prev = m["medians"][i]
            m["medians"][i] = median if prev is None else min(prev, median)
            if median < m["best"]["latency_ms"]["median"]:
                m["best"], m["best_pass"] = row, i
    rows = []
    for k in order:
        m = merged[k]
        row = dict(m["best"])
        if row.get("kernels_pending") and m["kernels"] is not None:
            src, i = m["kernels"]
            for f in KERNEL_FIELDS:
                if f in src:
                    row[f] = src[f]
            row.pop("kernels_pending", None)
            row["kernels_from_pass"] = i
            if "kernel_ms" in row:
                row["framework_ms_measured"] = max(0.0, row["latency_ms"]["median"] - row["kernel_ms"])
        row["pass_medians_ms"] = m["medians"]  # aligned with merged_from; null: not measured
        row["pass_used"] = m["best_pass"]  # index into merged_from
        rows.append(row)
    base.update({"rows": rows, "failures": failures, "merged_from": inputs,
                 "merge_rule": "per point, the pass with the lowest median latency"})
    with open(out, "w") as f:
        json.dump(base, f, indent=1)
    measured = [[v for v in r["pass_medians_ms"] if v is not None] for r in rows]
    spread = [max(v) / min(v) - 1 for v in measured if len(v) > 1]
    spread.sort()
    med = spread[len(spread) // 2] * 100 if spread else float("nan")
    print(f"merge_passes: {len(rows)} points from {len(inputs)} passes; median spread between "
          f"passes {med:.1f}%, largest {spread[-1] * 100 if spread else float('nan'):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
