#!/usr/bin/env python3
"""What each kind of statement of torch.compile's default-mode wrapper costs the CPU per call.

For each zoo model (scripts/model_zoo.py) and for two of `ftax bench`'s compiled chains, fp16
on the GPU under torch.inference_mode(): torch.compile(model, dynamic=False) is compiled for one
batch and the Python module Inductor generated is read back (run_and_get_code). That module is
loaded again as it is, and once per kind of statement with every statement of that kind run
twice (Triton launches, split by how many tensors a launch passes; library "extern" calls; ATen
fallback ops; buffer allocations; stride reinterpretations; size and alignment asserts; stream
lookups). Each variant's `call` is fed the inputs the module's own get_args() makes, and the
CPU time of a call is taken by the host clock from its start to its return, with a device
synchronize after the clock stops (no profiler attached): the GPU is idle when each call
starts, so no launch waits for it. A kind's cost per statement is (variant - original) / count.
The compiled module as users call it (guards, AOTAutograd's wrappers, then `call`) is timed the
same way, so that the cost outside `call` shows too; the census of Dynamo's guards (how many of
each type, and one check of them timed by itself) and of the model's modules by class say
where that cost comes from.

The variants are visited in shuffled rounds, --calls calls each visit, and each variant's
samples pooled: the CPU of a host has been seen to switch between two speeds within about a
second (validation/README.md, host run cg), so the 20th percentile (the fast state) is reported
beside the median, with the CPU gauge (scripts/cpu_gauge.py) read once per round.

One JSON object per model and batch is written to --out as it finishes; a model that fails
records its error and the next goes on.

Usage (GPU host): python3 validation/scripts/compiled_call_anatomy.py --out anatomy.json \
    --models convnext_tiny,vit_b_32,chain:kernel64,chain:param64 [--batch 1] [--rounds 8]
(chain:convbnN, chain:lnlinearN and chain:mhaN: N small layers of one type as models build
them, for what each layer type costs outside the generated call.)
"""
import argparse
import collections
import json
import os
import random
import re
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import cpu_gauge  # noqa: E402
import model_zoo  # noqa: E402

TRITON = re.compile(r"^(\s*)(\w+)\.run\((.*)\)\s*$")
REINTERPRET = "reinterpret_tensor("


def call_span(lines):
    """[start, end) of the body of the wrapper's `def call(...)`."""
    start = next(i for i, l in enumerate(lines) if re.match(r"\s*def call\(", l))
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    return start + 1, end


def balanced(text, open_at):
    """The text from `open_at` (an opening parenthesis) to its matching closing one."""
    depth = 0
    for i in range(open_at, len(text)):
        depth += text[i] == "("
        depth -= text[i] == ")"
        if depth == 0:
            return text[open_at:i + 1]
    raise ValueError("unbalanced parentheses: " + text[:120])


def tensor_args(run_args):
    """How many tensors a Triton launch passes (names of buffers and graph inputs)."""
    head = run_args.split("stream=")[0]
    return sum(1 for a in head.split(",") if re.match(r"\s*(buf|arg|primals_|tangents_)\w*\s*$", a))


def kind_of(line):
    """The kinds (see KINDS) a statement of `call` belongs to, by the text Inductor writes."""
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    m = TRITON.match(line)
    if m:
        return "triton_le3" if tensor_args(m.group(3)) <= 3 else "triton_ge4"
    if "extern_kernels." in s:
        return "extern"
    if re.match(r"\w+ = torch\.ops\.\w+\.\w+", s):
        return "fallback"
    if s.startswith(("assert_size_stride(", "assert_alignment(")):
        return "assert"
    if re.match(r"\w+ = empty_strided(_cuda)?\(", s):
        return "alloc"
    if re.match(r"stream\d+ = get_raw_stream\(", s):
        return "stream"
    return None


KINDS = ["triton_le3", "triton_ge4", "extern", "fallback", "assert", "alloc", "stream", "reinterpret"]


