#!/usr/bin/env python3
"""Python eager dispatch microbenchmark for `ftax bench` (frameworks `pytorch-eager`, under
torch.inference_mode(), and `pytorch-eager-no-grad`, under torch.no_grad()).

Times chains of N tiny ops of one dispatch class run from Python (each call synchronized),
and chains of N nn.Module calls each doing one op, so that `ftax calibrate` can separate the
cost per ATen call (slope), per nn.Module call, and per call (intercept). Writes a partial
measurement file (the "dispatch" rows of docs/calibration.md's format) to --out.
"""
import argparse
import json
import platform
import statistics
import sys
import os
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spread import spread  # noqa: E402



def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--modes", default="inference,no_grad",
                    help="grad modes to measure: inference (framework pytorch-eager), "
                         "no_grad (pytorch-eager-no-grad)")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_eager.py: torch is not importable by " + sys.executable, file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("bench_eager.py: no CUDA device", file=sys.stderr)
        return 3
    dev = torch.device("cuda", a.device)
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
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t0) * 1e6)
        return out

    rows = []
    modes = {"inference": ("pytorch-eager", torch.inference_mode),
             "no_grad": ("pytorch-eager-no-grad", torch.no_grad)}
    for mode in a.modes.split(","):
        if mode not in modes:
            print(f"bench_eager.py: unknown mode '{mode}' (inference, no_grad)", file=sys.stderr)
            return 2
        fw, ctx = modes[mode]
        with ctx():
            x0 = torch.randn(8, 8, device=dev)  # created under the mode, as a user's input is
            w = torch.randn(8, 8, device=dev)
            for cls, make in (("kernel", chain_kernel), ("view", chain_view), ("library", chain_library)):
                for n in ns:
                    rows.append({"framework": fw, "mode": mode, "class": cls, "n_ops": n, "modules": 0,
                                 "call_us": spread(timed(make(n))), "gpu_kernel_us": None,
                                 "gpu_span_us": None})
            for n in ns:
                m = Chain(n).to(dev).eval()
                rows.append({"framework": fw, "mode": mode, "class": "kernel", "n_ops": n, "modules": n + 1,
                             "call_us": spread(timed(lambda: m(x0))), "gpu_kernel_us": None,
                             "gpu_span_us": None})
    doc = {"schema_version": 1, "kind": "ftax-measurements",
           "python": {"version": platform.python_version(), "torch": torch.__version__},
           "dispatch": rows}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    med = statistics.median(r["call_us"]["median"] for r in rows)
    print(f"bench_eager.py: {len(rows)} rows, median call {med:.1f} us", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
