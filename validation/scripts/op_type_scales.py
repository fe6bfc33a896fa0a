#!/usr/bin/env python3
"""How much a model's ops of each kind cost the CPU against what ftax's per-op prices say,
learned on the calibration models of one host run and tried on the evaluation models of others.

A framework priced per op type (TorchScript, Python eager) takes each op's cost from the
bench's chains of that op. Whole models do not pay those costs in the same proportions: on
host runs au and aq the traced CNNs' convolutions, batch norms and ReLUs cost about 0.85 of
their price relative to the rest. This script measures that shape. For every CPU-bound row of
a `ftax validate` run it asks `ftax predict` for the CPU time per op type
(framework_ms_by_op), sums it into five groups (convolution, batch norm, ReLU and pooling;
linear and matmul; layer norm; attention; everything else, the fused element-wise groups,
views and ops priced by class), and fits the measured time as a weighted sum of the groups by
least squares on relative errors, each weight pulled toward one common scale (ridge). The
weights over the common scale are the relative scales. Applied to another host's evaluation
rows as they are (no scale of that host's own), they show whether the shape carries.

A diagnosis for the validation record, not part of ftax's pricing: `ftax validate
--refined-profile` now fits these scales itself (src/calibrate/op_scale_fit.h, the same groups
and ridge) and the prior carries them; this script stays as the record of how the first ones
were found. Run from a folder whose
data/models/ holds the traces the rows name (host run ai's models.tar.xz; the calibration
models from tests/data/parity/NAME.pt.xz unpacked as NAME.fp16.pt):
  validation/scripts/op_type_scales.py --ftax build/ftax --framework torchscript \\
      --fit PROFILE REPORT.json MEASURED.json --test NAME PROFILE REPORT.json MEASURED.json ...
REPORT.json is `ftax validate --format json` of MEASURED.json with PROFILE (with
--cpu-speed row, each row is brought to its own CPU speed first)."""
import argparse
import json
import re
import subprocess
import sys

GROUPS = {
    "conv, batch norm, relu, pooling": ["conv", "batch_norm", "relu", "max_pool2d", "adaptive_avg_pool2d"],
    "linear, matmul": ["linear", "matmul"],
    "layer norm": ["layer_norm"],
    "attention": ["scaled_dot_product_attention", "multi_head_attention"],
}
REST = "the rest"
DTYPES = {"float16": "fp16", "float32": "fp32", "bfloat16": "bf16", "int64": "int64", "int32": "int32",
          "bool": "bool"}


def features(framework_ms, by_op):
    """The row's predicted CPU time split into the groups, then the rest."""
    out, used = [], 0.0
    for ops in GROUPS.values():
        s = sum(by_op.get(o, 0.0) for o in ops)
        out.append(s)
        used += s
    out.append(max(0.0, framework_ms - used))
    return out


def fit(xs, ys, ridge=0.5):
    """Weights w minimizing sum ((x.w - y) / y)^2 + ridge * sum (w_k - s0)^2, where s0 is the
    median of y / sum(x); returns (w, s0). Solved by the normal equations (no numpy needed)."""
    k = len(xs[0])
    ratios = sorted(y / sum(x) for x, y in zip(xs, ys))
    n = len(ratios)
    s0 = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
    a = [[ridge if i == j else 0.0 for j in range(k)] for i in range(k)]
    b = [ridge * s0] * k
    for x, y in zip(xs, ys):
        u = [v / y for v in x]
        for i in range(k):
            b[i] += u[i]
            for j in range(k):
                a[i][j] += u[i] * u[j]
    # Gaussian elimination with partial pivoting.
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(a[r][c]))
        a[c], a[p], b[c], b[p] = a[p], a[c], b[p], b[c]
        for r in range(c + 1, k):
            f = a[r][c] / a[c][c]
            for j in range(c, k):
                a[r][j] -= f * a[c][j]
            b[r] -= f * b[c]
    w = [0.0] * k
    for r in range(k - 1, -1, -1):
        w[r] = (b[r] - sum(a[r][j] * w[j] for j in range(r + 1, k))) / a[r][r]
    return w, s0


