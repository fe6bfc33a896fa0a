#!/usr/bin/env python3
"""Kernels one call of a grouped convolution launches on this host (torch.profiler, CUDA
activity), by geometry, groups, dtype and batch: which grouped convolutions cuDNN runs group
by group (a layout transpose in, a kernel, a transpose out, per group) and which in one call.
Prints one JSON line per case; run on the GPU host:
    python3 validation/scripts/grouped_conv_kernels.py > grouped.jsonl"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def kernels_of(fn, calls=3):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    names = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            short = e.name.split("(")[0].split("<")[0][-60:]
            names[short] = names.get(short, 0) + 1
    return {k: v / calls for k, v in names.items()}


def main():
    dev = torch.device("cuda")
    cases = []
    for dt in (torch.float16, torch.float32):
        for b in (1, 8):
            for g in (1, 2, 4, 8, 32):  # SqueezeBERT-like: conv1d, 1x1, 768 channels, length 128
                cases.append(("conv1d_768_k1", dt, b, g, lambda g=g: torch.nn.Conv1d(768, 768, 1, groups=g),
                              (b, 768, 128)))
            cases.append(("conv2d_128_3x3_56", dt, b, 32, lambda: torch.nn.Conv2d(128, 128, 3, padding=1, groups=32),
                          (b, 128, 56, 56)))
            cases.append(("conv2d_64_1x1_56", dt, b, 4, lambda: torch.nn.Conv2d(64, 64, 1, groups=4),
                          (b, 64, 56, 56)))
    for name, dt, b, g, make, shape in cases:
        try:
            m = make().to(dev, dt).eval()
            x = torch.randn(*shape, device=dev, dtype=dt)
            with torch.inference_mode():
                k = kernels_of(lambda: m(x))
            print(json.dumps({"case": name, "dtype": str(dt).split(".")[-1], "batch": b, "groups": g,
                              "kernels": round(sum(k.values()), 2), "by_name": k}), flush=True)
        except Exception as e:  # one case failing costs only its line
            print(json.dumps({"case": name, "groups": g, "error": repr(e)[:200]}), flush=True)
    print(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "gpu": torch.cuda.get_device_name()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
