#!/usr/bin/env python3
"""How torch.compile's default mode runs a zoo model, and a plain timing of it beside eager.

For each model (scripts/model_zoo.py), fp16 on the GPU under torch.inference_mode(), as
scripts/validate_eager.py measures it: torch.compile(model, dynamic=False) is called once to
compile, then Dynamo's counters say how many graphs it made, how many graph breaks and why,
and how often it recompiled; then eager and the compiled module are each timed over N calls
with the host clock and a device synchronize after each (no profiler attached), the median
reported, with the CPU gauge (scripts/cpu_gauge.py) read around each timing. One JSON object
per model is written to --out as it finishes (a model that fails
records its error and the next goes on).

Usage (GPU host): python3 validation/scripts/compile_graph_breaks.py --out breaks.json \
    --models vit_b_32,deit_tiny,resnet50 [--batch 1] [--iters 50]
"""
import argparse
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import cpu_gauge  # noqa: E402
import model_zoo  # noqa: E402


def timed(fn, iters):
    import torch
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out), sorted(out)[len(out) // 10], sorted(out)[(9 * len(out)) // 10]


def one(name, batch, iters):
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    m = model_zoo.build(name).half().cuda()
    xs = model_zoo.cast_inputs(tuple(x.cuda() for x in model_zoo.inputs(name, batch, 128, "cpu")), torch.float16)
    rec = {"model": name, "batch": batch, "precision": "fp16", "grad_mode": "inference_mode",
           "timing": "host clock per call with a device synchronize, no profiler attached"}
    with torch.inference_mode():
        for _ in range(3):
            m(*xs)
        torch.cuda.synchronize()
        g0 = cpu_gauge.gauge_us(torch)
        rec["eager_ms"], rec["eager_p10_ms"], rec["eager_p90_ms"] = timed(lambda: m(*xs), iters)
        rec["eager_cpu_gauge_us"] = (g0 + cpu_gauge.gauge_us(torch)) / 2
        cm = torch.compile(m, dynamic=False)
        t0 = time.perf_counter()
        cm(*xs)
        torch.cuda.synchronize()
        rec["compile_s"] = time.perf_counter() - t0
        for _ in range(3):
            cm(*xs)
        torch.cuda.synchronize()
        g0 = cpu_gauge.gauge_us(torch)
        rec["compiled_ms"], rec["compiled_p10_ms"], rec["compiled_p90_ms"] = timed(lambda: cm(*xs), iters)
        rec["compiled_cpu_gauge_us"] = (g0 + cpu_gauge.gauge_us(torch)) / 2
    rec["graph_breaks"] = {str(k): v for k, v in counters["graph_break"].items()}
    rec["graph_break_count"] = sum(counters["graph_break"].values())
    rec["stats"] = {str(k): v for k, v in counters["stats"].items()}
    rec["recompiles"] = {str(k): v for k, v in counters["recompiles"].items()} if "recompiles" in counters else {}
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True, help="comma list of zoo models")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--iters", type=int, default=50)
    a = ap.parse_args()
    results = []
    for i, name in enumerate(a.models.split(",")):
        print(f"model {i + 1} of {len(a.models.split(','))}: {name}", flush=True)
        try:
            rec = one(name, a.batch, a.iters)
        except Exception as e:  # one model's failure never touches another's row
            rec = {"model": name, "error": repr(e)[:400], "trace": traceback.format_exc()[-1200:]}
        print(json.dumps({k: v for k, v in rec.items() if k != "trace"})[:600], flush=True)
        results.append(rec)
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"kind": "ftax-compile-graph-breaks", "rows": results}, f, indent=1)
        os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
