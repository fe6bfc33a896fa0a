#!/usr/bin/env python3
"""Python-side dispatch microbenchmark for `ftax bench`: Python eager (frameworks
`pytorch-eager`, under torch.inference_mode(), and `pytorch-eager-no-grad`, under
torch.no_grad()) and torch.compile (`torch-compile`, the default mode, and
`torch-compile-reduce-overhead`).

Times chains of N tiny ops of one dispatch class run from Python (each call synchronized),
and chains of N nn.Module calls each doing one op, so that `ftax calibrate` can separate the
cost per ATen call (slope), per nn.Module call, and per call (intercept). For torch.compile
the same chains are compiled (under torch.inference_mode()) and timed after their first
call; Inductor fuses the chain of adds into one kernel, so the "kernel" chain alternates
softmaxes over the two dimensions (each one Triton kernel that the next cannot fuse with) and
the "library" chain is N matrix products (N cuBLAS calls). A compiled chain's n_ops is the
number of kernels one call launches, read from a profiled pass after its timing (the
predictor counts a compiled model's kernels the same way), and its rows carry that pass's
GPU kernel time and span. Compile time is reported apart (compile_s), never in call_us. In the
default mode, chains of the library ops a compiled model calls one by one (a convolution, a
linear layer, a matrix product, attention: COMPILED_LIBRARY_OPS) are compiled and timed too,
rows with an "op" key, so that `ftax calibrate` can price each library call of a compiled
model by its op type (a convolution costs the wrapper far more than a matrix product). The
"param" chain adds tensors of model state read by each kernel (graph inputs), from which `ftax
calibrate` prices a graph input (input_us). In the default mode every chain also records
outside_us, the time of a call spent outside the code Inductor generated (Dynamo's guards,
gathering inputs, AOTAutograd's wrapper; outside_spread), and chains of small real layers
("layers" rows: convolution + batch norm + ReLU, layer norm + linear + GELU, with their module
counts) show what a model's modules add to it: `ftax calibrate` prices a module (module_us) from
the outside times. In reduce-overhead every chain, the chains of layers included, also records
before_replay_us (the CPU's time from the call's start to its graph's replay, the GPU idle) and
replay_gpu_us (the replay's time on the GPU, by CUDA events; replay_marks.py), from which `ftax
calibrate` prices the call before its replay, each module's guards and a graph node.

With --ops, chains of N calls of one op as models call it (a convolution, a linear layer, a
layer norm, a view, ...; op_layers lists them) are timed per framework, Python eager in either
mode and TorchScript, so that `ftax calibrate` can price each op type's dispatch on its own
(rows with an "op" key and issue_us, the host time until the chain returns; TorchScript's
rows are recorded, not fitted, and TorchScript runs no chains of the element-wise ops its
fuser joins, TS_FUSED_OPS). Each framework's per-op section ends with its op mix, layers of
every op called once each in a shuffled order (mix_row; TorchScript's as one traced module,
ts_mix_row), which `ftax calibrate` prices against the chains. The longest chain of every op gets its kernel records from one
profiled pass per framework after all timing (starting and stopping the profiler costs seconds).
Writes a partial measurement file (the "dispatch" rows of docs/calibration.md's format) to
--out, rewritten after every section (a grad mode's chains, a framework's per-op chains, a
torch.compile mode) with the sections done so far ("sections_done"; "complete" once all are),
so a run that is cut short keeps what it measured; --resume keeps the rows of the sections an
earlier run of the same file finished and measures only the others.

Every Python eager and per-op row carries cpu_gauge_us, the CPU gauge (cpu_gauge.py) read just
before and just after its timing, averaged: the host's CPU speed while the row was timed, by
which `ftax calibrate` brings every row to one speed.
"""
import argparse
import json
import platform
import random
import statistics
import sys
import os
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spread import spread  # noqa: E402
import cpu_gauge  # noqa: E402
import replay_marks  # noqa: E402

# Calls of a reduce-overhead chain with its replay marked (replay_marks.py), after its timing.
REPLAY_MARKS = 40



