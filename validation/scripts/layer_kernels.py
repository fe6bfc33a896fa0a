#!/usr/bin/env python3
"""The GPU kernels each layer of a zoo model launches on this host, with their CUPTI durations:
which kernels a convolution, batch norm or add of a given geometry runs, and how long each
took. For finding which layers a prediction misprices (the per-model kernel records of
`validate_eager.py` sum kernels by name over the whole model).

One profiled call under torch.inference_mode() (after warm-up calls), CUDA activity with the
ATen op and its input shapes; each kernel is attributed to the innermost ATen op that launched
it. Prints one JSON line per model and batch:
    {"model", "batch", "precision", "kernel_us", "ops": [{"op", "shapes", "kernels": [[name, us], ...]}, ...]}
Run on the GPU host from the checkout:
    python3 validation/scripts/layer_kernels.py inception_v3,regnet_x_1_6gf --batches 1,8 > layers.jsonl"""
import argparse
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import model_zoo  # noqa: E402

# The ops a layer is made of; kernels of other ops (views, copies ATen adds) go to the innermost
# of these that encloses them, else to the op that launched them.
LAYER_OPS = {"aten::convolution", "aten::batch_norm", "aten::add", "aten::add_", "aten::relu", "aten::relu_",
             "aten::linear", "aten::addmm", "aten::mm", "aten::bmm", "aten::matmul", "aten::layer_norm",
             "aten::softmax", "aten::gelu", "aten::max_pool2d", "aten::avg_pool2d", "aten::adaptive_avg_pool2d",
             "aten::cat", "aten::scaled_dot_product_attention", "aten::mul", "aten::silu", "aten::sigmoid"}


def layer_kernels(model, xs, warmup=3):
    with torch.inference_mode():
        for _ in range(warmup):
            model(*xs)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
            model(*xs)
            torch.cuda.synchronize()
    ops = []
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CPU or e.name not in LAYER_OPS:
            continue
        ops.append({"op": e.name.replace("aten::", ""), "shapes": [list(s) for s in e.input_shapes if s],
                    "kernels": [], "_event": e})
    by_event = {id(o["_event"]): o for o in ops}
    total = 0.0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CPU:
            continue
        kernels = [k for k in e.kernels] if hasattr(e, "kernels") else []
        if not kernels:
            continue
        owner = e
        while owner is not None and id(owner) not in by_event:
            owner = owner.cpu_parent
        if owner is None:
            continue
        for k in kernels:
            us = float(k.duration) if hasattr(k, "duration") else 0.0  # µs
            by_event[id(owner)]["kernels"].append([k.name[:120], round(us, 2)])
            total += us
    for o in ops:
        del o["_event"]
    return [o for o in ops if o["kernels"]], total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", help="comma list of zoo models (scripts/model_zoo.py)")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--precision", default="fp16", choices=["fp16", "fp32", "bf16"])
    ap.add_argument("--seq", type=int, default=128)
    a = ap.parse_args()
    dev = torch.device("cuda")
    dtype = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}[a.precision]
    for name in a.models.split(","):
        try:
            model = model_zoo.build(name).to(dev).to(dtype).eval()
        except Exception as e:  # noqa: BLE001 - reported, never dropped silently
            print(json.dumps({"model": name, "error": repr(e)[:300]}), flush=True)
            continue
        for b in (int(v) for v in a.batches.split(",")):
            try:
                xs = model_zoo.cast_inputs(tuple(x.to(dev) for x in model_zoo.inputs(name, b, a.seq, "cpu")), dtype)
                ops, total = layer_kernels(model, xs)
                print(json.dumps({"model": name, "batch": b, "precision": a.precision,
                                  "kernel_us": round(total, 1), "ops": ops}), flush=True)
            except Exception as e:  # noqa: BLE001
                print(json.dumps({"model": name, "batch": b, "error": repr(e)[:300]}), flush=True)


if __name__ == "__main__":
    main()
