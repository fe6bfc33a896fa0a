"""Two host-side costs that the bench's chains did not show, measured on the GPU host:

1. conv: the CPU cost of one call of a convolution as text and speech models call it (Conv1d
   over a sequence, SqueezeBERT's 768 channels over 128 positions, WavLM's and Whisper's front
   ends) against the 2-D convolutions of `ftax bench`'s per-op chains (scripts/bench_eager.py),
   in Python eager under torch.inference_mode() and through a traced TorchScript module. Chains
   of 200 calls on inputs so small that the CPU is the bound; the median of 7 chains, in
   microseconds per call; the kernels each call launches from a separate profiled pass.
2. gap: the GPU's own gap between two kernels queued back to back by eager code, with the CPU
   far ahead: a chain of N element-wise adds over a tensor large enough that each kernel runs
   longer than its dispatch; wall time of the chain (no profiler) less the kernels' summed
   time (a separate profiled pass), over N - 1.

One JSON line per case:
    python3 validation/scripts/conv_cpu_and_stream_gap.py > conv-gap.jsonl"""
import json

import torch
from torch.profiler import ProfilerActivity, profile

from grouped_conv_cpu_cost import per_call_us  # chains of calls, the median chain, per call


def kernels(fn, x, calls=5):
    """Kernels per call and their summed time per call (us)."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(x)
        torch.cuda.synchronize()
    ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(ev) / calls, sum(e.device_time for e in ev) / calls


def conv_cases(dev, dt):
    nn = torch.nn

    def m(mod):
        return mod.to(device=dev, dtype=dt).eval()

    def t(*s):
        return torch.randn(*s, device=dev, dtype=dt)

    seq = t(1, 128, 768)
    return [
        ("bench conv 64c 3x3 56x56", t(1, 64, 56, 56), m(nn.Conv2d(64, 64, 3, padding=1, bias=False))),
        ("bench conv:1x1 128c 28x28", t(1, 128, 28, 28), m(nn.Conv2d(128, 128, 1, bias=False))),
        ("conv2d 768c 1x1 16x8 bias", t(1, 768, 16, 8), m(nn.Conv2d(768, 768, 1))),
        ("conv2d 768c 1x1 128x1 bias", t(1, 768, 128, 1), m(nn.Conv2d(768, 768, 1))),
        ("conv1d 768c k1 L128 bias", t(1, 768, 128), m(nn.Conv1d(768, 768, 1))),
        ("conv1d 768c k1 L128 nobias", t(1, 768, 128), m(nn.Conv1d(768, 768, 1, bias=False))),
        ("conv1d 768c k1 L128 bias permuted input", seq.permute(0, 2, 1), m(nn.Conv1d(768, 768, 1))),
        ("conv1d 768c k1 L128 groups4", t(1, 768, 128), m(nn.Conv1d(768, 768, 1, groups=4))),
        ("conv1d 64c k1 L128 bias", t(1, 64, 128), m(nn.Conv1d(64, 64, 1))),
        ("conv1d 512c k3 L128 bias", t(1, 512, 128), m(nn.Conv1d(512, 512, 3, padding=1))),
        ("linear 768 over 128", seq, m(nn.Linear(768, 768))),
    ]


def main():
    dev = torch.device("cuda")
    dt = torch.float16
    rows = []
    with torch.inference_mode():
        for name, x, mod in conv_cases(dev, dt):
            traced = torch.jit.trace(mod, x)
            for how, fn in (("pytorch-eager", mod), ("torchscript", traced)):
                rows.append({"what": "conv", "case": name, "framework": how,
                             "call_us": round(per_call_us(fn, x), 2), "fn": fn, "x": x})
        # The gap: chains of N adds over big tensors; kernel records after every timing.
        gaps = []
        for shape, dtype in (((4096, 4096), torch.float32), ((4096, 4096), torch.float16),
                             ((2048, 4096), torch.float16)):
            x = torch.randn(*shape, device=dev, dtype=dtype)
            for n in (16, 64):
                def chain(v, n=n):
                    for _ in range(n):
                        v = v + 1.0
                    return v
                gaps.append({"what": "gap", "shape": list(shape), "dtype": str(dtype), "n": n,
                             "wall_us": round(per_call_us(chain, x, calls=10, chains=9), 2),
                             "fn": chain, "x": x})
        for r in rows + gaps:
            fn, x = r.pop("fn"), r.pop("x")
            k, kus = kernels(fn, x)
            r["kernels_per_call"], r["kernel_us_per_call"] = k, round(kus, 2)
            if r["what"] == "gap":
                r["gap_us"] = round((r["wall_us"] - kus) / (r["n"] - 1), 3)
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