def kernel_records(torch, fn, calls=5):
    """Kernels per call, and the median over calls of their summed time and of their span
    (first start to last end), in microseconds, from one profiled pass of `calls` calls."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
            torch.cuda.synchronize()
    ks = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                if e.device_type == torch.autograd.DeviceType.CUDA)
    if not ks or len(ks) % calls:
        return (len(ks) / calls if ks else 0.0), None, None
    per = len(ks) // calls
    sums, spans = [], []
    for c in range(calls):
        chunk = ks[c * per:(c + 1) * per]
        sums.append(sum(e - s for s, e in chunk))
        spans.append(chunk[-1][1] - chunk[0][0])
    return float(per), statistics.median(sums), statistics.median(spans)


def compile_rows(torch, dev, fw, mode, quick, timed, gauged):
    """Rows of torch.compile'd chains in one mode (see the module's docstring), each with the
    CPU gauge read around its timing (gauged), as the eager rows have it, so that `ftax
    calibrate` brings them to the host's fast state with the rest."""
    ns = [1, 16, 64] if quick else [1, 8, 32, 64]
    x0 = torch.randn(8, 8, device=dev)
    w = torch.randn(8, 8, device=dev)

    def kernel_chain(n):
        def f(x):
            for i in range(n):
                x = torch.softmax(x, dim=i % 2)
            return x
        return f

    def view_chain(n):
        def f(x):
            for _ in range(n):
                x = x.transpose(0, 1)
            return x
        return f

    def library_chain(n):
        def f(x):
            for _ in range(n):
                x = torch.mm(x, w)
            return x
        return f

    def param_chain(n):
        # The kernel chain with a batch norm's four tensors read by each softmax (weight, bias,
        # running mean and variance, as a compiled CNN's kernels read them): n Triton kernels
        # and 4n tensors of model state, each an input the compiled graph takes, so that the
        # chain's slope beyond the kernel chain's is what four such inputs cost a call. (Host
        # run cf's bench, the first with this chain, read one parameter per kernel.)
        class Params(torch.nn.Module):
            def __init__(self):
                super().__init__()
                with torch.inference_mode(False):  # parameters and buffers as models make them
                    self.w = torch.nn.ParameterList(
                        [torch.nn.Parameter(torch.rand(8, device=dev) + 0.5, requires_grad=False) for _ in range(n)])
                    self.b = torch.nn.ParameterList(
                        [torch.nn.Parameter(torch.rand(8, device=dev), requires_grad=False) for _ in range(n)])
                    for i in range(n):
                        self.register_buffer(f"mean{i}", torch.rand(8, device=dev))
                        self.register_buffer(f"var{i}", torch.rand(8, device=dev) + 0.5)

            def forward(self, x):
                for i in range(n):
                    m, v = getattr(self, f"mean{i}"), getattr(self, f"var{i}")
                    x = torch.softmax((x - m) * torch.rsqrt(v + 1e-5) * self.w[i] + self.b[i], dim=i % 2)
                return x
        return Params().eval()

    def layers_chain(kind):
        # n small layers as models build them, each an nn.Sequential of three modules: a
        # convolution, batch norm and ReLU ("convbn"), or a layer norm, linear layer and GELU
        # ("lnlinear"). Their forwards read their modules' attributes as a model's do, so the
        # time of a call outside the generated code (Dynamo's guards on those modules, gathering
        # their tensors) is what a model's modules cost; outside_us measures it.
        nn = torch.nn

        def make(n):
            with torch.inference_mode(False):
                if kind == "convbn":
                    blocks = [nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                                            nn.ReLU(inplace=True)) for _ in range(n)]
                else:
                    blocks = [nn.Sequential(nn.LayerNorm(64), nn.Linear(64, 64), nn.GELU()) for _ in range(n)]
                return nn.Sequential(*blocks).to(dev).eval()
        return make

    # Tensors each chain's compiled graph takes besides its input (the library chain's matrix,
    # the parameter chain's four per kernel); a chain of layers counts its own from the
    # generated code.
    graph_inputs = {"kernel": lambda n: 0, "view": lambda n: 0, "library": lambda n: 1, "param": lambda n: 4 * n}
    rows = []
    chains = [("kernel", kernel_chain, ns), ("view", view_chain, ns), ("library", library_chain, ns),
              ("param", param_chain, ns)]
    chains += [("layers:" + kind, layers_chain(kind), [8, 32]) for kind in ("convbn", "lnlinear")]
    with torch.inference_mode():
        for cls, make, lengths in chains:
            if cls == "view" and mode != "default":
                continue  # a replayed graph holds no views
            if cls == "param" and mode != "default":
                continue  # measured where the wrapper runs every call: the default mode
            x_in = torch.randn(1, 8, 8, 8, device=dev) if cls == "layers:convbn" else (
                torch.randn(1, 16, 64, device=dev) if cls == "layers:lnlinear" else x0)
            for n in lengths:
                torch._dynamo.reset()
                try:
                    model = make(n)
                    if cls.startswith("layers:"):
                        model = model.half()
                        x_in = x_in.half()
                    cf = torch.compile(model, mode=None if mode == "default" else mode, dynamic=False)
                    t0 = time.perf_counter()
                    generated = compile_and_read_code(torch, cf, x_in) if mode == "default" else cf(x_in)
                    torch.cuda.synchronize()
                    compile_s = time.perf_counter() - t0
                    for _ in range(3):  # reduce-overhead records its graph on a later call
                        cf(x_in)
                    torch.cuda.synchronize()
                    call = spread(timed(lambda: cf(x_in)))
                    row = gauged({})  # the gauge of this timing, before the kernel pass
                    outside = None
                    if mode == "default":
                        try:
                            outside = outside_spread(torch, cf, x_in, generated)
                        except Exception as e:  # the row stands without it
                            print(f"bench_eager.py: {fw} {cls} x{n}: time outside the generated code not "
                                  f"measured: {repr(e)[:300]}", file=sys.stderr)
                    marks = None
                    if mode != "default":  # the CPU's work before the replay, and the replay's on the GPU
                        try:  # the row stands without them
                            marks = [replay_marks.timed_call(torch, lambda: cf(x_in)) for _ in range(REPLAY_MARKS)]
                            marks = [m for m in marks if m] or None
                        except Exception as e:
                            print(f"bench_eager.py: {fw} {cls} x{n}: replays not marked: {repr(e)[:300]}",
                                  file=sys.stderr)
                    kernels, kernel_us, span_us = kernel_records(torch, lambda: cf(x_in))
                except Exception as e:  # one chain that fails to compile costs only its row
                    print(f"bench_eager.py: {fw} {cls} x{n} failed: {repr(e)[:300]}", file=sys.stderr)
                    continue
                n_ops = n if cls == "view" else max(1, round(kernels))
                row.update({"framework": fw, "mode": "inference",
                            "class": "library" if cls.startswith("layers:") else ("kernel" if cls == "param" else cls),
                            "n_ops": n_ops, "source_ops": n, "kernels_per_call": kernels,
                            "compile_s": round(compile_s, 2), "call_us": call,
                            "gpu_kernel_us": kernel_us, "gpu_span_us": span_us})
                if cls.startswith("layers:") and not outside and not marks:
                    continue  # a chain of layers prices nothing but its CPU time around the generated code
                if cls.startswith("layers:"):
                    row.update({"layers": cls.split(":")[1], "modules": len(list(model.modules()))})
                    if outside:
                        row["graph_inputs"] = outside["graph_inputs"]
                else:
                    row.update({"modules": 0, "graph_inputs": graph_inputs[cls](n)})
                if outside:
                    row["outside_us"] = outside["spread"]
                if marks:
                    row["before_replay_us"] = spread([m[0] for m in marks])
                    row["replay_gpu_us"] = spread([m[1] for m in marks])
                rows.append(row)
                print(f"bench_eager.py: {fw} {cls} x{n}: {kernels:g} kernels, "
                      f"{call['median']:.1f} us per call"
                      + (f", {outside['spread']['median']:.1f} us outside the generated code" if outside else "")
                      + (f", {row['before_replay_us']['median']:.1f} us before the replay" if marks else "")
                      + f", compiled in {compile_s:.1f} s", file=sys.stderr)
    if mode == "default":
        rows += compiled_op_rows(torch, dev, fw, quick, timed, gauged)
    torch._dynamo.reset()
    return rows


