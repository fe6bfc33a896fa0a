#!/usr/bin/env python3
"""How much Python eager latency of one model moves from one Python process to the next on a
CUDA host: a plain timing, nothing of ftax in it, to check ftax's eager measurements against.

    python3 validation/scripts/eager_process_spread.py resnet50,bert-base      # 3 processes per model, in turn
    python3 validation/scripts/eager_process_spread.py --child resnet50        # one process (e.g. under taskset)
    python3 validation/scripts/eager_process_spread.py resnet101 --cores 0-15 --free 4
        # one process pinned to each CPU in turn, then 4 left free to run anywhere

Each process builds the zoo model (scripts/model_zoo.py, random weights, fp16, batch 1, sequence
128), runs 20 warm-up calls and then 150 timed calls under torch.inference_mode(), each followed
by torch.cuda.synchronize(), and prints one JSON line: median, p10 and p90 in ms, the CPU it
last ran on and how many CPUs it may run on, and the host time per op of a chain of 64 small
adds (as the bench's chains time it), to tell a slow process from a slow model. No profiler is
attached."""
import json
import os
import subprocess
import sys
import time


def child(name):
    import torch
    # model_zoo.py (the zoo's models) stays in the top-level scripts/, beside validate_eager.py.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
    import model_zoo
    torch.manual_seed(0)
    m = model_zoo.build(name).to("cuda").half()
    inputs = model_zoo.cast_inputs(model_zoo.inputs(name, 1, 128, "cuda"), torch.float16)
    with torch.inference_mode():
        for _ in range(20):
            m(*inputs)
        torch.cuda.synchronize()
        ts = []
        for _ in range(150):
            t0 = time.perf_counter()
            m(*inputs)
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        x = torch.zeros(8, 8, device="cuda")
        chain = []
        for _ in range(60):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(64):
                x = x + 1.0
            chain.append((time.perf_counter() - t0) * 1e6 / 64)
        chain.sort()
    ts.sort()
    cpu = open("/proc/self/stat").read().split()[38]
    print(json.dumps({"model": name, "median_ms": ts[len(ts) // 2] * 1e3, "p10": ts[len(ts) // 10] * 1e3,
                      "p90": ts[9 * len(ts) // 10] * 1e3, "cpu": int(cpu),
                      "affinity": len(os.sched_getaffinity(0)), "add_chain_us_per_op": chain[len(chain) // 2]}),
          flush=True)


def cpu_list(text):
    """'0-3,8' -> [0, 1, 2, 3, 8]"""
    out = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        sys.exit()
    import argparse
    ap = argparse.ArgumentParser(description="Python eager latency from one process to the next")
    ap.add_argument("models", help="comma list of zoo models")
    ap.add_argument("--cores", default="", help="pin one process to each of these CPUs in turn (e.g. 0-15)")
    ap.add_argument("--free", type=int, default=3, help="processes left free to run on any CPU (default 3)")
    a = ap.parse_args()
    for name in a.models.split(","):
        for core in cpu_list(a.cores):
            subprocess.run([sys.executable, __file__, "--child", name],
                           preexec_fn=lambda c=core: os.sched_setaffinity(0, {c}))
        for _ in range(a.free):
            subprocess.run([sys.executable, __file__, "--child", name])
