#!/usr/bin/env python3
"""Tests of validation/scripts/op_type_scales.py's fit: rows built from known group weights
give those weights back, the ridge pulls a group no row varies toward the common scale, the
score counts errors against ±15%, and features split a prediction into its groups.
    python3 tests/scripts/op_type_scales_test.py
"""
import os
import random
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import op_type_scales as ots  # noqa: E402


class OpTypeScalesTest(unittest.TestCase):
    def test_known_weights_come_back(self):
        rng = random.Random(3)
        truth = [0.8, 1.1, 1.0, 1.2, 1.5]
        xs = [[rng.uniform(0.1, 2.0) for _ in truth] for _ in range(60)]
        ys = [sum(a * b for a, b in zip(x, truth)) for x in xs]
        w, _ = ots.fit(xs, ys, ridge=1e-9)
        for got, want in zip(w, truth):
            self.assertAlmostEqual(got, want, places=6)

    def test_ridge_pulls_an_unseen_group_to_the_common_scale(self):
        # The second group is never present: only the ridge decides its weight.
        xs = [[1.0 + i, 0.0, 0.5] for i in range(10)]
        ys = [2.0 * (x[0] + x[2]) for x in xs]
        w, s0 = ots.fit(xs, ys, ridge=0.5)
        self.assertAlmostEqual(s0, 2.0)
        self.assertAlmostEqual(w[1], s0, places=9)
        self.assertAlmostEqual(w[0], 2.0, places=6)

    def test_score(self):
        med, within = ots.score([[1.0], [1.0], [1.0], [1.0]], [1.0, 1.1, 1.3, 2.0], [1.0])
        self.assertAlmostEqual(within, 0.5)  # errors 0, 9%, 23%, 50%
        self.assertAlmostEqual(med, (0.1 / 1.1 + 0.3 / 1.3) / 2)

    def test_features_split_by_group_and_rest(self):
        f = ots.features(10.0, {"conv": 2.0, "batch_norm": 1.0, "linear": 3.0, "view": 0.5})
        self.assertEqual(f, [3.0, 3.0, 0.0, 0.0, 4.0])


if __name__ == "__main__":
    unittest.main()
