#!/usr/bin/env python3
"""Does a torch.compile'd module called at several batch sizes run slower than one compiled for one?

torch.compile(model, dynamic=False) keeps one compiled graph per input shape, all in Dynamo's
cache for the model's forward; a call walks the cache entries, checking each one's guards,
until one passes. A served model compiled for one batch has one entry. A measurement that calls
one compiled module at batch 1 and batch 8 in turn (scripts/validate_eager.py does) has two.
For each zoo model (scripts/model_zoo.py), fp16 under torch.inference_mode(), this times the
compiled default-mode module at each batch:
  alone:  torch._dynamo.reset(), then compiled and timed at that batch only (one entry);
  shared: one compiled module called at every batch (one entry per batch), then timed at each
          batch in alternating rounds.
Host clock per call with a device synchronize, no profiler attached; medians with p10 and p90.
The CPU gauge (scripts/cpu_gauge.py) is read beside each timing. One JSON object per model is
written to --out as it finishes; a model that fails records its error and the next goes on.

Usage (GPU host): python3 validation/scripts/compile_cache_entries.py --out cache.json \
    --models deit_tiny,vit_b_32 [--batches 1,8] [--iters 60]
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


def timed(torch, fn, iters):
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e3)
    out.sort()
    return out


def summary(samples):
    s = sorted(samples)
    return {"median": statistics.median(s), "p10": s[len(s) // 10], "p90": s[(9 * len(s)) // 10], "n": len(s)}


def one(name, batches, iters):
    import torch
    import torch._dynamo
    m = model_zoo.build(name).half().cuda()
    xs = {b: model_zoo.cast_inputs(tuple(x.cuda() for x in model_zoo.inputs(name, b, 128, "cpu")), torch.float16)
          for b in batches}
    rec = {"model": name, "precision": "fp16", "grad_mode": "inference_mode",
           "timing": "host clock per call with a device synchronize, no profiler attached",
           "alone": {}, "shared": {}}
    with torch.inference_mode():
        for b in batches:
            torch._dynamo.reset()
            cm = torch.compile(m, dynamic=False)
            for _ in range(4):
                cm(*xs[b])
            torch.cuda.synchronize()
            g = cpu_gauge.gauge_us(torch)
            rec["alone"][str(b)] = dict(summary(timed(torch, lambda: cm(*xs[b]), iters)),
                                        cpu_gauge_us=(g + cpu_gauge.gauge_us(torch)) / 2)
        torch._dynamo.reset()
        cm = torch.compile(m, dynamic=False)
        for b in batches:
            for _ in range(4):
                cm(*xs[b])
        torch.cuda.synchronize()
        samples = {b: [] for b in batches}
        gauges = {b: [] for b in batches}
        for _ in range(4):  # alternating rounds
            for b in batches:
                g = cpu_gauge.gauge_us(torch)
                samples[b] += timed(torch, lambda: cm(*xs[b]), max(1, iters // 4))
                gauges[b].append((g + cpu_gauge.gauge_us(torch)) / 2)
        for b in batches:
            rec["shared"][str(b)] = dict(summary(samples[b]), cpu_gauge_us=statistics.median(gauges[b]))
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True, help="comma list of zoo models")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--iters", type=int, default=60)
    a = ap.parse_args()
    names = a.models.split(",")
    batches = [int(b) for b in a.batches.split(",")]
    results = []
    for i, name in enumerate(names):
        print(f"model {i + 1} of {len(names)}: {name}", flush=True)
        try:
            rec = one(name, batches, a.iters)
        except Exception as e:  # one model's failure never touches another's row
            rec = {"model": name, "error": repr(e)[:400], "trace": traceback.format_exc()[-1200:]}
        print(json.dumps({k: v for k, v in rec.items() if k != "trace"})[:900], flush=True)
        results.append(rec)
        with open(a.out + ".tmp", "w") as f:
            json.dump({"kind": "ftax-compile-cache-entries", "rows": results}, f, indent=1)
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
