#!/usr/bin/env python3
"""Tests of validation/scripts/drift_over_time.py: a host slow in the second half of a run shows in the
CPU-bound stretches and not in the GPU-bound ones; files not measured in rounds are refused
with a message naming them.
    python3 tests/scripts/drift_over_time_test.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "validation", "scripts", "drift_over_time.py")


def row(batch, kernel_ms, medians, order):
    pooled = sorted(medians)[len(medians) // 2]
    return {"model": "m", "framework": "torchscript", "precision": "fp16", "batch": batch,
            "kernel_ms": kernel_ms, "latency_ms": {"median": pooled},
            "visit_medians_ms": medians, "visit_order": order}


class DriftOverTimeTest(unittest.TestCase):
    def run_script(self, doc, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        self.addCleanup(os.unlink, f.name)
        return subprocess.run([sys.executable, SCRIPT, f.name, *args], capture_output=True, text=True), f.name

    def test_slow_second_half_shows_in_cpu_bound_points_only(self):
        # Visits 0-3 in the first half, 4-7 in the second, where host time is 1.5x.
        rows = [row(1, 0.1, [2.0, 3.0, 2.0], [0, 4, 2]), row(2, 0.1, [2.0, 3.0, 2.0], [1, 5, 3]),
                row(64, 9.0, [10.0, 10.0], [6, 7])]
        res, _ = self.run_script({"rows": rows}, "--bins", "2")
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = {l.split("|")[2].strip(): [c.strip() for c in l.split("|")[4:6]]
                 for l in res.stdout.splitlines() if "torchscript," in l}
        self.assertEqual(lines["torchscript, CPU-bound"], ["1.00", "1.50"])
        self.assertEqual(lines["torchscript, GPU-bound"], ["–", "1.00"])

    @unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
    def test_plot_is_written(self):
        rows = [row(1, 0.1, [2.0, 3.0], [0, 2]), row(64, 9.0, [10.0, 10.0], [1, 3])]
        out = os.path.join(tempfile.mkdtemp(), "drift.png")
        res, _ = self.run_script({"rows": rows}, "--plot", out)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertGreater(os.path.getsize(out), 1000)
        self.assertFalse(os.path.exists(out + ".gp"))

    def test_refuses_files_without_rounds(self):
        res, name = self.run_script({"rows": [{"framework": "torchscript", "visit_medians_ms": [1.0]}]})
        self.assertNotEqual(res.returncode, 0)
        self.assertIn(os.path.basename(name), res.stderr)
        self.assertIn("not measured in rounds", res.stderr)


if __name__ == "__main__":
    unittest.main()
