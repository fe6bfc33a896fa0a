#!/usr/bin/env python3
"""The CPU cost of one call of a grouped 1x1 convolution (SqueezeBERT's: 768 channels over 128
positions) against the same convolution ungrouped, in Python eager (under
torch.inference_mode()) and through a traced TorchScript module, with the kernels each call
launches (torch.profiler, in a separate pass after the timing). Chains of 200 calls on a tensor
so small that the host is the bound; the median of 7 chains, in microseconds per call. One JSON
line per case; run on the GPU host:
    python3 validation/scripts/grouped_conv_cpu_cost.py > grouped-cpu.jsonl"""
import json
import time

import torch
from torch.profiler import ProfilerActivity, profile


def per_call_us(fn, x, calls=200, chains=7):
    for _ in range(20):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(chains):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6 / calls)
    return sorted(times)[len(times) // 2]


def kernels_per_call(fn, x, calls=5):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(x)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA) / calls


def main():
    dev = torch.device("cuda")
    x = torch.randn(1, 768, 128, device=dev, dtype=torch.float16)
    cases = []
    with torch.inference_mode():
        for groups in (1, 2, 4, 8):
            conv = torch.nn.Conv1d(768, 768, 1, groups=groups).to(dev).half().eval()
            traced = torch.jit.trace(conv, x)
            for how, fn in (("pytorch-eager", conv), ("torchscript", traced)):
                cases.append({"framework": how, "groups": groups, "call_us": round(per_call_us(fn, x), 2), "fn": fn})
        # Kernel records last: nothing is timed once the profiler has attached.
        for c in cases:
            c["kernels_per_call"] = kernels_per_call(c.pop("fn"), x)
            print(json.dumps(c), flush=True)

if __name__ == "__main__":
    main()