def variant(code, kind):
    """The wrapper module with each statement of `kind` in `call` run twice, and how many
    statements that doubled."""
    lines = code.splitlines()
    start, end = call_span(lines)
    out, n = lines[:start], 0
    for line in lines[start:end]:
        if kind == "reinterpret" and REINTERPRET in line and not line.strip().startswith("#"):
            indent = line[:len(line) - len(line.lstrip())]
            pos = line.find(REINTERPRET)
            while pos >= 0:  # the call again, its result dropped, before the line that uses it
                out.append(indent + "_ftax_dup = " + REINTERPRET[:-1] + balanced(line, pos + len(REINTERPRET) - 1))
                n += 1
                pos = line.find(REINTERPRET, pos + 1)
        out.append(line)
        if kind != "reinterpret" and kind_of(line) == kind:
            out.append(line)
            n += 1
    return "\n".join(out + lines[end:]) + "\n", n


def counts(code):
    lines = code.splitlines()
    start, end = call_span(lines)
    c = {k: 0 for k in KINDS}
    for line in lines[start:end]:
        k = kind_of(line)
        if k:
            c[k] += 1
        if not line.strip().startswith("#"):
            c["reinterpret"] += line.count(REINTERPRET)
    unpack = next((l for l in lines[start:end] if re.search(r"=\s*args\s*$", l)), "")
    c["graph_inputs"] = unpack.count(",") + 1 if unpack else 0
    return c


