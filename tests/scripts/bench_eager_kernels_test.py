#!/usr/bin/env python3
"""Tests of how scripts/bench_eager.py attributes the GPU records of its one profiled pass to
the op chains that launched them (no torch needed): each record goes to the call range it
starts in; a chain whose calls saw different counts keeps the median count and no times.
    python3 tests/scripts/bench_eager_kernels_test.py
"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_eager  # noqa: E402


class KernelsPerRangeTest(unittest.TestCase):
    def test_records_go_to_the_call_they_start_in(self):
        ranges = [(0, 100, "conv", 0), (100, 200, "conv", 1), (200, 300, "view", 0), (300, 400, "view", 1)]
        kernels = [(10, 20), (30, 50), (110, 120), (130, 150)]  # two per conv call, none for views
        out = bench_eager.kernels_per_range(ranges, kernels)
        self.assertEqual(out["conv"][0], 2.0)
        self.assertEqual(out["conv"][1], 30)  # 10 + 20 per call
        self.assertEqual(out["conv"][2], 40)  # first start to last end
        self.assertEqual(out["view"], (0.0, None, None))

    def test_unequal_calls_keep_the_median_count_and_no_times(self):
        ranges = [(0, 10, "add", 0), (10, 20, "add", 1), (20, 30, "add", 2)]
        kernels = [(1, 2), (11, 12), (13, 14), (21, 22)]
        self.assertEqual(bench_eager.kernels_per_range(ranges, kernels)["add"], (1.0, None, None))

    def test_records_before_the_first_range_are_left_out(self):
        ranges = [(100, 200, "mm", 0)]
        kernels = [(50, 60), (150, 160)]  # a warm-up record outside every range
        self.assertEqual(bench_eager.kernels_per_range(ranges, kernels)["mm"][0], 1.0)

    def test_torchscript_skips_fused_elementwise_chains(self):
        # NNC inlines a chain of GELUs into one expression that never finishes compiling
        self.assertIn("gelu", bench_eager.TS_FUSED_OPS)
        self.assertNotIn("conv", bench_eager.TS_FUSED_OPS)
        self.assertNotIn("batch_norm+relu", bench_eager.TS_FUSED_OPS)


if __name__ == "__main__":
    unittest.main()
