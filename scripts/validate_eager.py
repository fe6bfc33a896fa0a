#!/usr/bin/env python3
"""Measures the validation models (model_zoo.py) in Python eager PyTorch, the way a careful
user would: random weights, warm-up, per-iteration host time with synchronization (median,
p10, p90), CUDA-event time, and one profiled pass (PyTorch's profiler, which reads CUPTI)
giving kernels per iteration, kernel time by kernel name and the ATen ops dispatched from
Python. Writes rows to --out as it goes (docs/validation.md, "measured rows").
`ftax validate --measured FILE --profile P` puts predictions beside them.
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402
from spread import spread  # noqa: E402



def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(model_zoo.MODELS))
    ap.add_argument("--precisions", default="fp16,fp32")
    ap.add_argument("--batches", default="1,2,4,8,16,32,64,128")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--budget-s", type=float, default=1.0, help="timing budget per point")
    ap.add_argument("--models-dir", default="",
                    help="where export_torchscript.py wrote NAME.PRECISION.pt: rows then name that file "
                         "and their inputs, so ftax can predict from the trace (models without an arch spec)")
    a = ap.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile
    dev = torch.device("cuda")
    dtypes = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}
    doc = {"schema_version": 1, "kind": "ftax-validation-measurements",
           "host": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                    "python": platform.python_version(),
                    "sm_count": torch.cuda.get_device_properties(0).multi_processor_count},
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": [], "failures": []}

    def flush():
        with open(a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(a.out + ".tmp", a.out)

    for name in a.models.split(","):
        spec, kind = model_zoo.MODELS[name]
        for p in a.precisions.split(","):
            try:
                m = model_zoo.build(name).to(dev).to(dtypes[p])
            except Exception as e:
                doc["failures"].append({"model": name, "precision": p, "error": repr(e)[:300]})
                flush()
                continue
            for b in [int(x) for x in a.batches.split(",")]:
                try:
                    xs = model_zoo.cast_inputs(model_zoo.inputs(name, b, a.seq, dev), dtypes[p])
                    with torch.no_grad():
                        for _ in range(3):
                            m(*xs)
                        torch.cuda.synchronize()
                        t0 = time.perf_counter()
                        m(*xs)
                        torch.cuda.synchronize()
                        one = time.perf_counter() - t0
                        reps = int(max(10, min(50, a.budget_s / max(one, 1e-6))))
                        host, ev = [], []
                        for _ in range(reps):
                            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                            t0 = time.perf_counter()
                            s.record()
                            m(*xs)
                            e.record()
                            torch.cuda.synchronize()
                            host.append((time.perf_counter() - t0) * 1e3)
                            ev.append(s.elapsed_time(e))
                        iters = 3
                        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                            for _ in range(iters):
                                m(*xs)
                            torch.cuda.synchronize()
                    kernels = {}
                    aten_top = 0
                    kernel_us = 0.0
                    nk = 0
                    for evt in prof.events():
                        if evt.device_type == torch.autograd.DeviceType.CUDA:
                            d = evt.device_time if hasattr(evt, "device_time") else evt.cuda_time
                            k = kernels.setdefault(evt.name[:160], [0, 0.0])
                            k[0] += 1
                            k[1] += d
                            kernel_us += d
                            nk += 1
                        elif evt.name.startswith("aten::"):
                            par = evt.cpu_parent
                            if par is None or not par.name.startswith("aten::"):
                                aten_top += 1
                    lat = spread(host)
                    row = {"model": name, "arch": spec, "framework": "pytorch-eager", "precision": p,
                           "batch": b, "seq": a.seq if kind == "text" else None,
                           "latency_ms": lat, "event_ms": spread(ev),
                           "kernels_per_iter": nk / iters, "kernel_ms": kernel_us / iters / 1e3,
                           "aten_ops_per_iter": aten_top / iters,
                           "kernels": {k: [v[0] / iters, v[1] / iters] for k, v in kernels.items()}}
                    row["framework_ms_measured"] = max(0.0, lat["median"] - row["kernel_ms"])
                    pt = os.path.join(a.models_dir, f"{name}.{p}.pt") if a.models_dir else ""
                    if pt and os.path.exists(pt):
                        row["source"] = pt
                        row["inputs"] = [{"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
                                         for x in xs]
                    doc["rows"].append(row)
                    flush()
                    print(f"eager {name} {p} b{b}: {lat['median']:.2f} ms "
                          f"[{lat['p10']:.2f}, {lat['p90']:.2f}] kernels {nk / iters:.0f} "
                          f"kernel {row['kernel_ms']:.2f} ms aten {aten_top / iters:.0f}", file=sys.stderr)
                except Exception as e:
                    doc["failures"].append({"model": name, "precision": p, "batch": b, "error": repr(e)[:300]})
                    flush()
                    torch.cuda.empty_cache()
            del m
            torch.cuda.empty_cache()
    doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
