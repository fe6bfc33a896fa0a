#!/usr/bin/env python3
"""Tabulate ftax's answers for one model given in every form (tests/data/parity/corpus.json).

Per model and form (.pt, .onnx, .dynamo.onnx, .static.onnx, --arch where a family fits) it
runs `ftax inspect` (MACs, uncounted ops) and `ftax predict` (kernels and latency per
framework, fp16, batch 1 and 32, no interval; torch.compile's two modes from --compile-profile,
a host run's profile that has their costs) and prints a markdown table, then a summary:
per framework and batch, how many models agree with their .pt (MACs within 0.5%, kernels and
latency within 5%) in every form, and the worst ratios. The corpus's files are xz-compressed
(NAME.FORM.xz); they are unpacked into a temporary directory. With --json, the raw numbers.
Stdlib only.

Usage:
  scripts/parity_table.py [--ftax build/ftax] [--profile validation/h200/2026-11-22b/profile-refined.json]
                          [--compile-profile validation/h200/2026-11-28ch/profile.json.xz]
                          [--framework cuda-graph --framework pytorch-eager] [--only bert-base]
                          [--json out.json] [--from-json out.json]
"""
import argparse
import json
import lzma
import math
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data", "parity")
FORMS = ["pt", "onnx", "dynamo.onnx", "static.onnx", "arch"]
COMPILE_FRAMEWORKS = ("torch-compile", "torch-compile-reduce-overhead")
MACS_TOL, TOL = 0.005, 0.05


def unpack(entry, tmp, data=DATA):
    """Writes each form's file, unpacked, under tmp; returns form -> path."""
    paths = {}
    for form, f in entry["forms"].items():
        src = os.path.join(data, f)
        dst = os.path.join(tmp, f[:-3] if f.endswith(".xz") else f)
        if f.endswith(".xz"):
            with lzma.open(src) as i, open(dst, "wb") as o:
                shutil.copyfileobj(i, o)
        else:
            shutil.copyfile(src, dst)
        paths[form] = dst
    return paths


def model_args(entry, paths, form):
    if form == "arch":
        return ["--arch", entry["arch"], "--flavor", "torch"] if entry.get("arch") else None
    path = paths.get(form)
    if not path:
        return None
    args = [path]
    if form == "pt":
        for s in entry.get("pt_input_shapes") or entry["input_shapes"]:
            args += ["--input-shape", s]
    return args


