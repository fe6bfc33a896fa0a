#!/usr/bin/env python3
"""validation/scripts/gauge_reference.py: the bench's quantiles taken as calibrate takes them, the
percentile of a group's median gauge among the bench's readings, rows found in two files
counted once, and model rows grouped by the fixed split and the framework."""
import json
import lzma
import os
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import gauge_reference  # noqa: E402


def row(model, framework, gauge, ms=1.0, batch=1):
    return {"model": model, "framework": framework, "precision": "fp16", "batch": batch,
            "cpu_gauge_us": gauge, "latency_ms": {"median": ms}}


class GaugeReferenceTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, doc, xz=False):
        path = os.path.join(self.dir, name)
        with (lzma.open(path, "wt") if xz else open(path, "w")) as f:
            json.dump(doc, f)

    def test_quantile_and_its_inverse(self):
        v = [5.0, 1.0, 3.0, 2.0, 4.0]  # sorted 1..5: p10 at 1.4, the median 3
        self.assertAlmostEqual(gauge_reference.quantile(v, 0.1), 1.4)
        self.assertAlmostEqual(gauge_reference.quantile(v, 0.5), 3.0)
        self.assertAlmostEqual(gauge_reference.rank(v, 1.4), 0.1)
        self.assertAlmostEqual(gauge_reference.rank(v, 3.5), 0.625)
        self.assertEqual(gauge_reference.rank(v, 0.5), 0.0)
        self.assertEqual(gauge_reference.rank(v, 9.0), 1.0)

    def test_groups_by_split_and_framework_and_counts_a_repeated_row_once(self):
        # Bench gauges 2.0 .. 3.0 in steps of 0.1 (11 readings): p10 2.1, p50 2.5.
        self.write("bench.measurements.json.xz",
                   {"dispatch": [{"framework": "pytorch-eager", "cpu_gauge_us": 2.0 + i / 10} for i in range(11)]
                    + [{"framework": "libtorch-eager", "host_probe_us": 9.0}]}, xz=True)
        eager = [row("cal", "pytorch-eager", 2.1), row("cal", "pytorch-eager", 2.3, batch=8),
                 row("ev", "pytorch-eager", 2.8), row("ev", "torch-compile", 2.5),
                 row("ev", "torch-compile-reduce-overhead", 2.7), row("other", "pytorch-eager", 9.9),
                 row("ev", "torchscript", 9.9)]
        self.write("eager.json", {"rows": eager})
        self.write("eager.json.ev.part.json", {"rows": [eager[2]]})  # a part file repeats a row
        self.write("report.json", {"rows": [row("ev", "pytorch-eager", 9.9)]})  # reports are skipped
        out = gauge_reference.analyse([self.dir], {"cal": "calibration", "ev": "evaluation"})
        got = {(r[4], r[5]): r for r in out}
        self.assertEqual(set(got), {("calibration", "eager"), ("evaluation", "eager"), ("evaluation", "compile")})
        cal = got[("calibration", "eager")]
        self.assertEqual(cal[1], 11)
        self.assertAlmostEqual(cal[2], 2.1)
        self.assertAlmostEqual(cal[3], 2.5)
        self.assertEqual(cal[6], 2)
        self.assertAlmostEqual(cal[7], 2.2)
        self.assertAlmostEqual(cal[9], 0.2)
        ev = got[("evaluation", "eager")]
        self.assertEqual(ev[6], 1)  # the repeated row once
        self.assertAlmostEqual(ev[8], 2.8 / 2.1)
        self.assertAlmostEqual(ev[9], 0.8)
        self.assertAlmostEqual(ev[10], 2.8 / 2.5)
        comp = got[("evaluation", "compile")]
        self.assertEqual(comp[6], 2)
        self.assertAlmostEqual(comp[7], 2.6)

    def test_a_run_without_a_gauged_bench_is_left_out(self):
        self.write("eager.json", {"rows": [row("ev", "pytorch-eager", 2.8)]})
        self.assertEqual(gauge_reference.analyse([self.dir], {"ev": "evaluation"}), [])


if __name__ == "__main__":
    unittest.main()
