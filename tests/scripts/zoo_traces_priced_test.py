#!/usr/bin/env python3
"""Nothing in the zoo's traces is priced silently: every TorchScript trace of a zoo model that a
host run measured (data/models/NAME.PRECISION.pt, the rows of validation/h100/2026-11-25r/eager.json
that name it) is predicted with `--strict` (exit 2 if any op is neither counted nor priced by a
rule) under CUDA graphs and Python eager, at the inputs it ran with."""
import json
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FTAX = os.environ.get("FTAX_BINARY", os.path.join(ROOT, "build", "ftax"))
RUNS = ["validation/h100/2026-11-25r/eager.json"]


def input_names(pt):
    """forward's inputs, from the error a run without shapes gives ('... (inputs: a, b)')."""
    r = subprocess.run([FTAX, "inspect", pt], cwd=ROOT, capture_output=True, text=True)
    m = re.search(r"every input of forward \(([\w, ]+)\)", r.stderr)
    return [n.strip() for n in m.group(1).split(",")] if m else []


class ZooTracesPricedTest(unittest.TestCase):
    def test_every_measured_trace_is_counted_and_priced(self):
        if not os.access(FTAX, os.X_OK):
            self.skipTest(f"no ftax binary at {FTAX}")
        rows = {}
        for run in RUNS:
            with open(os.path.join(ROOT, run)) as f:
                for r in json.load(f)["rows"]:
                    if r.get("source") and os.path.exists(os.path.join(ROOT, r["source"])):
                        rows.setdefault(r["source"], r)
        self.assertGreaterEqual(len(rows), 15)
        if subprocess.run([FTAX, "inspect", next(iter(rows))], cwd=ROOT, capture_output=True,
                          text=True).stderr.find("this build has no TorchScript") >= 0:
            self.skipTest("this build has no TorchScript front end")
        bad = []
        for pt, r in sorted(rows.items()):
            shapes = ["x".join(str(d) for d in x["shape"]) + ":" + x["dtype"] for x in r["inputs"]]
            if len(shapes) > 1:
                names = input_names(pt)
                self.assertEqual(len(names), len(shapes), f"{pt}: inputs {names}")
                shapes = [f"{n}={s}" for n, s in zip(names, shapes)]
            args = [FTAX, "predict", pt, "--profile", "h100", "--framework", "cuda-graph,pytorch-eager",
                    "--precision", r["precision"], "--batch", "1", "--strict", "--format", "json"]
            for s in shapes:
                args += ["--input-shape", s]
            p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
            if p.returncode != 0:
                bad.append(f"{pt}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
        self.assertEqual(bad, [], "\n" + "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
