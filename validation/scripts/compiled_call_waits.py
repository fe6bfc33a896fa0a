#!/usr/bin/env python3
"""Whether the time a torch.compile'd model pays outside its generated code is CPU work or waiting.

Some models pay milliseconds outside Inductor's generated `call` in the default mode
(RegNetY-400MF 2.25 ms, ConvNeXt-S 2.5 ms, against 0.3 ms for ConvNeXt-T; compiled_call_anatomy.py),
and the cost all but vanishes when the call runs under cProfile or the PyTorch profiler. This
script tells the candidates apart, fp16 on the GPU under torch.inference_mode(), for each model:

- each call's wall time (host clock) beside the thread's own CPU time (time.thread_time): a
  thread that waits (for the GIL, a lock, the GPU with a blocking sync) spends wall time without
  CPU time;
- where inside the compiled module's call the time goes: the moment Inductor's compiled graph is
  entered and left (its class's __call__ wrapped), so that before, inside and after add up to the
  call;
- Python's cyclic garbage collector: collections per generation and their time during each
  variant's calls (gc.callbacks), and the compiled module timed again with the collector off;
- synchronizing CUDA calls: one compiled call under torch.cuda.set_sync_debug_mode("warn");
- the process's Python threads;
- each visit's median beside the CPU gauge read just before and just after it, so that how each
  part follows the host's CPU speed shows visit by visit within one process.

Variants (the generated `call` on the inputs its own get_args() makes; the compiled module as
users call it; the same with gc disabled) alternate in shuffled rounds; a synchronize follows
each call outside the clock, so the GPU is idle when each call starts. No profiler is attached
while timing. One JSON object per model is written to --out as it finishes.

Usage (GPU host): python3 validation/scripts/compiled_call_waits.py --out waits.json \
    --models convnext_tiny,convnext_small,regnet_y_400mf [--rounds 8] [--calls 20] [--light]
With --processes K each model is measured in K fresh processes one after another (how often a
process pays the milliseconds more). Anywhere: compiled_call_waits.py --summarize
waits.json[.xz]  (a --light run's table by CPU state)
"""
import argparse
import gc
import json
import os
import random
import statistics
import sys
import threading
import time
import traceback
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import cpu_gauge  # noqa: E402
import model_zoo  # noqa: E402

MARKS = []  # (event, perf_counter) of the compiled graph's entries and exits during a call
STASH = {}  # the compiled graph and a copy of its inputs, taken from one call when asked for


