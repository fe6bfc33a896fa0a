#!/usr/bin/env python3
"""Random search over BERT configurations under a latency budget on a named GPU: the largest
model (by parameters) whose predicted batch-1 latency under CUDA graphs stays within 1 ms on
an H200 at sequence length 128 (docs/python.md).
    PYTHONPATH=build/python python3 python/examples/nas_random_search.py"""
import random

import ftax

h200 = ftax.Profile.load("h200")
rng = random.Random(0)
best = None
for _ in range(300):
    heads = rng.choice([4, 8, 12, 16])
    hidden = heads * rng.choice([32, 48, 64])
    layers = rng.randint(2, 24)
    spec = f"bert:layers={layers},hidden={hidden},heads={heads},ffn={4 * hidden}"
    p = ftax.predict(spec, profile=h200, framework="cuda-graph", precision="fp16", batch=1,
                     dims={"seq": 128}, interval=False)[0]
    if p["latency_ms"] > 1.0:
        continue
    params = ftax.inspect(spec, dims={"seq": 128})["params"]
    if best is None or params > best[0]:
        best = (params, spec, p)
params, spec, p = best
print(f"best under 1 ms: {spec}")
print(f"  {params / 1e6:.1f} M parameters, predicted {p['latency_ms']:.3f} ms "
      f"({p['bound']}-bound: framework {p['framework_ms']:.3f} ms, compute {p['compute_ms']:.3f} ms)")
