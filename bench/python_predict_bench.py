#!/usr/bin/env python3
"""How many arch-spec predictions per second the ftax Python module makes in one process
(BERT-sized specs, one point each, no interval), and with one model re-used.
    PYTHONPATH=build/python python3 bench/python_predict_bench.py [--n 2000]"""
import argparse
import random
import time

import ftax


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2000)
    a = ap.parse_args()
    h200 = ftax.Profile.load("h200")
    rng = random.Random(1)
    specs = []
    for _ in range(a.n):
        heads = rng.choice([4, 8, 12, 16])
        hidden = heads * rng.choice([32, 64])
        specs.append(f"bert:layers={rng.randint(2, 24)},hidden={hidden},heads={heads},ffn={4 * hidden}")
    t0 = time.perf_counter()
    for s in specs:
        ftax.predict(s, profile=h200, framework="cuda-graph", precision="fp16", batch=1, dims={"seq": 128},
                     interval=False)
    dt = time.perf_counter() - t0
    print(f"distinct BERT specs: {a.n / dt:,.0f} predictions/s ({dt / a.n * 1e6:.0f} us each)")
    m = ftax.Model("bert:layers=12,hidden=768,heads=12,ffn=3072", dims={"seq": 128})
    t0 = time.perf_counter()
    for b in range(a.n):
        ftax.predict(m, profile=h200, batch=1 + b % 64, interval=False)
    dt = time.perf_counter() - t0
    print(f"one BERT-base model, batch varied: {a.n / dt:,.0f} predictions/s ({dt / a.n * 1e6:.0f} us each)")


if __name__ == "__main__":
    main()
