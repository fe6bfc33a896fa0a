#!/usr/bin/env python3
"""Does compiling a model slow the CPU of the process that compiled it? On host runs bg and cb
the CPU gauge (scripts/cpu_gauge.py) read 1.37-1.48x slower in the rows of torch.compile'd
modules than in the Python eager rows timed before them in the same process. This times the
gauge and a small eager model's batch-1 latency (torch.inference_mode(), no profiler) for a
while before and after an event, each condition in a fresh process:

  compile     torch.compile(resnet18, dynamic=False) and its first call (Inductor's default
              compile workers)
  threads1    the same with TORCHINDUCTOR_COMPILE_THREADS=1 (Inductor compiles in-process)
  busy        every CPU of the host kept busy by plain Python loops for as long as a compile
              takes, nothing compiled: is it the host's power state after a burst of work?
  dynamo      torch.compile of a two-op function (Dynamo and Inductor imported and installed,
              no model compiled)

One JSON line per condition with the time series, then a table of medians per window
(before; 0-15 s after; 15-45 s after).

    python3 validation/scripts/compile_cpu_slowdown.py -o /tmp/slowdown.jsonl

Run on the GPU host; no ftax build needed."""
import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))


def spin(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1


def child(condition, before_s, after_s):
    import torch
    import torchvision
    import cpu_gauge

    dev = torch.device("cuda")
    m = torchvision.models.resnet18().eval().half().to(dev)
    x = torch.randn(1, 3, 224, 224, device=dev, dtype=torch.half)
    series = []  # (seconds since the event, gauge us, eager ms)
    with torch.inference_mode():
        for _ in range(5):
            m(x)
        torch.cuda.synchronize()

        def sample(t_event):
            g = cpu_gauge.gauge_us(torch)
            t0 = time.perf_counter()
            for _ in range(5):
                m(x)
            torch.cuda.synchronize()
            series.append((round(time.time() - t_event, 3), round(g, 3),
                           round((time.perf_counter() - t0) * 1e3 / 5, 4)))
            time.sleep(0.2)

        start = time.time() + before_s
        while time.time() < start:
            sample(start)
        t0 = time.time()
        if condition in ("compile", "threads1"):
            cm = torch.compile(m, dynamic=False)
            cm(x)
            torch.cuda.synchronize()
        elif condition == "busy":
            n = os.cpu_count() or 4
            with multiprocessing.get_context("spawn").Pool(n) as pool:
                pool.map(spin, [12.0] * n)
        elif condition == "dynamo":
            f = torch.compile(lambda a: a * 2 + 1)
            f(x)
            torch.cuda.synchronize()
        event_s = time.time() - t0
        t_event = time.time()
        while time.time() - t_event < after_s:
            sample(t_event)
    print(json.dumps({"condition": condition, "event_s": round(event_s, 2), "series": series}))


def run_child(cmd, env, cond, sink):
    """Runs one condition's fresh process; its last line of output (one JSON object) is written
    to sink and returned, or None with the reason on stderr if it failed."""
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    line = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else None
    if not line:
        print(f"{cond}: failed ({p.returncode}): {p.stderr[-600:]}", file=sys.stderr)
        return None
    sink.write(line + "\n")
    sink.flush()
    return json.loads(line)


def windows(series):
    out = {}
    for name, lo, hi in (("before", -1e9, 0), ("0-15 s", 0, 15), ("15-45 s", 15, 45)):
        pts = [s for s in series if lo <= s[0] < hi]
        if pts:
            out[name] = (statistics.median(p[1] for p in pts), statistics.median(p[2] for p in pts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conditions", default="compile,busy,threads1,dynamo")
    ap.add_argument("--before-s", type=float, default=10)
    ap.add_argument("--after-s", type=float, default=45)
    ap.add_argument("-o", "--out", default="-")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.before_s, a.after_s)
        return
    sink = sys.stdout if a.out == "-" else open(a.out, "a")
    rows = []
    for cond in a.conditions.split(","):
        env = dict(os.environ)
        if cond == "threads1":
            env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        row = run_child([sys.executable, __file__, "--child", cond, "--before-s", str(a.before_s),
                         "--after-s", str(a.after_s)], env, cond, sink)
        if row:
            rows.append(row)
    print(f"{'condition':<10} {'event s':>7}  gauge us (before / 0-15 s / 15-45 s)   "
          f"ResNet-18 eager b1 ms (same windows)")
    for r in rows:
        w = windows(r["series"])
        g = " / ".join(f"{w[k][0]:.2f}" if k in w else "-" for k in ("before", "0-15 s", "15-45 s"))
        e = " / ".join(f"{w[k][1]:.3f}" if k in w else "-" for k in ("before", "0-15 s", "15-45 s"))
        print(f"{r['condition']:<10} {r['event_s']:>7.1f}  {g:<38} {e}")


if __name__ == "__main__":
    main()