def compile_and_read_code(torch, cf, x):
    """Runs the compiled module's first call (it compiles) and returns the one Python module
    Inductor generated for it, loaded again (None where the call made more than one graph).
    The FX graph cache is off for the compile, so that the code is generated, not read back."""
    import torch._inductor.config as icfg
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.utils import run_and_get_code
    try:
        with icfg.patch(fx_graph_cache=False):
            _, codes = run_and_get_code(cf, x)
        return PyCodeCache.load(codes[0]) if len(codes) == 1 else None
    except Exception as e:  # the chain is still timed as users call it, without outside_us
        print(f"bench_eager.py: the generated code could not be read back: {repr(e)[:300]}", file=sys.stderr)
        cf(x)
        return None


def outside_spread(torch, cf, x, generated, visits=6, calls=20):
    """The host time of a compiled module's call spent outside the code Inductor generated for
    it (Dynamo's guards, gathering the graph's inputs from the modules, AOTAutograd's wrapper):
    the module's call and the generated `call` run directly (on inputs of the same shapes and
    strides, from the generated module's get_args) are timed alternately, `calls` calls a
    visit, each from its start to its return with a synchronize after it outside the clock;
    a visit's difference of medians is one sample. Also returns how many graph inputs the
    generated call takes besides the model's input."""
    if generated is None:
        return None
    args = generated.get_args()

    def samples(fn):
        out = []
        for _ in range(calls):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t0) * 1e6)
            torch.cuda.synchronize()
        return statistics.median(out)
    for _ in range(3):
        generated.call(list(args))
    diffs = []
    for _ in range(visits):
        whole = samples(lambda: cf(x))
        inside = samples(lambda: generated.call(list(args)))
        diffs.append(whole - inside)
    return {"spread": spread(diffs), "graph_inputs": len(args) - 1}


def layer_chain(torch, layers):
    """An nn.Module that runs `layers` one after the other, each on the last one's output."""
    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(layers)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    return Chain()


# Library ops a compiled model still calls one by one (Inductor leaves them to cuDNN, cuBLAS
# and the attention kernels: "extern" calls in its wrapper), each costing the wrapper what
# ATen's path to that library costs: a convolution far more than a matrix product. The
# convolution in four geometries, as for eager code (op_layers): one geometry's chain alone
# cost 35.1 us a convolution on one H100 host and 63.0 on one H200 (host runs cb and cd), whose
# models' compiled convolutions came out priced low and high; Inductor runs a 1x1 layer with no
# weight copy and a 3x3 one with it, and the fit prices each launch beyond the fewest.
COMPILED_LIBRARY_OPS = ("conv", "conv:256c14", "conv:1x1", "conv:dw", "linear", "matmul",
                        "scaled_dot_product_attention")


def compiled_op_rows(torch, dev, fw, quick, timed, gauged):
    """Chains of n layers of one library op (op_layers' modules, with their parameters, as a
    compiled model holds them) compiled in the default mode and timed per call: issue_us until
    the compiled call returns, call_us until the GPU is done. A convolution's chain includes
    what Inductor adds around it (its channels-last copies of the weight), as a model's does.
    The longest chain of each op gets its kernel records, all from one profiled pass. The
    further convolution geometries are chains of 1 and 16 (their compiles are most of the
    section's time); each row carries the CPU gauge read around its timing."""
    ns_all = [1, 16] if quick else [1, 16, 48]
    layers = {key: (x_in, make) for key, _, x_in, make in op_layers(torch, dev, torch.float16)}
    rows, longest = [], []

    with torch.inference_mode():
        for key in COMPILED_LIBRARY_OPS:
            x_in, make = layers[key]
            ns = [1, 16] if ":" in key else ns_all
            for n in ns:
                torch._dynamo.reset()
                try:
                    cf = torch.compile(layer_chain(torch, [make() for _ in range(n)]).eval(), dynamic=False)
                    x0 = x_in.clone()
                    t0 = time.perf_counter()
                    cf(x0)  # compiles
                    torch.cuda.synchronize()
                    compile_s = time.perf_counter() - t0
                    issue = []

                    def run(cf=cf, x0=x0, issue=issue):
                        t = time.perf_counter()
                        out = cf(x0)
                        issue.append((time.perf_counter() - t) * 1e6)
                        return out
                    call = timed(run)
                    issue[:] = issue[-len(call):]  # the timed calls' issue times, not the warm-up's
                except Exception as e:  # one chain that fails to compile costs only its rows
                    print(f"bench_eager.py: {fw} op {key} x{n} failed: {repr(e)[:300]}", file=sys.stderr)
                    continue
                row = gauged({"framework": fw, "mode": "inference", "class": "library", "op": key.split(":")[0],
                              "n_ops": n, "modules": 0, "call_us": spread(call), "issue_us": spread(issue),
                              "compile_s": round(compile_s, 2), "kernels_per_call": None,
                              "gpu_kernel_us": None, "gpu_span_us": None})
                if ":" in key:
                    row["geometry"] = key.split(":", 1)[1]
                rows.append(row)
                if n == ns[-1]:
                    longest.append((key, lambda cf=cf, x0=x0: cf(x0), row))
                print(f"bench_eager.py: {fw} op {key} x{n}: {statistics.median(call):.1f} us per call, "
                      f"compiled in {compile_s:.1f} s", file=sys.stderr, flush=True)
        try:
            recs = kernel_records_by_name(torch, [(key, run) for key, run, _ in longest])
            for key, _, row in longest:
                row["kernels_per_call"], row["gpu_kernel_us"], row["gpu_span_us"] = recs.get(key, (None, None, None))
        except Exception as e:  # rows keep no kernel records; calibrate then fits no op_kernels
            print(f"bench_eager.py: {fw}: profiled pass of the compiled ops failed: {repr(e)[:300]}",
                  file=sys.stderr)
    return rows


