#!/usr/bin/env python3
"""Measures the validation models (model_zoo.py) in Python eager PyTorch, the way a careful
user would: random weights, under torch.inference_mode() (or torch.no_grad(), --grad-mode),
warm-up, per-iteration host time with synchronization (median, p10, p90) and CUDA-event
time, all with no profiler attached, and the CPU gauge (cpu_gauge.py) around each visit
("cpu_gauge_us", the median over visits: the host's CPU speed while the point ran); then,
after every point is timed, one profiled pass per point (PyTorch's profiler, which reads
CUPTI) giving kernels per iteration, kernel time by
kernel name and the ATen ops dispatched from Python. With --graphs the eager module is also
captured as a CUDA graph (torch.cuda.graph around the eager call, the paper's "PyTorch + CUDA
Graphs") and its replays timed: rows with framework "cuda-graph", "captured_from": "eager".
A torch.compile reduce-overhead row also gets, before its profiled pass, 20 calls with the
replay marked (replay_marks.py): "before_replay_ms", the wrapper's CPU time from the call's start
to the replay's (the GPU idle), and "replay_gpu_ms", the replay's time on the GPU (medians).
Writes rows to --out as it goes (validation/campaigns.md, "File formats"); rows whose profiled
pass has not run yet carry "kernels_pending": true. `ftax validate --measured FILE --profile P`
puts predictions beside them.
"""
import argparse
import json
import os
import platform
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402
from spread import spread  # noqa: E402
import cpu_gauge  # noqa: E402
import replay_marks  # noqa: E402



