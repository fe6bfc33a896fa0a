#!/usr/bin/env python3
"""Where a torch.compile(mode="reduce-overhead") call's time goes: the compiled wrapper's work
on the CPU before the CUDA graph's replay starts, and the replay on the GPU.

For each zoo model (scripts/model_zoo.py) and batch, fp16 on the GPU under
torch.inference_mode(): the model is compiled with mode="reduce-overhead", dynamic=False, and
called until Inductor's CUDA graph tree has recorded its graph. Then, in shuffled rounds, each
call timed by the host clock with a device synchronize after it (as scripts/validate_eager.py
times a model; no profiler attached):

  call          the compiled module called as users call it, until the GPU is done;
  call_issue    the same call until it returns (the synchronize outside the clock);
  call_marked   the call with its replay marked (scripts/replay_marks.py): the host clock
                as the tree starts the replay (before_replay: the wrapper's CPU work ahead of
                the graph, Dynamo's guards, the tree's checks of its inputs and their copy into
                the graph's buffers) and CUDA events on either side of it (replay_gpu: the
                replay's time on the GPU).

A separate pass under torch.profiler then records the kernels of a call: how many, their summed
time and the span from the first's start to the last's end, so that replay_gpu - kernel time
says what a graph node costs beyond its kernel, with no profiler in the timing. The model's
tensors (parameters and buffers, which a compiled graph takes as inputs) and modules are
counted, and the CPU gauge (scripts/cpu_gauge.py) is read once a round.

One JSON object per model and batch is written to --out as it finishes (the file is rewritten
whole each time, so an interruption loses only the model in progress); a model that fails
records its error and the next goes on.

Usage (GPU host): python3 validation/scripts/reduce_overhead_anatomy.py --out ro.json \
    --models resnet50,bert-base [--batches 1,8] [--rounds 6] [--calls 40]
"""
import argparse
import warnings
import json
import os
import random
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import cpu_gauge  # noqa: E402
import model_zoo  # noqa: E402
import replay_marks  # noqa: E402


def summary(xs):
    xs = sorted(xs)
    return {"median": round(statistics.median(xs), 2), "p20": round(xs[len(xs) // 5], 2),
            "p80": round(xs[(4 * len(xs)) // 5], 2), "n": len(xs)}


def kernel_pass(torch, fn, calls=5):
    """Kernels a call of fn launches, their summed GPU time and the span from the first kernel's
    start to the last one's end, per call (µs), from torch.profiler's CUDA activity."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    spans = []
    n = total = 0
    for _ in range(calls):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        ks = [e for e in prof.events() if e.device_type.name == "CUDA" and not e.name.startswith("Memcpy")
              and not e.name.startswith("Memset")]
        if not ks:
            continue
        starts = [e.time_range.start for e in ks]
        ends = [e.time_range.end for e in ks]
        spans.append(max(ends) - min(starts))
        n += len(ks)
        total += sum(e.time_range.end - e.time_range.start for e in ks)
    k = max(1, len(spans))
    return {"kernels_per_call": n / k, "kernel_us": round(total / k, 2),
            "span_us": round(statistics.median(spans), 2) if spans else None}


def one(name, batch, rounds, calls):
    import torch
    import torch._dynamo
    torch._dynamo.reset()
    m = model_zoo.build(name).half().cuda().eval()
    xs = model_zoo.cast_inputs(tuple(x.cuda() for x in model_zoo.inputs(name, batch, 128, "cpu")), torch.float16)
    out = {"model": name, "batch": batch, "precision": "fp16", "grad_mode": "inference_mode",
           "tensors": sum(1 for _ in m.parameters()) + sum(1 for _ in m.buffers()),
           "modules": sum(1 for _ in m.modules()),
           "timing": "host clock per call, a device synchronize after each call (outside the clock for the "
                     "_issue variants), no profiler; kernels from a separate torch.profiler pass"}
    with torch.inference_mode():
        cm = torch.compile(m, mode="reduce-overhead", dynamic=False)
        t0 = time.perf_counter()
        for _ in range(5):  # the tree records its graph on a later call than the first
            cm(*xs)
        torch.cuda.synchronize()
        out["compile_s"] = round(time.perf_counter() - t0, 2)
        if replay_marks.timed_call(torch, lambda: cm(*xs)) is None:
            raise RuntimeError("the call replayed no CUDA graph (the tree may have skipped cudagraphs: see the log)")

        variants = {"call": (lambda: cm(*xs), True), "call_issue": (lambda: cm(*xs), False),
                    "call_marked": (lambda: cm(*xs), True)}
        recs = {k: [] for k in variants}
        recs["before_replay"], recs["replay_gpu"] = [], []
        gauges = []
        # A new shuffled order each round, so that a slow stretch of the host reaches every variant.
        for order in (random.Random(r).sample(list(variants), len(variants)) for r in range(rounds)):
            gauges.append(round(cpu_gauge.gauge_us(torch), 3))
            for k in order:
                fn, wait = variants[k]
                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
                for _ in range(calls):
                    if k == "call_marked":
                        before, gpu = replay_marks.timed_call(torch, fn)
                        recs["before_replay"].append(before)
                        recs["replay_gpu"].append(gpu)
                        continue
                    t0 = time.perf_counter()
                    fn()
                    if wait:
                        torch.cuda.synchronize()
                    t1 = time.perf_counter()
                    if not wait:
                        torch.cuda.synchronize()
                    recs[k].append((t1 - t0) * 1e6)
        out["cpu_gauge_us"] = gauges
        out["variants"] = {k: summary(v) for k, v in recs.items()}
        out["call_kernels"] = kernel_pass(torch, lambda: cm(*xs))
    return out


def main():
    warnings.filterwarnings("ignore", category=FutureWarning)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON file written as each model finishes")
    ap.add_argument("--models", required=True, help="comma list of zoo models")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=40, help="timed calls per variant per round")
    ap.add_argument("--deadline-s", type=float, default=0, help="start no model after this many seconds (0: none)")
    a = ap.parse_args()
    import torch
    replay_marks.install(torch)
    start = time.time()
    rows = []
    todo = [(n, int(b)) for n in a.models.split(",") for b in a.batches.split(",")]
    for k, (name, batch) in enumerate(todo, 1):
        if a.deadline_s and time.time() - start > a.deadline_s:
            rows.append({"model": name, "batch": batch, "error": "not started: --deadline-s reached"})
        else:
            t0 = time.time()
            try:
                row = one(name, batch, a.rounds, a.calls)
            except Exception as e:  # one model's failure costs only its row
                row = {"model": name, "batch": batch, "error": repr(e)[:400], "trace": traceback.format_exc()[-1500:]}
            row["wall_s"] = round(time.time() - t0, 1)
            rows.append(row)
            v = row.get("variants")
            print(f"[{k}/{len(todo)}] {name} b{batch}: " + (
                f"call {v['call']['median']:.0f} us, {v['before_replay']['median']:.0f} before the replay, "
                f"replay {v['replay_gpu']['median']:.0f} us on the GPU, kernels "
                f"{row['call_kernels']['kernel_us']:.0f} us in {row['call_kernels']['kernels_per_call']:.0f}"
                if v else row["error"]) + f" ({row['wall_s']} s)", file=sys.stderr, flush=True)
        with open(a.out, "w") as f:
            json.dump({"rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