# Ops as models call them: (key, dispatch class, input, layer). A layer is an nn.Module made
# the way models make theirs (parameters and buffers created outside any grad mode, in half
# precision on the GPU, a model's size: a ResNet stage's 64-channel 56x56 convolution, a
# 256-wide linear layer), whose forward runs the op once and always reads its input, so that
# TorchScript keeps every op. The keys are what `ftax calibrate` stores per op
# (frameworks.<fw>.op_us) and what the lowering maps a graph's op types to
# (DispatchCostKey; the cost_key of the rows in src/predictor/lowering_table.json).
def op_layers(torch, dev, dt):
    F = torch.nn.functional
    nn = torch.nn

    def t(*s):
        return torch.randn(*s, device=dev, dtype=dt)

    class Op(nn.Module):
        def __init__(self, fn, **buffers):
            super().__init__()
            self.fn = fn
            for k, v in buffers.items():
                self.register_buffer(k, v)

        def forward(self, x):
            return self.fn(self, x)

    def half(m):
        return m.to(device=dev, dtype=dt).eval()

    class SelfAttention(nn.Module):
        """nn.MultiheadAttention as torchvision's ViT calls it: self-attention, batch first,
        no weights returned; in eval mode under inference_mode or no_grad it takes the fast
        path (one aten::_native_multi_head_attention), after the checks its Python forward
        makes. Its forward is called directly, as the chain calls every layer's."""
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(256, 4, batch_first=True)

        def forward(self, x):
            return self.mha.forward(x, x, x, need_weights=False)[0]

    img, seq, head = t(1, 64, 56, 56), t(1, 16, 256), t(1, 4, 16, 64)
    mask = torch.rand(1, 16, 256, device=dev) > 0.5
    idx = torch.randint(0, 64, (64,), device=dev)
    # Convolutions of three more geometries (a late ResNet stage, a 1x1 projection, a depthwise
    # layer): cuDNN picks an engine per shape, and what its host side costs differs between
    # engines, so the per-op cost of "conv" is fitted over all four chains ("conv:GEOMETRY" rows
    # are "op": "conv" with a "geometry"). On one H200 host the 64-channel chain alone cost
    # 37.9 us per op where another host's cost 27.3, while linear and batch-norm chains agreed
    # within 3% and the first host ran ResNet-18 and MobileNetV2 12-17% faster.
    # "conv:g4" is SqueezeBERT's layer (768 channels in 4 groups, 1x1 over 128 positions, with
    # its bias): the library runs it group by group, 13 kernels a call, and each group is a
    # call of its own to the CPU (on one H200 host 85.3 us a call in Python eager, against
    # 27.8 for one group; on one H100 97.0 against 46.0). `ftax calibrate` leaves it out of
    # the other geometries' fit (one cost per further launch cannot describe it) and notes its
    # cost per call beside what that fit prices it at.
    return [
        ("conv", "library", img, lambda: half(nn.Conv2d(64, 64, 3, padding=1, bias=False))),
        ("conv:256c14", "library", t(1, 256, 14, 14), lambda: half(nn.Conv2d(256, 256, 3, padding=1, bias=False))),
        ("conv:1x1", "library", t(1, 128, 28, 28), lambda: half(nn.Conv2d(128, 128, 1, bias=False))),
        ("conv:dw", "library", t(1, 96, 56, 56), lambda: half(nn.Conv2d(96, 96, 3, padding=1, groups=96, bias=False))),
        ("conv:g4", "library", t(1, 768, 128), lambda: half(nn.Conv1d(768, 768, 1, groups=4))),
        ("linear", "library", seq, lambda: half(nn.Linear(256, 256))),
        ("matmul", "library", head, lambda: Op(lambda m, x: torch.matmul(x, m.k), k=t(1, 4, 64, 64))),
        ("scaled_dot_product_attention", "library", head,
         lambda: Op(lambda m, x: F.scaled_dot_product_attention(x, x, x))),
        ("multi_head_attention", "library", seq, lambda: half(SelfAttention())),
        ("batch_norm", "kernel", img, lambda: half(nn.BatchNorm2d(64))),
        # A batch norm as CNNs run it, before an in-place ReLU: TorchScript's fuser cannot fuse
        # it with its neighbours then (a chain of batch norms alone it fuses away). "a+b": the
        # cost of a is this chain's less b's (calibrate, FitOpCosts).
        ("batch_norm+relu", "kernel", img,
         lambda: half(nn.Sequential(nn.BatchNorm2d(64), nn.ReLU(inplace=True)))),
        ("layer_norm", "kernel", seq, lambda: half(nn.LayerNorm(256))),
        ("softmax", "kernel", seq, lambda: half(nn.Softmax(dim=-1))),
        ("relu", "kernel", img, lambda: half(nn.ReLU(inplace=True))),
        ("gelu", "kernel", seq, lambda: half(nn.GELU())),
        ("silu", "kernel", img, lambda: half(nn.SiLU())),
        ("sigmoid", "kernel", img, lambda: half(nn.Sigmoid())),
        ("tanh", "kernel", seq, lambda: half(nn.Tanh())),
        ("hardswish", "kernel", img, lambda: half(nn.Hardswish())),
        ("add", "kernel", seq, lambda: Op(lambda m, x: x + m.y, y=t(1, 16, 256))),
        ("mul", "kernel", seq, lambda: Op(lambda m, x: x * m.y, y=t(1, 16, 256))),
        ("div", "kernel", seq, lambda: Op(lambda m, x: x / 8.0)),
        ("masked_fill", "kernel", seq, lambda: Op(lambda m, x: x.masked_fill(m.mask, 0.0), mask=mask)),
        ("to", "kernel", seq, lambda: Op(lambda m, x: x.float() if x.dtype != torch.float32 else x.to(dt))),
        ("embedding", "kernel", t(64, 256), lambda: Op(lambda m, x: F.embedding(m.idx, x), idx=idx)),
        ("max_pool2d", "kernel", img, lambda: half(nn.MaxPool2d(3, 1, 1))),
        ("adaptive_avg_pool2d", "kernel", img, lambda: half(nn.AdaptiveAvgPool2d(1))),
        ("mean", "kernel", seq, lambda: Op(lambda m, x: x.mean(-1, keepdim=True))),
        ("view", "view", seq, lambda: Op(lambda m, x: x.view(1, 16, 256))),
        ("reshape", "view", seq, lambda: Op(lambda m, x: x.reshape(1, 16, 256))),
        ("permute", "view", head, lambda: Op(lambda m, x: x.permute(0, 2, 1, 3))),
        ("transpose", "view", head, lambda: Op(lambda m, x: x.transpose(1, 2))),
        ("expand", "view", seq, lambda: Op(lambda m, x: x.expand(1, 16, 256))),
        ("slice", "view", t(1, 1024, 8), lambda: Op(lambda m, x: x[:, 1:])),
        ("flatten", "view", seq, lambda: Op(lambda m, x: torch.flatten(x, 1))),
        ("chunk", "view", seq, lambda: Op(lambda m, x: x.chunk(2, -1)[0])),
        ("dropout", "view", seq, lambda: half(nn.Dropout(0.1))),
    ]


