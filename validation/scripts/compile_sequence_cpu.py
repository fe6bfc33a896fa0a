#!/usr/bin/env python3
"""Why do torch.compile's second-batch rows run at a slow CPU? On host run cf (H100) the CPU gauge
(scripts/cpu_gauge.py) read 5.3-6.5 µs per add in 10 of 11 models' default-mode batch-8 rows and
3.3-3.8 in their Python eager rows of the same processes. validate_eager.py times a model's
points in this order: Python eager at batch 1 and 8, then torch.compile(model) (dynamic=False)
called at batch 1 (a compile) and timed, then called at batch 8 (a second compile of the same
module) and timed, then the same for mode="reduce-overhead".

This replays that order in one process on one model and samples, every 0.25 s, the gauge, the
latency of the callable being timed (5 calls, no profiler, torch.inference_mode()), how many of
the host's CPUs were busy (/proc/stat), how much CPU the process and each of its descendant
processes used (Inductor's compile workers are descendants), and how many threads the process
has. After the compiles it collects the garbage (gc.collect), then shuts Inductor's compile
workers down, sampling after each. One condition per fresh process:

  workers    as validate_eager.py runs (Inductor's default compile workers)
  threads1   TORCHINDUCTOR_COMPILE_THREADS=1 (Inductor compiles in-process, no workers)

    python3 validation/scripts/compile_sequence_cpu.py --model mobilenet_v3_small -o /tmp/seq.jsonl

Prints a table of medians per phase. Run on the GPU host; no ftax build needed."""
import argparse
import gc
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)
import compile_cpu_slowdown  # noqa: E402  (its run_child: one condition's fresh process)

TICK = os.sysconf("SC_CLK_TCK")


def busy_jiffies():
    """(busy, total) jiffies summed over the host's CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def proc_cpu(pid):
    """utime + stime of a process in seconds, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        v = s[s.rindex(")") + 2:].split()
        return (int(v[11]) + int(v[12])) / TICK
    except OSError:
        return None


def descendants(pid):
    """Every live descendant of pid (by /proc/*/stat's parent field)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
                parent[int(d)] = int(s[s.rindex(")") + 2:].split()[1])
            except OSError:
                pass
    out, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        frontier += kids
    return out


def threads():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def child(model, seconds):
    import torch
    import cpu_gauge
    import model_zoo

    dev = torch.device("cuda")
    m = model_zoo.build(model).eval().half().to(dev)
    xs = {b: model_zoo.cast_inputs(tuple(x.to(dev) for x in model_zoo.inputs(model, b, 128, "cpu")),
                                   torch.half) for b in (1, 8)}
    me = os.getpid()
    series, phases = [], []
    state = {"jiffies": busy_jiffies(), "self": proc_cpu(me), "kids": {}}

    def sample(phase, fn):
        g = cpu_gauge.gauge_us(torch)
        t0 = time.perf_counter()
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        lat = (time.perf_counter() - t0) * 1e3 / 5
        time.sleep(0.25)
        busy, total = busy_jiffies()
        b0, t0j = state["jiffies"]
        ncpu = os.cpu_count() or 1
        busy_cpus = ncpu * (busy - b0) / max(1, total - t0j)
        state["jiffies"] = (busy, total)
        mine = proc_cpu(me)
        self_cpus = (mine - state["self"]) if mine is not None else 0.0
        state["self"] = mine
        kid_s, kids = 0.0, descendants(me)
        for k in kids:
            c = proc_cpu(k)
            if c is not None:
                kid_s += c - state["kids"].get(k, 0.0)
                state["kids"][k] = c
        series.append({"phase": phase, "t": round(time.time() - t_start, 2), "gauge_us": round(g, 3),
                       "ms": round(lat, 4), "busy_cpus": round(busy_cpus, 2), "self_cpu_s": round(self_cpus, 3),
                       "kids": len(kids), "kids_cpu_s": round(kid_s, 3), "threads": threads()})

    def phase(name, fn, secs):
        end = time.time() + secs
        while time.time() < end:
            sample(name, fn)

    t_start = time.time()
    with torch.inference_mode():
        for b in (1, 8):
            for _ in range(3):
                m(*xs[b])
        torch.cuda.synchronize()
        phase("eager b1", lambda: m(*xs[1]), seconds)
        phase("eager b8", lambda: m(*xs[8]), seconds)
        for mode in ("default", "reduce-overhead"):
            cm = torch.compile(m, mode=None if mode == "default" else mode, dynamic=False)
            for b in (1, 8):
                t0 = time.time()
                cm(*xs[b])
                torch.cuda.synchronize()
                phases.append({"event": f"compile {mode} b{b}", "s": round(time.time() - t0, 2)})
                phase(f"{mode} b{b}", lambda b=b: cm(*xs[b]), seconds)
        t0 = time.time()
        gc.collect()
        phases.append({"event": "gc.collect", "s": round(time.time() - t0, 2)})
        phase("after gc.collect", lambda: cm(*xs[8]), seconds / 2)
        t0 = time.time()
        try:
            from torch._inductor import async_compile
            async_compile.shutdown_compile_workers()
            done = "shutdown_compile_workers"
        except Exception as e:  # noqa: BLE001 - recorded, the sampling goes on
            done = f"failed: {e}"
        phases.append({"event": done, "s": round(time.time() - t0, 2)})
        phase("workers shut down", lambda: cm(*xs[8]), seconds / 2)
        phase("eager b8 again", lambda: m(*xs[8]), seconds / 2)
    print(json.dumps({"model": model, "condition": os.environ.get("SEQ_CONDITION", "workers"),
                      "events": phases, "series": series}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mobilenet_v3_small")
    ap.add_argument("--conditions", default="workers,threads1")
    ap.add_argument("--seconds", type=float, default=12, help="sampling time per phase")
    ap.add_argument("-o", "--out", default="-")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.seconds)
        return
    sink = sys.stdout if a.out == "-" else open(a.out, "a")
    rows = []
    for cond in a.conditions.split(","):
        env = dict(os.environ, SEQ_CONDITION=cond)
        if cond == "threads1":
            env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        elif cond != "workers":
            ap.error(f"unknown condition '{cond}' (workers, threads1)")
        row = compile_cpu_slowdown.run_child([sys.executable, __file__, "--child", a.model, "--seconds",
                                              str(a.seconds)], env, cond, sink)
        if row:
            rows.append(row)
    for r in rows:
        print(f"\n{r['model']}, {r['condition']}: " +
              "; ".join(f"{e['event']} {e['s']} s" for e in r["events"]))
        print(f"{'phase':<20} {'n':>3} {'gauge us':>9} {'ms':>8} {'busy CPUs':>9} {'self CPU/s':>10} "
              f"{'workers':>7} {'their CPU s':>11} {'threads':>7}")
        names = list(dict.fromkeys(s["phase"] for s in r["series"]))
        for n in names:
            pts = [s for s in r["series"] if s["phase"] == n]
            med = lambda k: statistics.median(p[k] for p in pts)  # noqa: E731
            dt = max(1e-9, pts[-1]["t"] - pts[0]["t"]) if len(pts) > 1 else 1.0
            print(f"{n:<20} {len(pts):>3} {med('gauge_us'):>9.2f} {med('ms'):>8.3f} {med('busy_cpus'):>9.2f} "
                  f"{sum(p['self_cpu_s'] for p in pts) / dt:>10.2f} {pts[-1]['kids']:>7} "
                  f"{sum(p['kids_cpu_s'] for p in pts):>11.2f} {pts[-1]['threads']:>7}")


if __name__ == "__main__":
    main()