def summary(xs):
    xs = sorted(xs)
    return {"median": round(statistics.median(xs), 2), "p20": round(xs[len(xs) // 5], 2),
            "p80": round(xs[(4 * len(xs)) // 5], 2), "n": len(xs)}


def wrap_compiled_graph():
    """Wraps Inductor's compiled graph's __call__ so that each call marks entry and exit."""
    from torch._inductor import output_code
    cls = output_code.CompiledFxGraph
    inner = cls.__call__

    def marked(self, *a, **k):
        if STASH.get("want"):
            STASH.update(want=False, graph=self, inputs=list(a[0]))
        MARKS.append(("in", time.perf_counter()))
        try:
            return inner(self, *a, **k)
        finally:
            MARKS.append(("out", time.perf_counter()))
    cls.__call__ = marked


GC = {"n": [0, 0, 0], "us": [0.0, 0.0, 0.0], "t0": None}


def gc_callback(phase, info):
    if phase == "start":
        GC["t0"] = time.perf_counter()
    elif GC["t0"] is not None:
        g = info.get("generation", 0)
        GC["n"][g] += 1
        GC["us"][g] += (time.perf_counter() - GC["t0"]) * 1e6
        GC["t0"] = None


def parts(t0, t1, marks):
    """A call from t0 to t1 (seconds) split by the compiled graph's marks into the microseconds
    before its first entry, from that entry to its last exit, and after; None without both."""
    ins = [t for e, t in marks if e == "in"]
    outs = [t for e, t in marks if e == "out"]
    if not ins or not outs:
        return None
    return {"before": (ins[0] - t0) * 1e6, "inside": (outs[-1] - ins[0]) * 1e6, "after": (t1 - outs[-1]) * 1e6}


def by_state(visits, fast_below=4.3, slow_above=4.8):
    """Rounds whose four gauge readings (before and after the generated call's visit and the
    compiled module's) were all under fast_below µs (the fast state) or all over slow_above (the
    slow state); per state, the number of rounds and the medians of the generated call, the
    compiled module, the time outside (their difference) and its parts before the compiled graph
    and in it around the generated call."""
    rounds = {}
    for v in visits:
        rounds.setdefault(v["round"], {})[v["variant"]] = v
    out = {}
    for r in rounds.values():
        g, c = r.get("generated_call"), r.get("compiled_module")
        if not g or not c or "inside_median_us" not in c:
            continue
        gauges = [g["gauge_before_us"], g["gauge_after_us"], c["gauge_before_us"], c["gauge_after_us"]]
        state = "fast" if max(gauges) < fast_below else "slow" if min(gauges) > slow_above else None
        if state:
            out.setdefault(state, []).append((g["wall_median_us"], c["wall_median_us"], c["before_median_us"],
                                              c["inside_median_us"]))
    table = {}
    for state, rows in out.items():
        gen, cm, before, inside = (statistics.median(col) for col in zip(*rows))
        table[state] = {"rounds": len(rows), "generated_call_us": round(gen), "compiled_module_us": round(cm),
                        "outside_us": round(cm - gen), "before_us": round(before),
                        "inside_around_call_us": round(inside - gen)}
    return table


def summarize(path):
    """Prints by_state() for every model of a --light run's JSON (.json or .json.xz)."""
    import lzma
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        rows = json.load(f)["rows"]
    print("| model | state, rounds | generated call, µs | compiled module, µs | outside, µs | before the compiled graph | in it, around the generated call |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r or "visits" not in r:
            continue
        model = r["model"] + (f" (process {r['process']})" if "process" in r else "")
        for state, t in sorted(by_state(r["visits"]).items()):
            print(f"| {model} | {state}, {t['rounds']} | {t['generated_call_us']:,} | {t['compiled_module_us']:,} | "
                  f"{t['outside_us']:,} | {t['before_us']:,} | {t['inside_around_call_us']:,} |")


def timed(torch, fn, args_fn, calls, rec, no_gc=False):
    for _ in range(calls):
        a = args_fn()
        torch.cuda.synchronize()
        MARKS.clear()
        if no_gc:
            gc.disable()
        c0 = time.thread_time()
        t0 = time.perf_counter()
        fn(*a)
        t1 = time.perf_counter()
        c1 = time.thread_time()
        if no_gc:
            gc.enable()
        torch.cuda.synchronize()
        rec["wall"].append((t1 - t0) * 1e6)
        rec["cpu"].append((c1 - c0) * 1e6)
        split = parts(t0, t1, MARKS)
        if split:
            for f, us in split.items():
                rec[f].append(us)


def one(name, batch, rounds, calls, light=False):
    import torch
    import torch._dynamo
    import torch._inductor.config as icfg
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    icfg.fx_graph_cache = False
    m = model_zoo.build(name).half().cuda().eval()
    xs = model_zoo.cast_inputs(tuple(x.cuda() for x in model_zoo.inputs(name, batch, 128, "cpu")), torch.float16)
    out = {"model": name, "batch": batch, "precision": "fp16", "grad_mode": "inference_mode",
           "timing": "host clock (wall) and time.thread_time (the thread's CPU) from a call's start "
                     "to its return, a device synchronize after each call outside the clock, no profiler"}
    with torch.inference_mode():
        cm = torch.compile(m, dynamic=False)
        _, codes = run_and_get_code(cm, *xs)
        torch.cuda.synchronize()
        if len(codes) != 1:
            raise RuntimeError(f"{len(codes)} compiled graphs (graph breaks); this script takes one")
        mod = PyCodeCache.load(codes[0])
        args = mod.get_args()
        STASH.clear()
        STASH["want"] = True
        cm(*xs)
        real = STASH.get("inputs")
        variants = {"generated_call": (mod.call, lambda: (list(args),), False),
                    "compiled_module": (cm, lambda: xs, False),
                    "compiled_module_gc_off": (cm, lambda: xs, True)}
        if light:
            del variants["compiled_module_gc_off"]
        if real is not None and not light:  # the same generated call on the inputs the compiled module passes it
            detached = [t.detach() if isinstance(t, torch.Tensor) else t for t in real]
            out["real_inputs"] = {"n": len(real), "requires_grad": sum(
                1 for t in real if isinstance(t, torch.Tensor) and t.requires_grad),
                "inference_tensors": sum(1 for t in real if isinstance(t, torch.Tensor) and t.is_inference()),
                "get_args_inference_tensors": sum(1 for t in args if isinstance(t, torch.Tensor) and t.is_inference())}
            variants["generated_call_real_inputs"] = (mod.call, lambda: (list(real),), False)
            variants["generated_call_real_detached"] = (mod.call, lambda: (list(detached),), False)
            g = STASH["graph"]
            variants["current_callable_real_inputs"] = (g.current_callable, lambda: (list(real),), False)
        for fn, make, _ in variants.values():
            for _ in range(3):
                fn(*make())
        torch.cuda.synchronize()
        recs = {k: {"wall": [], "cpu": [], "before": [], "inside": [], "after": [], "gc_n": [0, 0, 0],
                    "gc_us": [0.0, 0.0, 0.0]} for k in variants}
        gauges, visits = [], []
        order = list(variants)
        for r in range(rounds):
            random.Random(r).shuffle(order)
            gauges.append(round(cpu_gauge.gauge_us(torch), 3))
            for k in order:
                fn, make, no_gc = variants[k]
                n0, us0 = list(GC["n"]), list(GC["us"])
                g0 = cpu_gauge.gauge_us(torch)
                start = len(recs[k]["wall"])
                timed(torch, fn, make, calls, recs[k], no_gc)
                g1 = cpu_gauge.gauge_us(torch)
                visit = {"round": r, "variant": k, "gauge_before_us": round(g0, 3), "gauge_after_us": round(g1, 3),
                         "wall_median_us": round(statistics.median(recs[k]["wall"][start:]), 1)}
                for f in ("before", "inside", "after"):
                    if len(recs[k][f]) > start:
                        visit[f + "_median_us"] = round(statistics.median(recs[k][f][start:]), 1)
                visits.append(visit)
                for g in range(3):
                    recs[k]["gc_n"][g] += GC["n"][g] - n0[g]
                    recs[k]["gc_us"][g] += GC["us"][g] - us0[g]
        out["cpu_gauge_us"] = gauges
        out["visits"] = visits
        out["variants"] = {}
        for k, v in recs.items():
            out["variants"][k] = {f: summary(v[f]) for f in ("wall", "cpu", "before", "inside", "after") if v[f]}
            out["variants"][k]["gc_collections"] = v["gc_n"]
            out["variants"][k]["gc_us_per_call"] = [round(x / (rounds * calls), 2) for x in v["gc_us"]]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                cm(*xs)
            finally:
                torch.cuda.set_sync_debug_mode("default")
            torch.cuda.synchronize()
        out["synchronizing_calls"] = sorted({str(w.message)[:200] for w in caught})
        out["threads"] = sorted(t.name for t in threading.enumerate())
        out["gc_thresholds"] = list(gc.get_threshold())
        out["gc_tracked_objects"] = len(gc.get_objects())
    return out


def child_argv(script, out, name, a):
    """The command line of one fresh process measuring one model as this one was asked to."""
    argv = [sys.executable, script, "--out", out, "--models", name, "--batch", str(a.batch),
            "--rounds", str(a.rounds), "--calls", str(a.calls)]
    return argv + (["--light"] if a.light else [])


def child_rows(path, name, batch, process, status):
    """The rows one fresh process wrote, each marked with its process; where it wrote none (it
    failed, or ran past its time), one row that says so."""
    try:
        with open(path) as f:
            rows = json.load(f)["rows"]
    except (OSError, ValueError, KeyError) as e:
        rows = [{"model": name, "batch": batch, "error": f"process {process} wrote no rows ({status}; {e!r:.200})"}]
    for r in rows:
        r["process"] = process
    return rows


def in_processes(a):
    """Each model in a.processes fresh processes, one after another, rows written as they come."""
    import subprocess
    import tempfile
    names = [n for n in a.models.split(",") if n]
    jobs = [(n, k) for n in names for k in range(1, a.processes + 1)]
    rows, t_start = [], time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, k) in enumerate(jobs):
            left = "" if i == 0 else f", about {(time.time() - t_start) / i * (len(jobs) - i):.0f} s left"
            print(f"{i + 1} of {len(jobs)}: {name}, process {k} of {a.processes}{left}", flush=True)
            out = os.path.join(tmp, f"{i}.json")
            try:
                rc = subprocess.run(child_argv(os.path.abspath(__file__), out, name, a),
                                    timeout=a.process_timeout).returncode
                status = f"exit status {rc}"
            except subprocess.TimeoutExpired:
                status = f"past its {a.process_timeout:.0f} s"
            rows += child_rows(out, name, a.batch, k, status)
            with open(a.out + ".tmp", "w") as f:
                json.dump({"kind": "ftax-compiled-call-waits", "rows": rows}, f, indent=1)
            os.replace(a.out + ".tmp", a.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="the JSON to write (required unless --summarize)")
    ap.add_argument("--models", help="comma list of zoo models (scripts/model_zoo.py)")
    ap.add_argument("--summarize", metavar="JSON",
                    help="print the fast- and slow-state table of a --light run's JSON and exit")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--light", action="store_true",
                    help="time only the generated call and the compiled module (more rounds in the "
                         "same time, for how each follows the CPU gauge visit by visit)")
    ap.add_argument("--processes", type=int, default=1,
                    help="measure each model in this many fresh Python processes, one after another "
                         "(rows carry `process`): how often a process lands in the state that pays "
                         "milliseconds more outside the generated code")
    ap.add_argument("--process-timeout", type=float, default=300, help="seconds one such process may take")
    a = ap.parse_args()
    if a.summarize:
        summarize(a.summarize)
        return
    if not a.out or not a.models:
        ap.error("--out and --models are required (or --summarize JSON)")
    if a.processes > 1:
        in_processes(a)
        return
    try:
        wrap_compiled_graph()
    except Exception as e:  # noqa: BLE001 - the other readings stand without the marks
        print(f"compiled graph not marked: {e!r}", flush=True)
    gc.callbacks.append(gc_callback)
    names = [n for n in a.models.split(",") if n]
    rows, t_start = [], time.time()
    for i, name in enumerate(names):
        left = "" if i == 0 else f", about {(time.time() - t_start) / i * (len(names) - i):.0f} s left"
        print(f"{i + 1} of {len(names)}: {name} batch {a.batch}{left}", flush=True)
        try:
            rec = one(name, a.batch, a.rounds, a.calls, a.light)
        except Exception as e:  # one model's failure never touches another's row
            rec = {"model": name, "batch": a.batch, "error": repr(e)[:400], "trace": traceback.format_exc()[-1200:]}
        print(json.dumps({k: rec[k] for k in ("model", "error", "variants", "synchronizing_calls") if k in rec}), flush=True)
        rows.append(rec)
        with open(a.out + ".tmp", "w") as f:
            json.dump({"kind": "ftax-compiled-call-waits", "rows": rows}, f, indent=1)
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
