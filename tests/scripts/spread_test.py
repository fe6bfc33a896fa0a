#!/usr/bin/env python3
"""scripts/spread.py, the GPU host's Python copy of src/common/percentile.h, on the hand-computed
cases tests/common/percentile_test.cc holds the C++ one to: the two agree."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import spread  # noqa: E402


class SpreadTest(unittest.TestCase):
    def test_interpolates_between_closest_ranks(self):
        self.assertAlmostEqual(spread.pct([3, 1, 2], 0.1), 1.2, places=12)
        self.assertAlmostEqual(spread.pct([3, 1, 2], 0.5), 2.0, places=12)
        self.assertAlmostEqual(spread.pct([3, 1, 2], 0.9), 2.8, places=12)
        self.assertAlmostEqual(spread.pct([4, 3, 2, 1], 0.1), 1.3, places=12)
        self.assertAlmostEqual(spread.pct([4, 3, 2, 1], 0.5), 2.5, places=12)
        self.assertAlmostEqual(spread.pct([4, 3, 2, 1], 0.9), 3.7, places=12)
        self.assertEqual(spread.pct([5], 0.9), 5)
        self.assertEqual(spread.pct([], 0.5), 0)  # an empty sample, as Percentile gives

    def test_spread_names_its_fields(self):
        s = spread.spread([4, 3, 2, 1])
        self.assertEqual(s["n"], 4)
        self.assertAlmostEqual(s["median"], 2.5, places=12)
        self.assertLessEqual(s["p10"], s["median"])
        self.assertLessEqual(s["median"], s["p90"])


if __name__ == "__main__":
    unittest.main()
