#!/usr/bin/env python3
"""GPU-host test: one model that cannot be captured as a CUDA graph, placed first in a sweep of
`ftax validate --rounds 2`, costs only its own cuda-graph points: its TorchScript points and
every point of the model after it are measured. The failing model calls .item() (a device
synchronize, not allowed during capture); torchvision's ViT-B/16, traced, is tried as well,
and the failures' reasons are printed.
    python3 tests/gpu/isolation_test.py --ftax build-gpu/ftax [--out DIR]
Exit 0 when the isolation holds."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def save(module, x, path, name, arch, trace=True):
    import torch
    with torch.no_grad():
        tr = torch.jit.trace(module, (x,), check_trace=False) if trace else torch.jit.script(module)
    tr.save(path)
    with open(path[:-3] + ".json", "w") as f:
        json.dump({"model": name, "precision": "fp16", "arch": arch, "kind": "image",
                   "inputs": [{"shape": list(x.shape), "dtype": "float16"}]}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ftax", required=True)
    ap.add_argument("--out", default="")
    ap.add_argument("--vit", action="store_true", help="also sweep torchvision's ViT-B/16")
    a = ap.parse_args()
    import torch
    import torchvision
    work = a.out or tempfile.mkdtemp(prefix="ftax-isolation-")
    os.makedirs(work, exist_ok=True)
    dev = torch.device("cuda")

    class SyncsInForward(torch.nn.Module):
        def forward(self, x):
            s = float(x.abs().sum().item())  # a host sync: capture fails here
            return x * (1.0 / (1.0 + s))

    bad = os.path.join(work, "syncs.fp16.pt")
    save(SyncsInForward(), torch.randn(2, 3, 32, 32, device=dev, dtype=torch.half), bad, "syncs", "",
         trace=False)
    good = os.path.join(work, "resnet18.fp16.pt")
    save(torchvision.models.resnet18(weights=None).eval().to(dev).half(),
         torch.randn(2, 3, 224, 224, device=dev, dtype=torch.half), good, "resnet18", "resnet:depth=18")
    files = [bad, good]
    if a.vit:
        vit = os.path.join(work, "vit_b_16.fp16.pt")
        save(torchvision.models.vit_b_16(weights=None).eval().to(dev).half(),
             torch.randn(2, 3, 224, 224, device=dev, dtype=torch.half), vit, "vit_b_16", "vit")
        files.insert(0, vit)
    out = os.path.join(work, "isolation.json")
    rc = subprocess.run([a.ftax, "validate", *files, "--batch", "1,8", "--rounds", "2",
                         "--budget-s", "0.4", "-o", out]).returncode
    doc = json.load(open(out))
    have = {(r["model"], r["framework"], r["batch"]) for r in doc["rows"]}
    want = {("resnet18", f, b) for f in ("torchscript", "cuda-graph") for b in (1, 8)}
    want |= {("syncs", "torchscript", b) for b in (1, 8)}
    missing = sorted(want - have)
    bad_failures = [f for f in doc["failures"] if (f["model"], f["framework"]) != ("syncs", "cuda-graph")
                    and f["model"] != "vit_b_16"]
    for f in doc["failures"]:
        print(f"failure: {f['model']} {f['framework']} b{f['batch']}: {f['error'][:160]} "
              f"| blocking_op: {f.get('blocking_op', '-')}")
    print(f"validate exit {rc}; rows {len(doc['rows'])}; missing {missing}; unexpected failures {len(bad_failures)}")
    ok = not missing and not bad_failures and any(f["model"] == "syncs" for f in doc["failures"])
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