# Chains added after the op mix was first measured, left out of it (op_rows).
MIX_LEFT_OUT = {"conv:g4"}


# Element-wise ops that TorchScript's fuser (NNC) joins with their neighbours: a chain of them
# is one fused kernel, not a cost per op, and NNC inlines each into the next, so a chain of 64
# GELUs (x used twice per op) never finishes compiling. Their TorchScript dispatches stay
# priced by class.
TS_FUSED_OPS = {"gelu", "silu", "sigmoid", "tanh", "hardswish", "add", "mul", "div", "to",
                "masked_fill"}


def kernel_records_by_name(torch, runs, calls=5):
    """Kernel records of several functions from one profiled pass (starting and stopping the
    profiler costs seconds, too much to pay per op): {name: (kernels per call, median
    summed kernel time, median span)} in microseconds. Each call runs inside its own
    record_function range and is synchronized before the range closes, so its kernels start
    inside that range (the profiler puts GPU and host times on one clock)."""
    from torch.profiler import ProfilerActivity, profile, record_function
    for _, fn in runs:
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for name, fn in runs:
            for c in range(calls):
                with record_function(f"ftax_op:{name}:{c}"):
                    fn()
                    torch.cuda.synchronize()
    ranges, kernels = [], []
    for e in prof.events():
        if e.name.startswith("ftax_op:"):
            if e.device_type == torch.autograd.DeviceType.CPU:
                name, c = e.name[len("ftax_op:"):].rsplit(":", 1)
                ranges.append((e.time_range.start, e.time_range.end, name, int(c)))
        elif e.device_type == torch.autograd.DeviceType.CUDA:
            kernels.append((e.time_range.start, e.time_range.end))
    return kernels_per_range(ranges, kernels)


def kernels_per_range(ranges, kernels):
    """Attributes each GPU record (start, end) to the call range (start, end, name, call) it
    starts in; returns {name: (records per call, median summed time, median span)}. A name
    whose calls saw different counts gets the median count and no times."""
    ranges, kernels = sorted(ranges), sorted(kernels)
    per_call = {}
    i = 0
    for start, end, name, _ in ranges:
        while i < len(kernels) and kernels[i][0] < start:
            i += 1
        chunk = []
        while i < len(kernels) and kernels[i][0] <= end:
            chunk.append(kernels[i])
            i += 1
        per_call.setdefault(name, []).append(chunk)
    out = {}
    for name, chunks in per_call.items():
        counts = {len(ch) for ch in chunks}
        if len(counts) != 1 or not chunks[0]:
            out[name] = (float(statistics.median(len(ch) for ch in chunks)), None, None)
            continue
        out[name] = (float(counts.pop()), statistics.median(sum(e - s for s, e in ch) for ch in chunks),
                     statistics.median(ch[-1][1] - ch[0][0] for ch in chunks))
    return out


def issue_and_call(torch, run, reps, warmup):
    """Times `run` reps times after `warmup` calls: the host time until it returned (issue_us:
    the CPU's cost) and until the GPU was done (call_us), in microseconds, and the CPU gauge
    (cpu_gauge.py) read just before and just after, averaged."""
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    issue, call = [], []
    gauge0 = cpu_gauge.gauge_us(torch)
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        issue.append((t1 - t0) * 1e6)
        call.append((time.perf_counter() - t0) * 1e6)
    return issue, call, (gauge0 + cpu_gauge.gauge_us(torch)) / 2


