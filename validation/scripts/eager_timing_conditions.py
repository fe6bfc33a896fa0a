#!/usr/bin/env python3
"""Why does one host's Python eager latency move from run to run? Times zoo models under
Python eager (torch.inference_mode(), no profiler) in fresh processes, each either free to run
on any CPU (as users run) or pinned to one CPU, and records per round what the process and
the host did meanwhile: the CPU it ran on, its context switches, the host's steal and idle
time (/proc/stat), and the GPU's SM clock and utilization (nvidia-smi, sampled every 50 ms in
the background). One JSON line per round, then a table of medians per condition.

    python3 validation/scripts/eager_timing_conditions.py --models resnet101,bert-base \
        --conditions free,pin:2,free,pin:9 --rounds 15 -o /tmp/cond.jsonl

Run on the GPU host; no ftax build needed."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))


def proc_stat():
    with open("/proc/stat") as f:
        cpu = f.readline().split()[1:]
    v = [int(x) for x in cpu]
    # user nice system idle iowait irq softirq steal
    return {"busy": v[0] + v[1] + v[2] + v[5] + v[6], "idle": v[3] + v[4], "steal": v[7] if len(v) > 7 else 0}


def current_cpu():
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def gauges(torch):
    """The CPU's speed right now, from work that never touches the GPU: a fixed pure-Python
    loop (the interpreter, as Python glue runs) and 64 adds on a tiny CPU tensor (ATen's
    dispatcher, as every op runs); microseconds, the fastest of five."""
    py, aten = [], []
    a = torch.zeros(4)
    for _ in range(5):
        t0 = time.perf_counter()
        acc = 0
        for i in range(2000):
            acc += i * i
        py.append((time.perf_counter() - t0) * 1e6)
        t0 = time.perf_counter()
        x = a
        for _ in range(64):
            x = x + 1.0
        aten.append((time.perf_counter() - t0) * 1e6 / 64)
    return min(py), min(aten)


def child(args):
    import torch
    import model_zoo
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    dt = {"fp16": torch.float16, "fp32": torch.float32}[args.precision]
    m = model_zoo.build(args.model).to("cuda", dt)
    xs = model_zoo.cast_inputs(model_zoo.inputs(args.model, args.batch, 128, "cuda"), dt)
    x0 = torch.zeros(8, 8, device="cuda", dtype=dt)
    with torch.inference_mode():
        for _ in range(5):
            m(*xs)
        torch.cuda.synchronize()
        for r in range(args.rounds):
            # the bench's probe: 64 tiny adds, per op
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            x = x0
            for _ in range(64):
                x = x + 1.0
            torch.cuda.synchronize()
            probe = (time.perf_counter() - t0) * 1e6 / 64
            g_py0, g_aten0 = gauges(torch)
            s0, ru0, c0, w0 = proc_stat(), resource.getrusage(resource.RUSAGE_SELF), current_cpu(), time.time()
            ms = []
            t_end = time.perf_counter() + args.round_s
            while time.perf_counter() < t_end or len(ms) < 3:
                t0 = time.perf_counter()
                m(*xs)
                torch.cuda.synchronize()
                ms.append((time.perf_counter() - t0) * 1e3)
            s1, ru1, c1 = proc_stat(), resource.getrusage(resource.RUSAGE_SELF), current_cpu()
            g_py1, g_aten1 = gauges(torch)
            tot = (s1["busy"] - s0["busy"]) + (s1["idle"] - s0["idle"]) + (s1["steal"] - s0["steal"])
            print(json.dumps({
                "model": args.model, "batch": args.batch, "condition": args.condition, "round": r,
                "t0": w0, "t1": time.time(), "median_ms": statistics.median(ms), "min_ms": min(ms),
                "n": len(ms), "probe_us": probe,
                "gauge_py_us": [g_py0, g_py1], "gauge_aten_us": [g_aten0, g_aten1], "cpu_start": c0, "cpu_end": c1,
                "vol_csw": ru1.ru_nvcsw - ru0.ru_nvcsw, "invol_csw": ru1.ru_nivcsw - ru0.ru_nivcsw,
                "user_s": ru1.ru_utime - ru0.ru_utime, "sys_s": ru1.ru_stime - ru0.ru_stime,
                "host_busy": (s1["busy"] - s0["busy"]) / max(tot, 1),
                "host_steal": (s1["steal"] - s0["steal"]) / max(tot, 1)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet101")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--precision", default="fp16")
    ap.add_argument("--conditions", default="free,pin:2,free,pin:9",
                    help="comma list: free (any CPU) or pin:K (CPU K); each a fresh process")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--round-s", type=float, default=0.2)
    ap.add_argument("-o", "--out", required=True, help="JSON lines, one per round")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--pin", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--condition", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    smi_path = args.out + ".smi.csv"
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,power.draw,pstate",
         "--format=csv,noheader", "-lms", "50"], stdout=open(smi_path, "w"), stderr=subprocess.DEVNULL)
    rows = []
    try:
        with open(args.out, "w") as out:
            for model in args.models.split(","):
                for cond in args.conditions.split(","):
                    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--model", model,
                           "--batch", str(args.batch), "--precision", args.precision,
                           "--rounds", str(args.rounds), "--round-s", str(args.round_s),
                           "--condition", cond, "-o", "-"]
                    if cond.startswith("pin:"):
                        cmd += ["--pin", cond.split(":")[1]]
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    got = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
                    if p.returncode != 0:
                        print(f"{model} {cond}: failed ({p.returncode}): {p.stderr[-400:]}", file=sys.stderr)
                    for g in got:
                        out.write(json.dumps(g) + "\n")
                    out.flush()
                    rows += got
                    if got:
                        med = statistics.median(g["median_ms"] for g in got)
                        lo, hi = min(g["median_ms"] for g in got), max(g["median_ms"] for g in got)
                        cpus = sorted({g["cpu_start"] for g in got} | {g["cpu_end"] for g in got})
                        print(f"{model:12s} b{args.batch} {cond:7s} median {med:7.2f} ms  rounds {lo:.2f}-{hi:.2f}"
                              f"  probe {statistics.median(g['probe_us'] for g in got):5.1f} us"
                              f"  invol_csw/round {statistics.median(g['invol_csw'] for g in got):.0f}"
                              f"  steal {100*statistics.median(g['host_steal'] for g in got):.1f}%"
                              f"  host busy {100*statistics.median(g['host_busy'] for g in got):.0f}%"
                              f"  cpus {cpus[:8]}", flush=True)
    finally:
        smi.terminate()
    # GPU clock while each condition ran
    samples = []
    for line in open(smi_path):
        f = [x.strip() for x in line.split(",")]
        try:
            ts = time.mktime(time.strptime(f[0].split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + f[0].split(".")[1])
            samples.append((ts, float(f[1].split()[0]), float(f[3].split()[0])))
        except (ValueError, IndexError):
            pass
    for model in args.models.split(","):
        for cond in dict.fromkeys(args.conditions.split(",")):
            rr = [g for g in rows if g["model"] == model and g["condition"] == cond]
            clk = [s[1] for s in samples for g in rr if g["t0"] <= s[0] <= g["t1"]]
            util = [s[2] for s in samples for g in rr if g["t0"] <= s[0] <= g["t1"]]
            if clk:
                print(f"{model:12s} {cond:7s} SM clock median {statistics.median(clk):.0f} MHz "
                      f"(min {min(clk):.0f}), GPU util median {statistics.median(util):.0f}%  [{len(clk)} samples]")


if __name__ == "__main__":
    main()
