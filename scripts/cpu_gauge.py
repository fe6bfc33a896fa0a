"""How fast the host's CPU runs right now, for the Python side of bench and validation.

On shared GPU hosts the CPU's speed changes over time, by about 1.5-1.8x within a minute, whatever
core a process runs on (validation/scripts/eager_timing_conditions.py shows it): every
CPU-bound cost (Python eager's per-op dispatch, a model's whole eager latency) moves with it.
The gauge is work that never touches the GPU and runs through the same code every op does:
64 adds on a 4-element CPU tensor from Python (the interpreter, the binding and ATen's
dispatcher), in microseconds per add, the fastest of five chains (about 1 ms in all).

    import torch, cpu_gauge
    g = cpu_gauge.gauge_us(torch)   # ~3 us per add on a fast host, ~5.5 when it slows

bench_eager.py stores the gauge with each chain it times, validate_eager.py with each point;
`ftax calibrate` prices the profile at the host's fast speed and records that gauge, and
`ftax validate` predicts each Python eager point at the speed its own gauge read."""
import time


def gauge_us(torch, chains=5, n=64):
    a = torch.zeros(4)
    best = float("inf")
    for _ in range(chains):
        t0 = time.perf_counter()
        x = a
        for _ in range(n):
            x = x + 1.0
        best = min(best, (time.perf_counter() - t0) * 1e6 / n)
    return best