def op_rows(torch, dev, fw, mode, quick, reps):
    """Chains of n layers of one op (op_layers), each timed by the host clock until the chain
    returns (issue_us: the CPU's cost, whatever the GPU does) and until the GPU is done
    (call_us). Python eager calls each layer's forward itself (a model's nn.Module __call__ is
    priced apart, by module_us); TorchScript runs a trace of the chain (its layers' parameters
    held as a traced model holds them) with the TensorExpr fuser on, as traced models run
    (rows say "fuser": true). The longest chain of each op also gets its kernel records, all
    ops from one profiled pass after the timing."""
    ns = [1, 16, 48] if quick else [1, 8, 32, 64]
    ctx = torch.inference_mode if mode == "inference" else torch.no_grad
    rows, longest = [], []
    layers = op_layers(torch, dev, torch.float16)
    t_start = time.perf_counter()

    for k, (key, cls, x_in, make) in enumerate(layers):
        if fw == "torchscript" and key in TS_FUSED_OPS:
            continue  # the fuser makes a chain of them one kernel: priced by their class
        for n in ns:
            try:
                chain = layer_chain(torch, [make() for _ in range(n)])  # weights made outside the grad mode
                with ctx():
                    x0 = x_in.clone()  # the input, made under the mode, as a user's is
                    if fw == "torchscript":
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            traced = torch.jit.trace(chain, (x0.clone(),), check_trace=False)
                        run = lambda traced=traced, x0=x0, key=key: traced(x0.clone() if key == "relu" else x0)
                    else:
                        fwds = [layer.forward for layer in chain.layers]

                        def run(fwds=fwds, x0=x0, key=key):
                            x = x0.clone() if key == "relu" else x0
                            for f in fwds:
                                x = f(x)
                            return x
                    issue, call, gauge = issue_and_call(torch, run, reps, warmup=5)
            except Exception as e:  # one op that fails costs only its rows
                print(f"bench_eager.py: {fw} op {key} x{n} failed: {repr(e)[:300]}", file=sys.stderr)
                continue
            row = {"framework": fw, "mode": mode, "class": cls, "op": key.split(":")[0], "n_ops": n,
                   "modules": 0, "call_us": spread(call), "issue_us": spread(issue),
                   "kernels_per_call": None, "gpu_kernel_us": None, "gpu_span_us": None,
                   "cpu_gauge_us": round(gauge, 3)}
            if ":" in key:
                row["geometry"] = key.split(":", 1)[1]
            if fw == "torchscript":
                enabled = getattr(torch._C, "_jit_texpr_fuser_enabled", None)
                row["fuser"] = bool(enabled()) if enabled else None
            rows.append(row)
            if n == ns[-1]:
                longest.append((key, run, row))
        print(f"bench_eager.py: {fw}: op {k + 1} of {len(layers)} ({key}), "
              f"{time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    # The op mix keeps the ops it was first measured with, so that its ratio stays comparable
    # between hosts (calibrate compares it with other hosts' mixes).
    mixed = [layer for layer in layers if layer[0] not in MIX_LEFT_OUT]
    mix = ts_mix_row(torch, dev, mixed, reps) if fw == "torchscript" else mix_row(torch, fw, mode, ctx, mixed, rows, reps)
    if mix:
        rows.append(mix)
    # Kernel records of the longest chains, one profiled pass for them all (under the mode).
    try:
        with ctx():
            recs = kernel_records_by_name(torch, [(key, run) for key, run, _ in longest])
        for key, _, row in longest:
            row["kernels_per_call"], row["gpu_kernel_us"], row["gpu_span_us"] = recs.get(key, (None, None, None))
    except Exception as e:  # rows keep no kernel records; calibrate then fits no op_kernels
        print(f"bench_eager.py: {fw}: profiled pass failed: {repr(e)[:300]}", file=sys.stderr)
    return rows


def mix_row(torch, fw, mode, ctx, layers, rows, reps, copies=3, seed=7):
    """The op mix of a model against the chains of one op: `copies` layers of every op of
    op_layers, each called once on its own input, in one fixed shuffled order (a model runs
    hundreds of different ops and layers; a chain repeats one op on a small working set), timed
    per pass until it returns (issue_us). mix_ratio is the pass's cost over the sum of what the
    same calls cost in their own chains (each op's slope between its shortest and longest
    chain's issue_us), both brought to one CPU speed by their gauges (cpu_gauge.py): how much
    more a model's ops cost the CPU on this host than the chains say. `ftax calibrate` scales
    the framework's per-op costs by it."""
    slope = {}
    for key, _, _, _ in layers:
        op, geo = (key.split(":", 1) + [None])[:2]
        mine = [r for r in rows if r.get("op") == op and r.get("geometry") == geo and r["framework"] == fw
                and r.get("issue_us") and r.get("cpu_gauge_us")]
        if len(mine) < 2:
            continue
        lo, hi = min(mine, key=lambda r: r["n_ops"]), max(mine, key=lambda r: r["n_ops"])
        if hi["n_ops"] == lo["n_ops"]:
            continue
        # per call, in gauges (cost / gauge): comparable across CPU speeds
        slope[key] = (hi["issue_us"]["median"] / hi["cpu_gauge_us"] - lo["issue_us"]["median"] / lo["cpu_gauge_us"]) \
            / (hi["n_ops"] - lo["n_ops"])
    calls = []
    try:
        for key, _, x_in, make in layers:
            if key not in slope:
                continue
            for _ in range(copies):
                layer = make()
                with ctx():
                    x = x_in.clone()
                calls.append((key, layer.forward, x))
        random.Random(seed).shuffle(calls)
        with ctx():
            def run():
                for _, f, x in calls:
                    f(x)
            issue, call, gauge = issue_and_call(torch, run, reps, warmup=3)
    except Exception as e:  # the mix is one row; its failure costs only that row
        print(f"bench_eager.py: {fw}: op mix failed: {repr(e)[:300]}", file=sys.stderr)
        return None
    if not calls:
        return None
    chains = sum(slope[k] for k, _, _ in calls) * gauge  # the calls' chain costs at the mix's speed
    counts = {}
    for k, _, _ in calls:
        counts[k] = counts.get(k, 0) + 1
    ratio = statistics.median(issue) / chains if chains > 0 else None
    print(f"bench_eager.py: {fw}: op mix of {len(calls)} calls: {statistics.median(issue):.0f} us per pass, "
          f"{chains:.0f} us by the chains, x{ratio:.2f}", file=sys.stderr)
    return {"framework": fw, "mode": mode, "class": "library", "n_ops": len(calls), "modules": 0,
            "mix_of": counts, "mix_ratio": round(ratio, 4) if ratio else None,
            "chains_us": round(chains, 2), "call_us": spread(call), "issue_us": spread(issue),
            "cpu_gauge_us": round(gauge, 3), "kernels_per_call": None, "gpu_kernel_us": None,
            "gpu_span_us": None}


def add_chain_slope(torch, dev, reps, ns=(1, 64)):
    """What one op of the C++ bench's TorchScript kernel chain costs now (`x = x + 1.0`, n
    times, scripted, the TensorExpr fuser off as those chains ran): the slope of issue_us
    between the shortest and the longest chain, in microseconds, with the gauge read around it."""
    fuser = getattr(torch._C, "_jit_texpr_fuser_enabled", lambda: False)()
    torch._C._jit_set_texpr_fuser_enabled(False)
    try:
        x = torch.randn(8, 8, device=dev)
        med, gauges = {}, []
        for n in ns:
            cu = torch.jit.CompilationUnit("def chain(x):\n" + "    x = x + 1.0\n" * n + "    return x\n")
            issue, _, gauge = issue_and_call(torch, lambda cu=cu: cu.chain(x), reps, warmup=5)
            med[n], gauges = statistics.median(issue), gauges + [gauge]
        return (med[ns[-1]] - med[ns[0]]) / (ns[-1] - ns[0]), statistics.mean(gauges)
    finally:
        torch._C._jit_set_texpr_fuser_enabled(fuser)


def ts_mix_row(torch, dev, layers, reps, copies=3, seed=7):
    """TorchScript's op mix: `copies` layers of every op of op_layers in one fixed shuffled
    order, each on its own input held as a buffer, traced into one module and run as traced
    models run (no_grad, the TensorExpr fuser as the host has it), timed per pass until it
    returns (issue_us). Its ratio needs TorchScript's fitted costs, so the row carries what
    `ftax calibrate` needs to price the same pass as the predictor would: the calls per op key
    (mix_of), the dispatch class that prices a key without a per-op cost (mix_class_of), and
    the GPU kernels one pass launches (mix_kernels, from one profiled pass after the timing).
    add_us is the C++ bench's kernel chain per op timed just before, at the pass's CPU speed."""
    nn = torch.nn
    try:
        calls = []
        with torch.no_grad():
            for key, cls, x_in, make in layers:
                for _ in range(copies):
                    calls.append((key, cls, make(), x_in.clone()))
        random.Random(seed).shuffle(calls)

        class Mix(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([c[2] for c in calls])
                for i, c in enumerate(calls):
                    self.register_buffer(f"x{i}", c[3])

            def forward(self, x):
                return tuple(layer(getattr(self, f"x{i}")) for i, layer in enumerate(self.layers)) + (x,)

        x = torch.zeros(1, device=dev)
        add_us, add_gauge = add_chain_slope(torch, dev, reps)
        with torch.no_grad():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced = torch.jit.trace(Mix().eval(), (x,), check_trace=False)
            issue, call, gauge = issue_and_call(torch, lambda: traced(x), reps, warmup=5)
            kernels = kernel_records_by_name(torch, [("mix", lambda: traced(x))]).get("mix", (None,))[0]
    except Exception as e:  # the mix is one row; its failure costs only that row
        print(f"bench_eager.py: torchscript: op mix failed: {repr(e)[:300]}", file=sys.stderr)
        return None
    counts, classes = {}, {}
    for key, cls, _, _ in calls:
        counts[key] = counts.get(key, 0) + 1
        classes[key] = cls
    print(f"bench_eager.py: torchscript: op mix of {len(calls)} calls: {statistics.median(issue):.0f} us per pass, "
          f"{kernels} kernels; the add chain {add_us:.2f} us per op", file=sys.stderr)
    return {"framework": "torchscript", "mode": "no_grad", "class": "library", "n_ops": len(calls), "modules": 0,
            "mix_of": counts, "mix_class_of": classes, "mix_kernels": kernels, "mix_ratio": None,
            "add_us": round(add_us, 3), "add_cpu_gauge_us": round(add_gauge, 3),
            "call_us": spread(call), "issue_us": spread(issue), "cpu_gauge_us": round(gauge, 3),
            "kernels_per_call": None, "gpu_kernel_us": None, "gpu_span_us": None}


def save(path, python, rows, done, complete):
    """Writes the rows measured so far to `path`, atomically (a reader never sees half a file)."""
    doc = {"schema_version": 1, "kind": "ftax-measurements", "python": python,
           "sections_done": done, "complete": complete, "dispatch": rows}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def resumed_sections(path):
    """The rows and finished sections of an earlier run's file at `path` ([], [] if there is
    none or it cannot be read): only rows of finished sections are kept."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return [], []
    done = [d for d in doc.get("sections_done", []) if isinstance(d, str)]
    return [r for r in doc.get("dispatch", []) if section_of(r) in done], done


def section_of(row):
    """The section a row was measured in: modes:MODE, ops:FRAMEWORK or compile:MODE."""
    fw = row.get("framework", "")
    if fw.startswith("torch-compile"):
        return "compile:" + ("reduce-overhead" if fw.endswith("reduce-overhead") else "default")
    if "op" in row or "mix_of" in row:  # an op mix ends its framework's per-op section
        return "ops:" + fw
    if fw.startswith("pytorch-eager"):
        return "modes:" + (row.get("mode") or ("inference" if fw == "pytorch-eager" else "no_grad"))
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--modes", default="inference,no_grad",
                    help="grad modes to measure: inference (framework pytorch-eager), "
                         "no_grad (pytorch-eager-no-grad); empty for none")
    ap.add_argument("--ops", default="",
                    help="frameworks whose per-op chains to measure (op_layers): pytorch-eager, "
                         "pytorch-eager-no-grad, torchscript; empty for none")
    ap.add_argument("--compile", default="",
                    help="torch.compile modes to measure: default (framework torch-compile), "
                         "reduce-overhead (torch-compile-reduce-overhead); empty for none")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows of the sections an earlier run finished in --out and "
                         "measure only the others")
    a = ap.parse_args()
    compile_fw = {"default": "torch-compile", "reduce-overhead": "torch-compile-reduce-overhead"}
    for mode in filter(None, a.compile.split(",")):
        if mode not in compile_fw:
            print(f"bench_eager.py: unknown torch.compile mode '{mode}' (default, reduce-overhead)",
                  file=sys.stderr)
            return 2
    try:
        import torch
    except ImportError:
        print("bench_eager.py: torch is not importable by " + sys.executable, file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("bench_eager.py: no CUDA device", file=sys.stderr)
        return 3
    dev = torch.device("cuda", a.device)
    replay_marks.install(torch)  # reduce-overhead's chains mark their replays
    ns = [1, 64, 256] if a.quick else [1, 16, 64, 128, 256, 512]
    reps = 30 if a.quick else 100
    x0 = torch.randn(8, 8, device=dev)
    w = torch.randn(8, 8, device=dev)

    def chain_kernel(n):
        def f():
            x = x0
            for _ in range(n):
                x = x + 1.0
            return x
        return f

    def chain_view(n):
        def f():
            x = x0
            for _ in range(n):
                x = x.transpose(0, 1)
            return x
        return f

    def chain_library(n):
        def f():
            x = x0
            for _ in range(n):
                x = torch.mm(x, w)
            return x
        return f

    class AddOne(torch.nn.Module):
        def forward(self, x):
            return x + 1.0

    class Chain(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.layers = torch.nn.ModuleList([AddOne() for _ in range(n)])

        def forward(self, x):
            for m in self.layers:
                x = m(x)
            return x

    def timed(fn):
        for _ in range(10):
            fn()
            torch.cuda.synchronize()
        gauges.append(cpu_gauge.gauge_us(torch))
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t0) * 1e6)
        gauges[-1] = (gauges[-1] + cpu_gauge.gauge_us(torch)) / 2
        return out

    def gauged(row):
        """The row with the CPU gauge read around its timing (the last timed() call)."""
        row["cpu_gauge_us"] = round(gauges[-1], 3)
        return row

    rows, done, gauges = [], [], []
    if a.resume:
        rows, done = resumed_sections(a.out)
        if done:
            print(f"bench_eager.py: resuming {a.out}: kept {len(rows)} rows of {', '.join(done)}",
                  file=sys.stderr)
    python = {"version": platform.python_version(), "torch": torch.__version__}

    def section_done(name):
        done.append(name)
        save(a.out, python, rows, done, complete=False)

    modes = {"inference": ("pytorch-eager", torch.inference_mode),
             "no_grad": ("pytorch-eager-no-grad", torch.no_grad)}
    for mode in filter(None, a.modes.split(",")):
        if mode not in modes:
            print(f"bench_eager.py: unknown mode '{mode}' (inference, no_grad)", file=sys.stderr)
            return 2
        fw, ctx = modes[mode]
        if "modes:" + mode in done:
            continue
        with ctx():
            x0 = torch.randn(8, 8, device=dev)  # created under the mode, as a user's input is
            w = torch.randn(8, 8, device=dev)
            for cls, make in (("kernel", chain_kernel), ("view", chain_view), ("library", chain_library)):
                for n in ns:
                    rows.append(gauged({"framework": fw, "mode": mode, "class": cls, "n_ops": n, "modules": 0,
                                        "call_us": spread(timed(make(n))), "gpu_kernel_us": None,
                                        "gpu_span_us": None}))
            for n in ns:
                m = Chain(n).to(dev).eval()
                rows.append(gauged({"framework": fw, "mode": mode, "class": "kernel", "n_ops": n, "modules": n + 1,
                                    "call_us": spread(timed(lambda: m(x0))), "gpu_kernel_us": None,
                                    "gpu_span_us": None}))
        section_done("modes:" + mode)
    op_modes = {"pytorch-eager": "inference", "pytorch-eager-no-grad": "no_grad",
                "torchscript": "no_grad"}
    for fw in filter(None, a.ops.split(",")):
        if fw not in op_modes:
            print(f"bench_eager.py: unknown --ops framework '{fw}' ({', '.join(op_modes)})",
                  file=sys.stderr)
            return 2
        if "ops:" + fw in done:
            continue
        rows += op_rows(torch, dev, fw, op_modes[fw], a.quick, reps)
        section_done("ops:" + fw)
        print(f"bench_eager.py: {fw}: per-op chains done", file=sys.stderr)
    for mode in filter(None, a.compile.split(",")):
        if "compile:" + mode in done:
            continue
        rows += compile_rows(torch, dev, compile_fw[mode], mode, a.quick, timed, gauged)
        section_done("compile:" + mode)
    if not rows:
        print("bench_eager.py: nothing to measure (--modes, --ops and --compile all empty)", file=sys.stderr)
        return 2
    save(a.out, python, rows, done, complete=True)
    med = statistics.median(r["call_us"]["median"] for r in rows)
    print(f"bench_eager.py: {len(rows)} rows, median call {med:.1f} us", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
