#!/usr/bin/env python3
"""What torch.compile's default-mode wrapper does per call, and how long a call takes.

For each zoo model (scripts/model_zoo.py), fp16 on the GPU under torch.inference_mode():
torch.compile(model, dynamic=False) is compiled for one batch, the Python wrapper Inductor
generated is read back (torch._inductor.utils.run_and_get_code), and the statements its
`call` runs are counted: Triton kernel launches, library ("extern") calls, ATen fallback ops,
buffer allocations, stride reinterpretations, size/stride asserts. Then the compiled module is
timed with the host clock and a device synchronize after each call, no profiler attached, as
is the same module run eagerly, both the median of --iters calls; and the wrapper's CPU time
alone is timed as --iters calls issued back to back with one synchronize at the end (the GPU
keeps up at small batch, so the time is the CPU's). The graph's inputs (parameters and
buffers lifted into it) are counted too, and the CPU gauge (scripts/cpu_gauge.py) is read
before and after compiling. One JSON object per model and batch is written to
--out as it finishes; a model that fails records its error and the next goes on.

Usage (GPU host): python3 validation/scripts/inductor_wrapper_anatomy.py --out anatomy.json \
    --models vit_b_32,deit_tiny,resnet50 [--batches 1,8] [--iters 100]
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import cpu_gauge  # noqa: E402
import model_zoo  # noqa: E402

# What one statement of the wrapper's `call` is, by the text Inductor writes for it.
STATEMENTS = {
    "triton_launches": re.compile(r"^\s*\w+\.run\("),
    "extern_calls": re.compile(r"extern_kernels\.\w+\("),
    "aten_fallbacks": re.compile(r"torch\.ops\.\w+\.\w+(\.\w+)?\("),
    "allocations": re.compile(r"empty_strided(_cuda)?\("),
    "reinterprets": re.compile(r"reinterpret_tensor\("),
    "asserts": re.compile(r"assert_size_stride\(|assert_alignment\("),
    "deletes": re.compile(r"^\s*del "),
}


def call_body(code):
    """The lines of the wrapper's `call` function (the one Inductor runs per call)."""
    lines = code.splitlines()
    start = next((i for i, l in enumerate(lines) if re.match(r"\s*def call\(", l)), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for l in lines[start + 1:]:
        if l.strip() and len(l) - len(l.lstrip()) <= indent:
            break
        body.append(l)
    return body


def count_statements(code):
    """The statements of one wrapper's `call`, by kind (STATEMENTS), and how many graph inputs
    it unpacks from its args."""
    body = call_body(code)
    counts = {k: 0 for k in STATEMENTS}
    for line in body:
        if line.lstrip().startswith("#"):  # Inductor's comments name the ATen ops a kernel fused
            continue
        for k, pat in STATEMENTS.items():
            counts[k] += bool(pat.match(line)) if k in ("triton_launches", "deletes") else len(pat.findall(line))
    unpack = next((l for l in body if re.search(r"=\s*args\s*$", l)), "")
    return counts, (unpack.count(",") + 1 if unpack else 0)


def timed(fn, iters, sync_each=True):
    import torch
    out = []
    if not sync_each:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3 / iters
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    out.sort()
    return {"median": statistics.median(out), "p10": out[len(out) // 10], "p90": out[(9 * len(out)) // 10]}


def one(name, batch, iters, code_dir=""):
    import torch
    import torch._dynamo
    import torch._inductor.config as icfg
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    icfg.fx_graph_cache = False  # the code must be generated, not read from the cache
    m = model_zoo.build(name).half().cuda()
    xs = model_zoo.cast_inputs(tuple(x.cuda() for x in model_zoo.inputs(name, batch, 128, "cpu")), torch.float16)
    rec = {"model": name, "batch": batch, "precision": "fp16", "grad_mode": "inference_mode",
           "timing": "host clock per call with a device synchronize, no profiler attached",
           "parameters": sum(1 for _ in m.parameters()), "buffers": sum(1 for _ in m.buffers())}
    with torch.inference_mode():
        for _ in range(3):
            m(*xs)
        torch.cuda.synchronize()
        rec["eager_ms"] = timed(lambda: m(*xs), iters)
        gauge = {"before_compile": cpu_gauge.gauge_us(torch)}
        cm = torch.compile(m, dynamic=False)
        t0 = time.perf_counter()
        _, codes = run_and_get_code(cm, *xs)
        torch.cuda.synchronize()
        rec["compile_s"] = round(time.perf_counter() - t0, 2)
        gauge["after_compile"] = cpu_gauge.gauge_us(torch)
        counts = {k: 0 for k in STATEMENTS}
        graph_inputs = 0
        for k, code in enumerate(codes):
            if code_dir:
                with open(os.path.join(code_dir, f"{name}.b{batch}.{k}.py"), "w") as f:
                    f.write(code)
            one_counts, one_inputs = count_statements(code)
            counts = {s: counts[s] + one_counts[s] for s in counts}
            graph_inputs += one_inputs
        rec["wrappers"] = len(codes)
        rec["graph_inputs"] = graph_inputs
        rec["statements"] = counts
        for _ in range(5):
            cm(*xs)
        torch.cuda.synchronize()
        rec["compiled_ms"] = timed(lambda: cm(*xs), iters)
        rec["compiled_cpu_ms_back_to_back"] = timed(lambda: cm(*xs), iters, sync_each=False)
        rec["eager_cpu_ms_back_to_back"] = timed(lambda: m(*xs), iters, sync_each=False)
        gauge["after_timing"] = cpu_gauge.gauge_us(torch)
        rec["cpu_gauge_us"] = gauge  # the CPU's speed (scripts/cpu_gauge.py) around the compile
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True, help="comma list of zoo models")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--code-dir", default="", help="also write each generated wrapper here")
    a = ap.parse_args()
    jobs = [(n, int(b)) for n in a.models.split(",") for b in a.batches.split(",")]
    results = []
    for i, (name, b) in enumerate(jobs):
        print(f"{i + 1} of {len(jobs)}: {name} batch {b}", flush=True)
        try:
            rec = one(name, b, a.iters, a.code_dir)
        except Exception as e:  # one model's failure never touches another's row
            rec = {"model": name, "batch": b, "error": repr(e)[:400], "trace": traceback.format_exc()[-1200:]}
        print(json.dumps({k: v for k, v in rec.items() if k != "trace"})[:700], flush=True)
        results.append(rec)
        with open(a.out + ".tmp", "w") as f:
            json.dump({"kind": "ftax-inductor-wrapper-anatomy", "rows": results}, f, indent=1)
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
