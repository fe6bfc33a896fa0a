#!/usr/bin/env python3
"""Records a PyTorch profiler (Kineto) chrome trace of a validation model in Python eager
mode, one ProfilerStep per iteration, for `ftax validate --trace`.
  record_trace.py --model bert-base --precision fp16 --batch 8 --out trace.json"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="bert-base", choices=sorted(model_zoo.MODELS))
    ap.add_argument("--precision", default="fp16", choices=["fp16", "fp32", "bf16"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    dt = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}[a.precision]
    dev = torch.device("cuda")
    m = model_zoo.build(a.model).to(dev).to(dt)
    xs = model_zoo.cast_inputs(model_zoo.inputs(a.model, a.batch, a.seq, dev), dt)
    with torch.no_grad():
        for _ in range(5):
            m(*xs)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=1, warmup=2, active=a.steps)) as prof:
            for _ in range(a.steps + 3):
                m(*xs)
                torch.cuda.synchronize()
                prof.step()
    prof.export_chrome_trace(a.out)
    print(f"record_trace.py: wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
