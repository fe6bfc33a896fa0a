#!/usr/bin/env python3
"""How many arch-spec predictions per second the ftax Python module makes in one process
(BERT-sized specs, one point each: cuda-graph, fp16, batch 1, seq 128, no interval).

    PYTHONPATH=build/python python3 bench/python_predict_bench.py [--n 2000] [--repeat 3]

Rows:
  distinct BERT specs          ftax.predict(spec) in a loop, as a NAS loop calls it (the target:
                               >= 10,000/s); specs drawn as before (layers 2-24, 8 widths)
  all-distinct BERT specs      the same with every spec different (ffn varied too), so that
                               no kernel shape recurs across specs as often
  predict_many, N threads      the same specs in one ftax.predict_many call (GIL released),
                               for each N of --threads
  one BERT-base model          ftax.Model opened once, predicted at batch 1..64 in turn
Each row prints the best of --repeat runs: predictions per wall second and per CPU second of
this process (the CPU figure is the one to compare on a shared machine)."""
import argparse
import random
import time

import ftax


def bert_specs(n, all_distinct):
    rng = random.Random(1)
    specs, seen = [], set()
    while len(specs) < n:
        heads = rng.choice([4, 8, 12, 16])
        hidden = heads * rng.choice([32, 64])
        ffn = 4 * hidden if not all_distinct else hidden * rng.randint(2, 8) + 64 * rng.randint(0, 15)
        spec = f"bert:layers={rng.randint(2, 24)},hidden={hidden},heads={heads},ffn={ffn}"
        if all_distinct and spec in seen:
            continue
        seen.add(spec)
        specs.append(spec)
    return specs


def timed(fn, n, repeat):
    best = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if best is None or c < best[1]:
            best = (w, c)
    w, c = best
    return n / w, n / c, w / n * 1e6


def row(name, rate):
    wall, cpu, us = rate
    print(f"{name:32s} {wall:9,.0f}/s wall {cpu:9,.0f}/s CPU  ({us:.0f} us each)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2",
                    help="thread counts of the predict_many rows (comma list; e.g. 1,2,4,8,16 on a "
                         "machine with that many cores)")
    a = ap.parse_args()
    h200 = ftax.Profile.load("h200")
    kw = dict(framework="cuda-graph", precision="fp16", batch=1, dims={"seq": 128})
    specs = bert_specs(a.n, all_distinct=False)
    distinct = bert_specs(a.n, all_distinct=True)

    def loop(ss):
        for s in ss:
            ftax.predict(s, profile=h200, interval=False, **kw)

    ftax.predict(specs[0], profile=h200, interval=False, **kw)  # warm: the profile's first use
    row("distinct BERT specs", timed(lambda: loop(specs), a.n, a.repeat))
    row("all-distinct BERT specs", timed(lambda: loop(distinct), a.n, a.repeat))
    for threads in [int(t) for t in a.threads.split(",")]:
        row(f"predict_many, {threads} thread{'s' if threads > 1 else ''}",
            timed(lambda: ftax.predict_many(specs, profile=h200, threads=threads, **kw), a.n, a.repeat))
    m = ftax.Model("bert:layers=12,hidden=768,heads=12,ffn=3072", dims={"seq": 128})

    def model_loop():
        for b in range(a.n):
            ftax.predict(m, profile=h200, batch=1 + b % 64, interval=False)

    row("one BERT-base model, batch 1-64", timed(model_loop, a.n, a.repeat))


if __name__ == "__main__":
    main()