def chain(torch, name, dev):
    """One of `ftax bench`'s compiled chains (scripts/bench_eager.py, compile_rows): chain:kernelN
    (N softmaxes, N Triton kernels) or chain:paramN (the same with four tensors of model state
    read by each kernel); or N small layers as models build them, fp16, so that what a layer
    type costs outside the generated call (its modules' guards) shows: chain:convbnN
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU in an nn.Sequential), chain:lnlinearN (nn.LayerNorm,
    nn.Linear, nn.GELU) and chain:mhaN (nn.MultiheadAttention, batch first)."""
    m = re.match(r"chain:(kernel|param|convbn|lnlinear|mha)(\d+)$", name)
    if not m:
        raise ValueError(f"unknown chain '{name}' (chain:kernelN, paramN, convbnN, lnlinearN or mhaN)")
    kind, n = m.group(1), int(m.group(2))
    nn = torch.nn
    if kind == "convbn":
        layers = [nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
                  for _ in range(n)]
        return nn.Sequential(*layers).to(dev).half().eval(), (torch.randn(1, 8, 8, 8, device=dev).half(),)
    if kind == "lnlinear":
        layers = [nn.Sequential(nn.LayerNorm(64), nn.Linear(64, 64), nn.GELU()) for _ in range(n)]
        return nn.Sequential(*layers).to(dev).half().eval(), (torch.randn(1, 16, 64, device=dev).half(),)
    if kind == "mha":
        class SelfAttention(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(64, 4, batch_first=True)

            def forward(self, x):
                return self.attn(x, x, x, need_weights=False)[0]
        return (nn.Sequential(*[SelfAttention() for _ in range(n)]).to(dev).half().eval(),
                (torch.randn(1, 16, 64, device=dev).half(),))

    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            with torch.inference_mode(False):
                for i in range(n if kind == "param" else 0):
                    self.register_buffer(f"w{i}", torch.rand(8, device=dev) + 0.5)
                    self.register_buffer(f"b{i}", torch.rand(8, device=dev))
                    self.register_buffer(f"mean{i}", torch.rand(8, device=dev))
                    self.register_buffer(f"var{i}", torch.rand(8, device=dev) + 0.5)

        def forward(self, x):
            for i in range(n):
                if kind == "param":
                    g = lambda s: getattr(self, f"{s}{i}")  # noqa: E731
                    x = (x - g("mean")) * torch.rsqrt(g("var") + 1e-5) * g("w") + g("b")
                x = torch.softmax(x, dim=i % 2)
            return x
    return Chain().eval(), (torch.randn(8, 8, device=dev),)


def issue_samples(fn, make_args, calls):
    """CPU microseconds of `calls` calls, each from its start to its return, a synchronize after."""
    import torch
    out = []
    for _ in range(calls):
        a = make_args()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(*a)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        out.append((t1 - t0) * 1e6)
    return out


def summary(xs):
    xs = sorted(xs)
    return {"median": round(statistics.median(xs), 2), "p20": round(xs[len(xs) // 5], 2),
            "p10": round(xs[len(xs) // 10], 2), "p90": round(xs[(9 * len(xs)) // 10], 2), "n": len(xs)}


def one(name, batch, rounds, calls, explain=False, kinds=KINDS):
    import torch
    import torch._dynamo
    import torch._inductor.config as icfg
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    icfg.fx_graph_cache = False  # the code must be generated, not read from the cache
    dev = "cuda"
    if name.startswith("chain:"):
        m, xs = chain(torch, name, dev)
    else:
        m = model_zoo.build(name).half().cuda().eval()
        xs = model_zoo.cast_inputs(tuple(x.cuda() for x in model_zoo.inputs(name, batch, 128, "cpu")), torch.float16)
    rec = {"model": name, "batch": batch, "precision": "fp16", "grad_mode": "inference_mode",
           "timing": "host clock from a call's start to its return, a device synchronize after "
                     "each call outside the clock, no profiler attached"}
    with torch.inference_mode():
        cm = torch.compile(m, dynamic=False)
        t0 = time.perf_counter()
        _, codes = run_and_get_code(cm, *xs)
        torch.cuda.synchronize()
        rec["compile_s"] = round(time.perf_counter() - t0, 2)
        rec["wrappers"] = len(codes)
        if len(codes) != 1:
            raise RuntimeError(f"{len(codes)} compiled graphs (graph breaks); this script takes one")
        code = codes[0]
        rec["statements"] = counts(code)
        mods = {"original": PyCodeCache.load(code)}
        doubled = {}
        for k in kinds:
            if rec["statements"][k]:
                src, n = variant(code, k)
                mods[k] = PyCodeCache.load(src)
                doubled[k] = n
        args = mods["original"].get_args()
        fns = {k: (mod.call, lambda: (list(args),)) for k, mod in mods.items()}
        fns["compiled_module"] = (cm, lambda: xs)
        for fn, make in fns.values():  # warm each variant (its kernels' first launches)
            for _ in range(3):
                fn(*make())
        torch.cuda.synchronize()
        samples = {k: [] for k in fns}
        gauges = []
        order = list(fns)
        for r in range(rounds):
            random.Random(r).shuffle(order)
            gauges.append(round(cpu_gauge.gauge_us(torch), 3))
            for k in order:
                fn, make = fns[k]
                samples[k] += issue_samples(fn, make, calls)
        rec["cpu_gauge_us"] = gauges
        rec["cpu_us"] = {k: summary(v) for k, v in samples.items()}
        base = rec["cpu_us"]["original"]
        rec["doubled"] = doubled
        rec["us_per_statement"] = {
            k: {s: round((rec["cpu_us"][k][s] - base[s]) / n, 3) for s in ("p20", "median")}
            for k, n in doubled.items() if n}
        rec["outside_call_us"] = {s: round(rec["cpu_us"]["compiled_module"][s] - base[s], 2)
                                  for s in ("p20", "median")}
        try:
            rec["guards"] = guard_census(torch, m, xs)
        except Exception as e:  # noqa: BLE001 - the timing above stands without it
            rec["guards"] = {"error": repr(e)[:300]}
        rec["modules"] = dict(sorted(collections.Counter(type(x).__name__ for x in m.modules()).items(),
                                     key=lambda kv: -kv[1]))
        if explain:
            rec["explained"] = explain_outside(torch, cm, xs, mods["original"].call, args)
    return rec


def guard_census(torch, m, xs, calls=200):
    """Dynamo's guards on the compiled frame: how many leaf guards of each type its guard tree
    holds, and what one check of the whole tree costs the CPU (its C++ check called directly with
    the frame's locals, `calls` times, median of five batches). Read through Dynamo's debugging
    accessors; where a version lacks them, the error is recorded instead."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    out = {"inline_inbuilt_nn_modules": bool(getattr(torch._dynamo.config, "inline_inbuilt_nn_modules", False))}
    frames = {"forward": (type(m).forward.__code__, {"self": m, **{f"x{i}": x for i, x in enumerate(xs)}}),
              "_call_impl": (torch.nn.Module._call_impl.__code__, {"self": m, "args": xs, "kwargs": {}}),
              "_wrapped_call_impl": (torch.nn.Module._wrapped_call_impl.__code__,
                                     {"self": m, "args": xs, "kwargs": {}})}
    for name, (code, f_locals) in frames.items():
        entries = _debug_get_cache_entry_list(code)
        if not entries:
            continue
        gm = entries[0].guard_manager
        kinds, managers = {}, 0
        stack = [getattr(gm, "root", gm)]
        while stack:
            node = stack.pop()
            managers += 1
            for g in node.get_leaf_guards():
                kinds[type(g).__name__] = kinds.get(type(g).__name__, 0) + 1
            stack += list(node.get_child_managers())
        rec = {"cache_entries": len(entries), "managers": managers, "leaf_guards": sum(kinds.values()),
               "leaf_guards_by_type": dict(sorted(kinds.items(), key=lambda kv: -kv[1]))}
        try:
            if name == "forward":  # the frame's own argument names
                names = code.co_varnames[:code.co_argcount]
                f_locals = {"self": m, **dict(zip(names[1:], xs))}
            rec["check_passes"] = bool(gm.check(f_locals))
            batches = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(calls):
                    gm.check(f_locals)
                batches.append((time.perf_counter() - t0) / calls * 1e6)
            rec["check_us"] = round(statistics.median(batches), 3)
        except Exception as e:  # noqa: BLE001 - a version without the accessor records why
            rec["check_error"] = repr(e)[:200]
        out[name] = rec
    return out


def explain_outside(torch, cm, xs, call, args, calls=50):
    """Where the compiled module's time outside `call` goes, from separate passes after all
    timing (their numbers carry the tools' own overhead; only their shares are read): the
    PyTorch profiler, CPU activity only (no CUPTI), by event name, and cProfile's Python
    functions by their own time, over `calls` calls of the compiled module and of `call`."""
    import cProfile
    import pstats
    out = {}
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            cm(*xs)
        torch.cuda.synchronize()
    ev = {}
    for e in prof.key_averages():
        ev[e.key] = (round(e.cpu_time_total / calls, 2), round(e.self_cpu_time_total / calls, 2), e.count // calls)
    out["profiler_us_per_call"] = dict(sorted(ev.items(), key=lambda kv: -kv[1][0])[:25])
    for name, fn, make in (("compiled_module", cm, lambda: xs), ("call", call, lambda: (list(args),))):
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(calls):
            fn(*make())
        pr.disable()
        torch.cuda.synchronize()
        st = pstats.Stats(pr)
        rows = []
        for (file, line, func), (cc, nc, tt, ct, _) in st.stats.items():
            rows.append((tt / calls * 1e6, ct / calls * 1e6, nc // calls, f"{os.path.basename(file)}:{line}:{func}"))
        rows.sort(reverse=True)
        out["cprofile_" + name] = [{"own_us": round(a, 2), "total_us": round(b, 2), "calls": c, "function": f}
                                   for a, b, c, f in rows[:30]]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True,
                    help="comma list of zoo models and chains: chain:kernelN, paramN, convbnN, lnlinearN, mhaN")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=8, help="shuffled visits of every variant")
    ap.add_argument("--calls", type=int, default=30, help="calls timed per visit")
    ap.add_argument("--explain", action="store_true",
                    help="after the timing, profile where the time outside `call` goes (profiler "
                         "CPU events and cProfile, separate passes)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="kinds of statement to double (empty: none)")
    a = ap.parse_args()
    names = [n for n in a.models.split(",") if n]
    results = []
    t_start = time.time()
    for i, name in enumerate(names):
        left = "" if i == 0 else f", about {(time.time() - t_start) / i * (len(names) - i):.0f} s left"
        print(f"{i + 1} of {len(names)}: {name} batch {a.batch}{left}", flush=True)
        try:
            rec = one(name, a.batch, a.rounds, a.calls, a.explain, [k for k in a.kinds.split(",") if k])
        except Exception as e:  # one model's failure never touches another's row
            rec = {"model": name, "batch": a.batch, "error": repr(e)[:400], "trace": traceback.format_exc()[-1200:]}
        print(json.dumps({k: v for k, v in rec.items() if k in ("model", "error", "statements", "cpu_us",
                                                                  "us_per_statement", "outside_call_us")}),
              flush=True)
        results.append(rec)
        with open(a.out + ".tmp", "w") as f:
            json.dump({"kind": "ftax-compiled-call-anatomy", "rows": results}, f, indent=1)
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