def score(xs, ys, w):
    """(median |error|, share within ±15%) of the rows priced with weights w."""
    errs = sorted(abs(sum(a * b for a, b in zip(x, w)) - y) / y for x, y in zip(xs, ys))
    n = len(errs)
    med = errs[n // 2] if n % 2 else (errs[n // 2 - 1] + errs[n // 2]) / 2
    return med, sum(e < 0.15 for e in errs) / n


def predicted_split(ftax, profile, framework, row):
    args = [ftax, "predict", row["source"], "--framework", framework, "--profile", profile, "--batch",
            str(row["batch"]), "--precision", "fp16", "--format", "json", "--samples", "0"]
    shapes = ["x".join(map(str, i["shape"])) + ":" + DTYPES.get(i["dtype"], i["dtype"]) for i in row["inputs"]]
    p = subprocess.run(args + [a for s in shapes for a in ("--input-shape", s)], capture_output=True, text=True)
    named = re.search(r"takes \d+ inputs \(([^)]*)\)", p.stderr)
    if named:  # a model of several inputs: bind them by name
        names = [n.strip() for n in named.group(1).split(",")]
        p = subprocess.run(args + [a for n, s in zip(names, shapes) for a in ("--input-shape", n + "=" + s)],
                           capture_output=True, text=True)
    if p.returncode != 0:
        print(f"op_type_scales.py: {row['model']} b{row['batch']}: {p.stderr.strip()[:200]}", file=sys.stderr)
        return None
    return json.loads(p.stdout)["predictions"][0]


def rows_of(ftax, framework, profile, report_path, measured_path):
    """(features, measured CPU time) of the CPU-bound rows of one validate report."""
    measured = {}
    for r in json.load(open(measured_path))["rows"]:
        if r.get("framework") == framework:
            measured[(r["model"], r["batch"])] = r
    xs, ys = [], []
    for r in json.load(open(report_path))["rows"]:
        m = measured.get((r["model"], r["batch"]))
        if r["framework"] != framework or m is None:
            continue
        p = predicted_split(ftax, profile, framework, m)
        if p is None or p["compute_ms"] >= 0.5 * p["latency_ms"]:
            continue
        xs.append(features(p["framework_ms"], {k: v["ms"] for k, v in p["framework_ms_by_op"].items()}))
        ys.append(r["measured_ms"] / (r.get("cpu_speed_factor") or 1.0))
    return xs, ys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ftax", default="build/ftax")
    ap.add_argument("--framework", default="torchscript")
    ap.add_argument("--ridge", type=float, default=0.5)
    ap.add_argument("--fit", nargs=3, metavar=("PROFILE", "REPORT", "MEASURED"), required=True)
    ap.add_argument("--test", nargs=4, action="append", default=[], metavar=("NAME", "PROFILE", "REPORT", "MEASURED"))
    a = ap.parse_args()
    xs, ys = rows_of(a.ftax, a.framework, *a.fit)
    if len(xs) < 5:
        ap.error(f"--fit: {len(xs)} CPU-bound rows; at least 5 are needed")
    w, s0 = fit(xs, ys, a.ridge)
    rel = [v / s0 for v in w]
    names = list(GROUPS) + [REST]
    print(f"fitted on {len(xs)} rows: common scale x{s0:.3f}; relative scales " +
          ", ".join(f"{n} {r:.2f}" for n, r in zip(names, rel)))
    for name, profile, report, measured in a.test:
        tx, ty = rows_of(a.ftax, a.framework, profile, report, measured)
        if not tx:
            print(f"{name}: no CPU-bound rows")
            continue
        m0, w0 = score(tx, ty, [1.0] * len(rel))
        m1, w1 = score(tx, ty, rel)
        print(f"{name}: {len(tx)} rows; as priced: median |error| {100 * m0:.1f}%, {100 * w0:.0f}% within ±15%; "
              f"with the relative scales: {100 * m1:.1f}%, {100 * w1:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
