#!/usr/bin/env python3
"""Traces the validation models (model_zoo.py) to TorchScript files, one per precision:
OUT/NAME.PRECISION.pt with random weights, traced at --trace-batch. Each file also gets a
NAME.PRECISION.json beside it with the arch spec and input description for `ftax validate`.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402


def reusable(path, seq, trace_batch):
    """Whether the trace at `path` and its description exist and were made at `seq` and
    `trace_batch` (the first input's leading dimension)."""
    try:
        with open(path[:-3] + ".json") as f:
            meta = json.load(f)
        inputs = meta.get("inputs") or [{}]
        return (os.path.getsize(path) > 0 and meta.get("seq") == seq and
                (inputs[0].get("shape") or [None])[0] == trace_batch)
    except (OSError, ValueError, AttributeError, IndexError, TypeError):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(model_zoo.MODELS))
    ap.add_argument("--precisions", default="fp16,fp32")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--device", default="cuda", help="where to build and trace (cpu to check the zoo without a GPU)")
    ap.add_argument("--trace-batch", type=int, default=2)
    ap.add_argument("--report", default="",
                    help="write which models traced, and the error of each that did not, to this JSON file")
    ap.add_argument("--reuse", action="store_true",
                    help="keep a trace already in --out whose description (NAME.PRECISION.json) says it "
                         "was made at this --seq and --trace-batch: a later call on the same machine "
                         "(validation/scripts/zoo_campaign.sh) then spends no time tracing again")
    a = ap.parse_args()
    import torch
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device(a.device)
    dtypes = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}
    rc = 0
    report = {"kind": "ftax-export-report", "exported": [], "failures": []}

    def write_report():
        if a.report:
            with open(a.report + ".tmp", "w") as f:
                json.dump(report, f, indent=1)
            os.replace(a.report + ".tmp", a.report)
    for name in a.models.split(","):
        for p in a.precisions.split(","):
            t0 = time.time()
            path = os.path.join(a.out, f"{name}.{p}.pt")
            if a.reuse and reusable(path, a.seq, a.trace_batch):
                print(f"export: {path} (kept from an earlier run)", file=sys.stderr)
                report["exported"].append({"model": name, "precision": p, "reused": True})
                write_report()
                continue
            try:
                m = model_zoo.build(name).to(dev).to(dtypes[p])
                xs = model_zoo.cast_inputs(model_zoo.inputs(name, a.trace_batch, a.seq, dev), dtypes[p])
                with torch.no_grad():
                    tr = torch.jit.trace(m, xs, strict=False, check_trace=False)
                tr.save(path)
                spec, kind = model_zoo.MODELS[name]
                meta = {"model": name, "precision": p, "arch": spec, "kind": kind, "seq": a.seq,
                        "inputs": [{"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
                                   for x in xs]}
                with open(path[:-3] + ".json", "w") as f:
                    json.dump(meta, f)
                print(f"export: {path} ({time.time() - t0:.1f} s)", file=sys.stderr)
                report["exported"].append({"model": name, "precision": p, "seconds": round(time.time() - t0, 2)})
            except Exception as e:  # keep going: one model failing must not stop the campaign
                print(f"export: {name} {p} FAILED: {type(e).__name__}: {e}", file=sys.stderr)
                report["failures"].append({"model": name, "precision": p, "stage": "torch.jit.trace",
                                           "error": f"{type(e).__name__}: {str(e)[:400]}"})
                rc = 1
            write_report()
            torch.cuda.empty_cache()
    return rc


if __name__ == "__main__":
    sys.exit(main())