def base_row(name, spec, kind, p, b, seq, xs, models_dir, framework, mode):
    """The fields that say which point a row measured, and how."""
    if framework == "pytorch-eager" and mode == "no_grad":
        framework = "pytorch-eager-no-grad"
    row = {"model": name, "arch": spec, "framework": framework, "precision": p,
           "batch": b, "seq": seq if kind == "text" else None, "mode": mode,
           "timing": "no-profiler", "kernels_pending": True}
    if framework == "cuda-graph":
        row["captured_from"] = "eager"
    pt = os.path.join(models_dir, f"{name}.{p}.pt") if models_dir else ""
    if pt and os.path.exists(pt):
        row["source"] = pt
        row["inputs"] = [{"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
                         for x in xs]
    return row


def busy_time(intervals):
    """The time covered by at least one of the (start, end) intervals: their union's length."""
    busy, cur_start, cur_end = 0.0, None, None
    for start, end in sorted(intervals):
        if cur_end is not None and start <= cur_end:
            cur_end = max(cur_end, end)
            continue
        if cur_end is not None:
            busy += cur_end - cur_start
        cur_start, cur_end = start, end
    if cur_end is not None:
        busy += cur_end - cur_start
    return busy


def profiled_fields(fn):
    """Kernel fields of a row from one profiled pass of `fn` (PyTorch's profiler, which reads
    CUPTI), run after all timing: kernels per iteration, kernel time by kernel name, ATen ops
    dispatched from Python."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    iters = 3
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    kernels = {}
    aten_top = 0
    kernel_us = 0.0
    nk = 0
    intervals = []
    for evt in prof.events():
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            d = evt.device_time if hasattr(evt, "device_time") else evt.cuda_time
            k = kernels.setdefault(evt.name[:160], [0, 0.0])
            k[0] += 1
            k[1] += d
            kernel_us += d
            nk += 1
            intervals.append((evt.time_range.start, evt.time_range.end))
        elif evt.name.startswith("aten::"):
            par = evt.cpu_parent
            if par is None or not par.name.startswith("aten::"):
                aten_top += 1
    # kernel_ms: the time at least one kernel ran (kernels that overlap, as cuDNN's per-group
    # kernels of a grouped convolution can, counted once); kernel_sum_ms: their summed durations.
    busy_us = busy_time(intervals) if intervals else 0.0
    return {"kernels_per_iter": nk / iters, "kernel_ms": busy_us / iters / 1e3,
            "kernel_sum_ms": kernel_us / iters / 1e3,
            "aten_ops_per_iter": aten_top / iters,
            "kernels": {k: [v[0] / iters, v[1] / iters] for k, v in kernels.items()}}


def host_probe_us(x0):
    """How fast the host's CPU side is right now, as Python eager sees it: time per op of the
    bench's 64-op kernel chain (`x = x + 1.0` on an 8x8 CUDA tensor, the host is the bound;
    bench_eager.py's "kernel" row of 64 ops times the same), the median of five chains, in
    microseconds per op. Timed before each visit: a row's `host_probe_us` (the median over its
    visits) tells a point timed while the process ran slow from a slow model."""
    import torch
    per_op = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x = x0
        for _ in range(64):
            x = x + 1.0
        torch.cuda.synchronize()
        per_op.append((time.perf_counter() - t0) * 1e6 / 64)
    return spread(per_op)["median"]


def pooled_rows(points, rounds, keep_samples=False):
    """One row per point with samples: the spread of every visit's samples pooled. With
    keep_samples a row of one visit carries its samples too (`samples_ms`, `event_samples_ms`),
    for a parent process that pools visits made in several processes (merge_visits)."""
    rows = []
    for pt in points:
        if not pt["host"] or pt["row"] is None:
            continue
        row = dict(pt["row"])
        row["latency_ms"] = spread(pt["host"])
        row["event_ms"] = spread(pt["ev"])
        if "kernel_ms" in row:
            row["framework_ms_measured"] = max(0.0, row["latency_ms"]["median"] - row["kernel_ms"])
        if pt.get("probes"):
            row["host_probe_us"] = spread(pt["probes"])["median"]
        if pt.get("gauges"):
            # the CPU's speed while the point was timed (cpu_gauge.py): `ftax validate`
            # predicts the point at this speed
            row["cpu_gauge_us"] = round(spread(pt["gauges"])["median"], 3)
        if rounds > 1:
            row["rounds"] = rounds
            row["visit_medians_ms"] = pt["visits"]
            if len(pt.get("probes", [])) == len(pt["visits"]):
                row["visit_probe_us"] = pt["probes"]
            if len(pt.get("order", [])) == len(pt["visits"]):
                row["visit_order"] = pt["order"]
            row["samples_ms"] = [round(v, 4) for v in pt["host"]]
        elif keep_samples:
            row["samples_ms"] = [round(v, 4) for v in pt["host"]]
            row["event_samples_ms"] = [round(v, 4) for v in pt["ev"]]
            if pt.get("probes"):
                row["visit_probe_us"] = pt["probes"]
            if pt.get("gauges"):
                row["visit_gauge_us"] = [round(g, 3) for g in pt["gauges"]]
        rows.append(row)
    return rows



POINT_KEY = ("model", "precision", "batch", "framework")


def merge_visits(points, part_rows, visit):
    """Adds one process's rows (one visit of each point, with their samples: --keep-samples) to
    `points` (point key -> the pooled_rows fields), numbering the visits in the order they ran
    from `visit`; returns the next visit number. A row with kernel fields gives the point
    its kernel fields."""
    for row in part_rows:
        key = tuple(row.get(k) for k in POINT_KEY)
        pt = points.setdefault(key, {"host": [], "ev": [], "visits": [], "probes": [], "gauges": [],
                                     "order": [], "row": None})
        host = row.get("samples_ms") or []
        if not host:
            continue
        base = {k: v for k, v in row.items()
                if k not in ("samples_ms", "event_samples_ms", "visit_probe_us", "visit_gauge_us", "latency_ms",
                             "event_ms", "framework_ms_measured", "host_probe_us", "cpu_gauge_us")}
        if pt["row"] is None or ("kernels" in base and "kernels" not in pt["row"]):
            pt["row"] = base
        pt["host"] += host
        pt["ev"] += row.get("event_samples_ms") or []
        pt["visits"].append(row["latency_ms"]["median"])
        pt["probes"] += row.get("visit_probe_us") or []
        pt["gauges"] += row.get("visit_gauge_us") or []
        pt["order"].append(visit)
        visit += 1
    return visit


def in_process_rounds(rounds, visits):
    """How many times a process visits each of its points: --rounds (without --isolate, or in
    the process of one round) times --visits, at least once."""
    return max(1, rounds) * max(1, visits)


def child_argv(argv, rounds, budget_s):
    """The options of one model's process under --isolate: as given, or with --rounds R > 1 one
    visit of budget/R per process (the parent pools the rounds), its samples kept, and the
    kernel pass left to the first round (the caller adds --kernels or --no-kernels). Options
    for the process itself, --visits among them, pass through."""
    if rounds <= 1:
        return list(argv)
    drop = {"--rounds", "--budget-s", "--kernels", "--no-kernels"}
    kept, skip = [], False
    for x in argv:
        if skip:
            skip = False
            continue
        if x.split("=")[0] in drop:
            skip = "=" not in x and x in ("--rounds", "--budget-s")
            continue
        kept.append(x)
    return kept + ["--rounds", "1", "--budget-s", repr(budget_s / rounds), "--keep-samples"]


def run_isolated(a, names):
    """Runs this script once per model (--no-isolate) and merges the rows and failures into
    --out after each model, so an interruption loses only the model being measured. With
    --rounds R > 1 every model is run R times, in a new shuffled order of the models each
    round, each time for one visit of each of its points with budget/R, and the visits of a
    point pooled: a slow stretch of the host that lasts minutes then reaches every model
    alike and shows in its points' p10-p90, as the TorchScript stage's rounds do (`ftax
    validate --rounds`). The kernel records come from the first round's processes."""
    import subprocess
    doc = None
    rounds = max(1, a.rounds)
    argv = child_argv(sys.argv[1:], rounds, a.budget_s)
    points, visit, failed = {}, 0, set()
    jobs = []
    for r in range(rounds):
        order = list(names)
        if rounds > 1:
            random.Random(a.seed * 1000003 + r).shuffle(order)
        jobs += [(r, name) for name in order]
    for k, (r, name) in enumerate(jobs):
        if name in failed:
            continue
        part = a.out + "." + name + ".part.json"
        extra = []
        if rounds > 1:
            extra = ["--kernels" if r == 0 and a.kernels else "--no-kernels"]
        args = [sys.executable, os.path.abspath(__file__)] + argv + extra + [
            "--models", name, "--out", part, "--no-isolate"]
        t0 = time.time()
        tag = f"round {r + 1}/{rounds}, " if rounds > 1 else ""
        print(f"{tag}model {k + 1} of {len(jobs)}: {name}", file=sys.stderr, flush=True)
        try:
            rc = subprocess.run(args, timeout=a.model_timeout_s or None).returncode
            why = f"its process exited with code {rc}" if rc else ""
        except subprocess.TimeoutExpired:
            why = f"its process ran past --model-timeout-s {a.model_timeout_s:g} and was killed"
        one = json.load(open(part)) if os.path.exists(part) else None
        if one is not None:
            os.remove(part)
        if doc is None:
            doc = dict(one) if one else {"schema_version": 1, "kind": "ftax-validation-measurements",
                                         "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                         "rows": [], "failures": []}
            doc["rows"], doc["failures"] = [], []
            doc.pop("finished", None)
            doc["isolated"] = "each model measured in a process of its own"
            if rounds > 1:
                doc["rounds"] = {"rounds": rounds, "seed": a.seed, "across": "processes, models shuffled each round"}
        if one is not None:
            for key in ("host", "mode", "timing"):
                doc.setdefault(key, one.get(key))
            for f in one.get("failures", []):
                # a point that fails fails in every round (a graph that cannot be captured): once
                if rounds > 1 and any(all(g.get(k) == f.get(k) for k in POINT_KEY) for g in doc["failures"]):
                    continue
                doc["failures"].append(dict(f, round=r + 1) if rounds > 1 else f)
            if rounds > 1:
                visit = merge_visits(points, one.get("rows", []), visit)
            else:
                doc["rows"] += one.get("rows", [])
        if why:
            doc["failures"].append({"model": name, "error": why + " (%.0f s); rows it wrote are kept" % (time.time() - t0)})
            if rounds > 1:
                failed.add(name)  # its later rounds are not run: the rows it has are kept
        if rounds > 1:
            doc["rows"] = pooled_rows(list(points.values()), rounds)
        with open(a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(a.out + ".tmp", a.out)
    if doc is None:
        doc = {"schema_version": 1, "kind": "ftax-validation-measurements", "rows": [], "failures": []}
    doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(a.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(a.out + ".tmp", a.out)
    return 0


def fold_parts(out):
    """Folds into `out` what per-model processes of --isolate wrote to their part files
    (OUT.MODEL.part.json) and no merge took in: what a run killed in the middle of a model
    (a campaign's deadline) leaves, since the parent merges a model's rows only when its process
    ends. Each part's rows for points `out` lacks are appended, its model recorded as a failure
    that says the run was interrupted and its rows kept, and the part removed; a part that
    cannot be read is left where it is and named. Returns how many rows were folded in."""
    import glob
    parts = sorted(glob.glob(glob.escape(out) + ".*.part.json"))
    if not parts:
        return 0
    doc = json.load(open(out)) if os.path.exists(out) else {
        "schema_version": 1, "kind": "ftax-validation-measurements", "rows": [], "failures": []}
    have = {tuple(r.get(k) for k in POINT_KEY) for r in doc.get("rows", [])}
    folded = 0
    for part in parts:
        try:
            one = json.load(open(part))
        except (OSError, ValueError) as e:
            print(f"validate_eager.py: {part}: not folded in, unreadable ({e})", file=sys.stderr)
            continue
        model = os.path.basename(part)[len(os.path.basename(out)) + 1:-len(".part.json")]
        for key in ("host", "mode", "timing"):
            if key in one:
                doc.setdefault(key, one[key])
        new = [r for r in one.get("rows", []) if tuple(r.get(k) for k in POINT_KEY) not in have]
        doc.setdefault("rows", []).extend(new)
        doc.setdefault("failures", []).extend(one.get("failures", []))
        doc["failures"].append({"model": model, "error": "the run was interrupted while this model was measured; "
                                f"the {len(new)} row(s) its process wrote are kept"})
        have |= {tuple(r.get(k) for k in POINT_KEY) for r in new}
        folded += len(new)
        with open(out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(out + ".tmp", out)
        os.remove(part)
    return folded


def marked_fields(torch, fn, calls=20):
    """A reduce-overhead point's calls with the replay marked (replay_marks.py): medians of the
    CPU's time before the replay and of the replay's time on the GPU, in ms; none without a
    replay."""
    import statistics
    marks = [m for m in (replay_marks.timed_call(torch, fn) for _ in range(calls)) if m]
    if not marks:
        return {}
    return {"before_replay_ms": round(statistics.median(m[0] for m in marks) / 1e3, 5),
            "replay_gpu_ms": round(statistics.median(m[1] for m in marks) / 1e3, 5)}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(model_zoo.MODELS))
    ap.add_argument("--precisions", default="fp16,fp32")
    ap.add_argument("--batches", default="1,2,4,8,16,32,64,128")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--budget-s", type=float, default=1.0, help="timing budget per point")
    ap.add_argument("--rounds", type=int, default=1,
                    help="visit every point this many times in shuffled order, pooling the samples; with "
                         "--isolate (the default) each round runs every model's process again, the models "
                         "in a new shuffled order, so that a slow stretch of the host reaches them alike")
    ap.add_argument("--visits", type=int, default=1,
                    help="visit every point this many times within its model's process, in shuffled "
                         "order, timing budget/V each and pooling the samples: the model is built and "
                         "compiled once (torch.compile's compiles take most of a model's process), and "
                         "its points still span seconds of the host's CPU, whose speed switches between "
                         "two states within seconds (validation/scripts/compile_sequence_cpu.py)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the shuffled round orders")
    ap.add_argument("--grad-mode", choices=["inference", "no_grad"], default="inference",
                    help="torch.inference_mode() (what inference code should use) or torch.no_grad()")
    ap.add_argument("--graphs", action="store_true",
                    help="also capture the eager module as a CUDA graph and time its replays")
    ap.add_argument("--compile", default="",
                    help="also time torch.compile(model) in these modes (comma list of default, "
                         "reduce-overhead): frameworks torch-compile and torch-compile-reduce-overhead; "
                         "each batch compiled for its own shapes (dynamic=False); compile time (the "
                         "first call at each shape) goes to the row's compile_s, never into latency")
    ap.add_argument("--kernels", action=argparse.BooleanOptionalAction, default=True,
                    help="after all timing, one profiled pass per point for its kernel records "
                         "(default); --no-kernels skips it, for a second timing pass whose kernels "
                         "an earlier pass recorded (validation/scripts/merge_passes.py joins them)")
    ap.add_argument("--models-dir", default="",
                    help="where export_torchscript.py wrote NAME.PRECISION.pt: rows then name that file "
                         "and their inputs, so ftax can predict from the trace (models without an arch spec)")
    ap.add_argument("--fold-parts", action="store_true",
                    help="measure nothing: fold into --out the rows of the part files a run killed in the "
                         "middle of a model left (OUT.MODEL.part.json), then exit")
    ap.add_argument("--isolate", action=argparse.BooleanOptionalAction, default=True,
                    help="measure each model in a Python process of its own (default), so that a "
                         "failed CUDA graph capture, which can leave CUDA's random-number state "
                         "unusable for the rest of the process, never touches another model's points")
    ap.add_argument("--keep-samples", action="store_true",
                    help="rows of one visit carry their samples too (the parent process of --isolate "
                         "--rounds R pools the visits its processes made)")
    ap.add_argument("--model-timeout-s", type=float, default=0,
                    help="with --isolate: seconds one model's process may run before it is killed "
                         "and its points recorded as failures (0: no limit)")
    a = ap.parse_args()
    if a.fold_parts:
        n = fold_parts(a.out)
        print(f"validate_eager.py: {n} row(s) of interrupted models folded into {a.out}", file=sys.stderr)
        return 0
    names = a.models.split(",")
    if a.isolate and len(names) > 1:
        return run_isolated(a, names)
    import torch
    replay_marks.install(torch)  # marks reduce-overhead's replays in marked_fields only
    dev = torch.device("cuda")
    dtypes = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}
    doc = {"schema_version": 1, "kind": "ftax-validation-measurements",
           "host": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                    "python": platform.python_version(),
                    "sm_count": torch.cuda.get_device_properties(0).multi_processor_count},
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": [], "failures": [],
           "mode": a.grad_mode,
           "timing": "host clock per iteration with torch.cuda.synchronize, no profiler attached; "
                     "kernel records from a profiled pass after all timing"}
    if in_process_rounds(a.rounds, a.visits) > 1:
        doc["rounds"] = {"rounds": in_process_rounds(a.rounds, a.visits), "seed": a.seed}
        if a.visits > 1:
            doc["rounds"]["across"] = "visits within the model's process, points shuffled each round"

    def flush():
        with open(a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(a.out + ".tmp", a.out)

    # Every model in every precision is built first; then the points are timed in rounds
    # (--rounds R: each point visited R times, in a new shuffled order per round, timing
    # budget/R per visit, samples pooled; see src/calibrate/measurement_rounds.h).
    built = {}
    for name in a.models.split(","):
        for p in a.precisions.split(","):
            try:
                built[(name, p)] = model_zoo.build(name).to(dev).to(dtypes[p])
            except Exception as e:
                doc["failures"].append({"model": name, "precision": p, "error": repr(e)[:300]})
                flush()
    grad_ctx = torch.inference_mode if a.grad_mode == "inference" else torch.no_grad
    compile_fw = {"default": "torch-compile", "reduce-overhead": "torch-compile-reduce-overhead"}
    for mode in filter(None, a.compile.split(",")):
        if mode not in compile_fw:
            ap.error(f"--compile: unknown mode '{mode}' (default, reduce-overhead)")
    frameworks = (["pytorch-eager"] + (["cuda-graph"] if a.graphs else []) +
                  [compile_fw[m] for m in filter(None, a.compile.split(","))])
    compiled = {}  # (model, precision, mode) -> torch.compile'd module
    # Framework-major order: every eager point of a model is timed (and its kernels recorded)
    # before its first CUDA graph capture, because a failed capture can leave the process's CUDA
    # random-number state unusable ("Offset increment outside graph capture") for all that follows.
    points = [{"model": name, "precision": p, "batch": int(b), "framework": fw, "host": [], "ev": [],
               "visits": [], "probes": [], "gauges": [], "order": [], "row": None, "failed": False}
              for (name, p) in built for fw in frameworks for b in a.batches.split(",")]
    rounds = in_process_rounds(a.rounds, a.visits)
    probe = torch.randn(8, 8, device=dev)
    visits = 0

    def prepared(pt):
        """The point's model, inputs, and the function one iteration calls: the eager module,
        or the replay of a CUDA graph captured from it (warmed up on a side stream first)."""
        name, p, b = pt["model"], pt["precision"], pt["batch"]
        m = built[(name, p)]
        # Drawn by the CPU's generator and copied over: a failed CUDA graph capture can leave
        # the CUDA generator unusable ("Offset increment outside graph capture"), which cost
        # BART's encoder its eager rows' kernel pass on host run au.
        xs = model_zoo.cast_inputs(tuple(x.to(dev) for x in model_zoo.inputs(name, b, a.seq, "cpu")), dtypes[p])
        if pt["framework"] == "pytorch-eager":
            return m, xs, (lambda: m(*xs)), None
        if pt["framework"].startswith("torch-compile"):
            mode = "reduce-overhead" if pt["framework"].endswith("reduce-overhead") else "default"
            key = (name, p, mode)
            if key not in compiled:
                # dynamic=False: each batch is compiled for its own shapes, as a model served
                # at one batch size is (and as bench_eager.py's chains are). Left to its
                # default, the second batch size would recompile with a dynamic batch, and
                # Inductor turns its channels-last layout of convolutions off for dynamic
                # shapes (CUPTI: ResNet-18 at batch 8 after batch 1 ran cuDNN's NCHW
                # transposes around 37 convolution kernels, at batch 1 none).
                compiled[key] = torch.compile(m, mode=None if mode == "default" else mode, dynamic=False)
            cm = compiled[key]
            if "compile_s" not in pt:
                t0 = time.perf_counter()  # the first call at this shape compiles
                cm(*xs)
                torch.cuda.synchronize()
                pt["compile_s"] = time.perf_counter() - t0
            return m, xs, (lambda: cm(*xs)), None
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), grad_ctx():
            for _ in range(3):
                m(*xs)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with grad_ctx(), torch.cuda.graph(g):
            m(*xs)
        torch.cuda.synchronize()
        return m, xs, g.replay, g

    for r in range(rounds):
        order = list(range(len(points)))
        if rounds > 1:
            random.Random(a.seed * 1000003 + r).shuffle(order)
        for i in order:
            pt = points[i]
            if pt["failed"]:
                continue
            name, p, b = pt["model"], pt["precision"], pt["batch"]
            spec, kind = model_zoo.MODELS[name]
            try:
                probe_us = host_probe_us(probe)
                with grad_ctx():
                    m, xs, fn, graph = prepared(pt)
                    w0 = time.perf_counter()  # warm-up: 3 (later visits 2) iterations and 50 ms
                    k = 0
                    while k < (3 if not pt["visits"] else 2) or (k < 2000 and time.perf_counter() - w0 < 0.05):
                        fn()
                        torch.cuda.synchronize()
                        k += 1
                    t0 = time.perf_counter()
                    fn()
                    torch.cuda.synchronize()
                    one = time.perf_counter() - t0
                    lo = -(-10 // rounds)  # ceil: at least 10 samples over all visits
                    reps = int(max(lo, min(400, a.budget_s / rounds / max(one, 1e-6))))
                    host, ev = [], []
                    gauge0 = cpu_gauge.gauge_us(torch)
                    for _ in range(reps):
                        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        t0 = time.perf_counter()
                        s.record()
                        fn()
                        e.record()
                        torch.cuda.synchronize()
                        host.append((time.perf_counter() - t0) * 1e3)
                        ev.append(s.elapsed_time(e))
                    gauge = (gauge0 + cpu_gauge.gauge_us(torch)) / 2
                    if pt["row"] is None:
                        pt["row"] = base_row(name, spec, kind, p, b, a.seq, xs, a.models_dir,
                                             pt["framework"], a.grad_mode)
                        if "compile_s" in pt:
                            pt["row"]["compile_s"] = round(pt["compile_s"], 2)
                            pt["row"]["compile_dynamic"] = False
                    del graph
                lat = spread(host)
                pt["host"] += host
                pt["ev"] += ev
                pt["visits"].append(lat["median"])
                pt["probes"].append(probe_us)
                pt["gauges"].append(gauge)
                if rounds > 1:
                    pt["order"].append(visits)
                    visits += 1
                tag = f"round {r + 1}/{rounds} " if rounds > 1 else ""
                print(f"{tag}{pt['framework']} {name} {p} b{b}: {lat['median']:.2f} ms "
                      f"[{lat['p10']:.2f}, {lat['p90']:.2f}]", file=sys.stderr)
            except Exception as e:
                pt["failed"] = True
                doc["failures"].append({"model": name, "precision": p, "batch": b,
                                        "framework": pt["framework"], "error": repr(e)[:300]})
                torch.cuda.empty_cache()
            if rounds == 1:
                doc["rows"] = pooled_rows(points, rounds, a.keep_samples)
                flush()
        if rounds > 1:
            doc["rows"] = pooled_rows(points, rounds)
            flush()
            print(f"round {r + 1}/{rounds} written", file=sys.stderr)
    # Kernel records last, when every latency has been timed: the profiler attaches CUPTI,
    # which slows launches, and nothing timed may run while it is attached.
    for k, pt in enumerate(points):
        if pt["row"] is None or pt["failed"] or not a.kernels:
            continue
        try:
            with grad_ctx():
                m, xs, fn, graph = prepared(pt)
                fn()
                torch.cuda.synchronize()
                if pt["framework"] == "torch-compile-reduce-overhead":
                    try:  # the point's kernel records do not hang on its marks
                        pt["row"].update(marked_fields(torch, fn))
                    except Exception as e:
                        print(f"marks {pt['model']} b{pt['batch']}: {repr(e)[:200]}", file=sys.stderr)
                pt["row"].update(profiled_fields(fn))
                pt["row"].pop("kernels_pending", None)
                del graph
            row = pt["row"]
            print(f"kernels {k + 1}/{len(points)} {pt['framework']} {pt['model']} {pt['precision']} "
                  f"b{pt['batch']}: {row['kernels_per_iter']:.0f} kernels, {row['kernel_ms']:.2f} ms",
                  file=sys.stderr)
        except Exception as e:
            doc["failures"].append({"model": pt["model"], "precision": pt["precision"], "batch": pt["batch"],
                                    "framework": pt["framework"], "error": "kernel pass: " + repr(e)[:300]})
        doc["rows"] = pooled_rows(points, rounds, a.keep_samples)
        flush()
    doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