def run(ftax, args):
    p = subprocess.run([ftax] + args, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        return None, lines[-1] if lines else "exit %d" % p.returncode
    return json.loads(p.stdout), None


def measure(ftax, profile, entry, paths, form, frameworks, batches, compile_profile=None):
    margs = model_args(entry, paths, form)
    if margs is None:
        return None
    out = {"form": form}
    insp = list(margs)
    if form.endswith("onnx"):
        insp += ["--dim", "batch=1"]
    j, err = run(ftax, ["inspect"] + insp + ["--by-op", "--format", "json"])
    if err:
        out["error"] = err
        return out
    out["macs"] = j["totals"]["macs"]
    out["params"] = j["totals"].get("params", 0)
    out["uncounted"] = j.get("uncounted_ops", 0)
    out["uncounted_by_op_type"] = j.get("uncounted_by_op_type", {})
    out["warnings"] = j.get("warnings", [])
    out["by_op"] = {o["op_type"]: o["count"] for o in j.get("by_op_type", [])}
    if form.endswith("onnx"):  # whether the file fixes its batch shows at batch 32
        j, err = run(ftax, ["inspect"] + list(margs) + ["--dim", "batch=32", "--format", "json"])
        if not err:
            out["warnings"] += j.get("warnings", [])
    out["points"], out["unpriced"] = {}, {}
    # torch.compile's modes from the profile that has their costs, the others from --profile.
    for prof, fws in ((profile, [f for f in frameworks if f not in COMPILE_FRAMEWORKS]),
                      (compile_profile, [f for f in frameworks if f in COMPILE_FRAMEWORKS])):
        if not fws or not prof:
            continue
        pred = ["predict"] + margs + ["--profile", prof, "--framework", ",".join(fws),
                                      "--precision", "fp16", "--batch", ",".join(map(str, batches)),
                                      "--samples", "0", "--format", "json"]
        if form == "arch":
            pred += ["--dim", "seq=128"]
        j, err = run(ftax, pred)
        if err:
            out["error"] = err
            return out
        out["points"].update({"%s@%d" % (p["framework"], p["batch"]): {
            "ms": p["latency_ms"], "kernels": p["kernels"], "dispatches": p["dispatches"]} for p in j["predictions"]})
        out["unpriced"].update(j.get("unpriced_ops", {}))
    return out


def reference(forms):
    """The form the others are compared with: the .pt, or where ftax cannot open it, the first
    ONNX form (as the test does)."""
    for form in ("pt", "onnx", "dynamo.onnx"):
        r = forms.get(form)
        if r and "points" in r:
            return form, r
    return None, None


def summarize(results, frameworks, batches):
    """Per framework and batch: models whose every form agrees with the .pt; worst ratios."""
    lines = []
    n = len(results)
    macs_ok, worst_macs = 0, []
    for name, forms in sorted(results.items()):
        ref_form, ref = reference(forms)
        if not ref:
            continue
        devs = [(abs(r["macs"] / ref["macs"] - 1), form) for form, r in forms.items()
                if form != ref_form and "macs" in r]
        macs_ok += all(d <= MACS_TOL for d, _ in devs)
        worst_macs += [(d, name, form) for d, form in devs]
    lines.append("MACs within %.1f%% of the .pt in every form: %d of %d models" % (100 * MACS_TOL, macs_ok, n))
    for d, name, form in sorted(worst_macs, reverse=True)[:5]:
        if d > MACS_TOL:
            lines.append("  %s/%s: %+.2f%%" % (name, form, 100 * d))
    for f in frameworks:
        for b in batches:
            key = "%s@%d" % (f, b)
            k_ok = l_ok = m = 0
            worst = []
            for name, forms in sorted(results.items()):
                ref_form, ref = reference(forms)
                ref = ref and ref["points"].get(key)
                if not ref:
                    continue
                m += 1
                kd, ld = [], []
                for form, r in forms.items():
                    p = r.get("points", {}).get(key)
                    if form == ref_form or not p or (b != 1 and form != "arch" and static_batch(r)):
                        continue
                    kd.append(p["kernels"] / ref["kernels"] - 1)
                    ld.append(p["ms"] / ref["ms"] - 1)
                    worst.append((abs(ld[-1]), name, form, p["kernels"], ref["kernels"], p["ms"], ref["ms"]))
                k_ok += all(abs(d) <= TOL for d in kd)
                l_ok += all(abs(d) <= TOL for d in ld)
            lines.append("%s batch %d: kernels within 5%% in every form %d of %d models, latency %d of %d" %
                         (f, b, k_ok, m, l_ok, m))
            for d, name, form, k, k0, ms, ms0 in sorted(worst, reverse=True)[:5]:
                lines.append("  %s/%s: %d vs %d kernels, %.3f vs %.3f ms (%+.0f%%)" %
                             (name, form, k, k0, ms, ms0, 100 * (ms / ms0 - 1)))
    return lines


TEST = os.path.join(ROOT, "tests", "cli", "parity_corpus_torch_test.cc")
GAP_FRAMEWORKS = ["cuda-graph", "pytorch-eager", "torchscript", "torch-compile", "torch-compile-reduce-overhead"]


def static_batch(r):
    return any("has no dim named 'batch'" in w or "the file fixes a shape these dims change" in w
               for w in r.get("warnings", []))


def reasons(ref, r, dispatch_dev, fewer_kernels=False, more_kernels=False, cheaper=False, compile_dev=0.0):
    """The test's Reason flags that the two forms' op counts support (a starting point to
    review: an unexplained gap gets kNone). dispatch_dev: the form's largest latency gap under
    the frameworks that price each dispatch (Python eager, TorchScript). fewer_kernels: the form has fewer kernels than the
    .pt under CUDA graphs at some batch (what unfused in-place ops of the trace give);
    more_kernels: more, by over the 5% tolerance (what attention written out around a fused
    call of the trace gives; a kernel or two more is another op's); cheaper: the form's CUDA
    graph is faster than the .pt's at some batch; compile_dev: the form's largest latency gap
    under torch.compile's default mode."""
    pt, f = ref.get("by_op", {}), r.get("by_op", {})
    out = []
    if pt.get("aten::batch_norm", 0) > f.get("BatchNormalization", 0):
        out.append("kFoldedBatchNorm")
    if f.get("Conv", 0) and r.get("params", 0) < ref.get("params", 0):
        out.append("kDroppedZeroBias")
    # ftax prices the exporters' SDPA pattern as the trace's fused call (its kernel, side
    # kernels and dispatch), and nn.MultiheadAttention's slow path around it (the packed
    # projection split into q, k and v by Gather, layout ops) as the fast path
    # (aten::_native_multi_head_attention, one call) where it recognises the split; so a form
    # whose attention was written out differs only where it still launches more kernels than
    # the trace: a split it does not recognise.
    if more_kernels and f.get("Softmax", 0) and pt.get("aten::_native_multi_head_attention", 0):
        out.append("kSplitAttention")
    # An in-place residual (out += identity), or an in-place ReLU of a sum (RegNet's
    # relu_(x + f(x))): Add and Relu in the file, fused there.
    if fewer_kernels and f.get("Add", 0) and (
            any(pt.get("aten::%s_" % t, 0) for t in ("add", "sub", "mul", "div")) or
            (pt.get("aten::relu_", 0) and pt.get("aten::add", 0))):
        out.append("kInPlaceOps")
    if pt.get("aten::addmm", 0) and f.get("Gemm", 0):
        out.append("kAddmmAsGemm")
    if dispatch_dev > TOL and (f.get("Shape", 0) or
                               pt.get("aten::dropout", 0) + pt.get("aten::contiguous", 0) >
                               f.get("Dropout", 0) + f.get("Identity", 0)):
        out.append("kShapeDispatch")
    # The trace's strides: ATen copies a permuted tensor where its strides say so (a layer norm
    # of a transposed residual stream, cuDNN attention's output for a contiguous query, a
    # concatenation of a split's transposed slice); an export records no strides.
    if cheaper and pt.get("aten::transpose", 0) + pt.get("aten::permute", 0):
        out.append("kTraceStrides")
    # Equal tensors of model state stored once in the file (the corpus's exports): fewer inputs
    # of the compiled graph, each of which the default mode prices.
    if compile_dev > TOL and r.get("params", 0) < ref.get("params", 0) and r.get("form", "").endswith("onnx"):
        out.append("kSharedState")
    # torch.roll, which ONNX lacks, written as Slice and Concat.
    if pt.get("aten::roll", 0) and not f.get("Roll", 0) and f.get("Concat", 0):
        out.append("kRollAsSliceConcat")
    return out


def bound(dev):
    """The observed |ratio - 1| rounded up to a multiple of 5%, with at least 1% to spare."""
    return max(TOL, math.ceil((dev + 0.01) / 0.05 - 1e-9) * 0.05)


def gap_rows(results):
    rows, unexplained = [], []
    for name, forms in sorted(results.items()):
        ref_form, ref = reference(forms)
        if not ref:
            continue
        for form, r in sorted(forms.items()):
            if form == ref_form or "points" not in r:
                continue
            batches = [1] if form != "arch" and static_batch(r) else [1, 32]
            dev = {f: 0.0 for f in GAP_FRAMEWORKS}
            kdev = 0.0
            fewer = more = cheaper = False
            for b in batches:
                for f in GAP_FRAMEWORKS:
                    p, p0 = r["points"].get("%s@%d" % (f, b)), ref["points"].get("%s@%d" % (f, b))
                    if not p or not p0:
                        continue
                    dev[f] = max(dev[f], abs(p["ms"] / p0["ms"] - 1))
                    if f == "cuda-graph":
                        cheaper |= p["ms"] < p0["ms"] * (1 - TOL)
                        kdev = max(kdev, abs(p["kernels"] / p0["kernels"] - 1))
                        fewer |= p["kernels"] < p0["kernels"]
                        more |= p["kernels"] > p0["kernels"] * (1 + TOL)
            if max(list(dev.values()) + [kdev]) <= TOL:
                continue
            why = reasons(ref, r, max(dev["pytorch-eager"], dev["torchscript"]), fewer, more, cheaper,
                          dev["torch-compile"])
            if not why:
                unexplained.append("%s/%s" % (name, form))
            rows.append('{"%s/%s", {%s, %.2f, %.2f, %.2f, %.2f, %.2f, %.2f}},' % (
                name, form, " | ".join(why) or "kNone", bound(dev["cuda-graph"]), bound(kdev),
                bound(dev["pytorch-eager"]), bound(dev["torchscript"]), bound(dev["torch-compile"]),
                bound(dev["torch-compile-reduce-overhead"])))
    return rows, unexplained


def write_gaps(rows, path=TEST):
    with open(path) as f:
        text = f.read()
    begin, end = "      // BEGIN GAPS\n", "      // END GAPS\n"
    i, j = text.index(begin) + len(begin), text.index(end)
    with open(path, "w") as f:
        f.write(text[:i] + "".join("      %s\n" % r for r in rows) + text[j:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ftax", default=os.path.join(ROOT, "build", "ftax"))
    ap.add_argument("--profile", default="validation/h200/2026-11-22b/profile-refined.json")
    ap.add_argument("--compile-profile", default="validation/h200/2026-11-28ch/profile.json.xz",
                    help="the profile torch.compile's modes are predicted from (.xz is unpacked)")
    ap.add_argument("--framework", action="append")
    ap.add_argument("--batch", default="1,32")
    ap.add_argument("--only", action="append")
    ap.add_argument("--corpus", default=DATA, help="the corpus's folder (default: %(default)s)")
    ap.add_argument("--json", help="write the raw numbers here")
    ap.add_argument("--from-json", help="summarize numbers written by an earlier --json run")
    ap.add_argument("--write-gaps", action="store_true",
                    help="rewrite the documented gaps of tests/cli/parity_corpus_torch_test.cc from "
                         "these numbers (needs the frameworks %s)" % ",".join(GAP_FRAMEWORKS))
    a = ap.parse_args()
    frameworks = a.framework or GAP_FRAMEWORKS
    batches = [int(b) for b in a.batch.split(",")]
    if a.from_json:
        with open(a.from_json) as f:
            results = json.load(f)
        print("\n".join(summarize(results, frameworks, batches)))
        finish(a, results)
        return 0
    corpus = json.load(open(os.path.join(a.corpus, "corpus.json")))
    results = {}
    compile_profile = a.compile_profile
    keep = tempfile.TemporaryDirectory(prefix="ftax-parity-profile-")
    if compile_profile and compile_profile.endswith(".xz"):
        compile_profile = os.path.join(keep.name, "compile-profile.json")
        with lzma.open(os.path.join(ROOT, a.compile_profile)) as i, open(compile_profile, "wb") as o:
            shutil.copyfileobj(i, o)
    print("| model | form | GMACs | " + " | ".join(
        "%s b%d kernels / ms" % (f, b) for f in frameworks for b in batches) + " |")
    print("|---|---|---|" + "---|" * (len(frameworks) * len(batches)))
    for name in a.only or sorted(corpus):
        entry = corpus[name]
        results[name] = {}
        with tempfile.TemporaryDirectory(prefix="ftax-parity-") as tmp:
            paths = unpack(entry, tmp, a.corpus)
            for form in FORMS:
                r = measure(a.ftax, a.profile, entry, paths, form, frameworks, batches, compile_profile)
                if r is None:
                    continue
                results[name][form] = r
                if "error" in r:
                    print("| %s | %s | error: %s |" % (name, form, r["error"][:90]), flush=True)
                    continue
                cells = []
                for f in frameworks:
                    for b in batches:
                        p = r["points"].get("%s@%d" % (f, b))
                        cells.append("%d / %.3f" % (p["kernels"], p["ms"]) if p else "-")
                print("| %s | %s | %.3f | %s |" % (name, form, r["macs"] / 1e9, " | ".join(cells)), flush=True)
        for form, why in entry.get("missing", {}).items():
            print("| %s | %s | not exported: %s |" % (name, form, why[:90]), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    print()
    print("\n".join(summarize(results, frameworks, batches)))
    finish(a, results)
    return 0


def finish(a, results):
    if not a.write_gaps:
        return
    rows, unexplained = gap_rows(results)
    write_gaps(rows)
    print("%d documented gaps written to %s" % (len(rows), os.path.relpath(TEST)))
    if unexplained:
        print("no reason found (kNone) for: " + ", ".join(unexplained))


if __name__ == "__main__":
    sys.exit(main())
