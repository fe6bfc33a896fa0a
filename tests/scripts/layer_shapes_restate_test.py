#!/usr/bin/env python3
"""scripts/layer_shapes.py's reading of a bench's layer rows (`layer_work`, used by --restate):
the work fields src/calibrate/layer_shapes.cc writes, on hand-computed cases, and --restate
rewriting an older bench's odd-position 1x1 rows as one GEMM per image."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import layer_shapes  # noqa: E402


class LayerWorkTest(unittest.TestCase):
    def test_an_odd_position_pointwise_layer_is_one_gemm_per_image(self):
        cls, w = layer_shapes.layer_work("layer conv n8 192->64 17x17 k1x1 s1x1 p0x0 g1", 2)
        self.assertEqual(cls, "conv")
        self.assertEqual(w["variant"], "pointwise_odd")
        self.assertEqual((w["m"], w["n"], w["k"], w["batch"]), (17 * 17, 64, 192, 8))
        self.assertEqual(w["flops"], 2.0 * 8 * 17 * 17 * 64 * 192)
        self.assertEqual(w["bytes"], float((8 * 192 * 289 + 64 * 192 + 8 * 64 * 289) * 2))

    def test_a_channels_last_grouped_layer_of_an_uneven_width_is_its_own_variant(self):
        _, w = layer_shapes.layer_work("layer conv n1 384->384 14x14 k3x3 s1x1 p1x1 g16 nhwc w-nhwc", 2)
        self.assertEqual(w["variant"], "nhwc_grouped_non_pow2")
        self.assertEqual((w["m"], w["n"], w["k"], w["batch"]), (196, 24, 216, 16))
        _, w = layer_shapes.layer_work("layer conv n1 512->512 14x14 k3x3 s1x1 p1x1 g16 nhwc w-nhwc", 2)
        self.assertEqual(w["variant"], "nhwc")

    def test_an_even_position_pointwise_layer_is_one_gemm_over_all_images(self):
        cls, w = layer_shapes.layer_work("layer conv n8 1024->256 14x14 k1x1 s1x1 p0x0 g1", 2)
        self.assertEqual(w["variant"], "pointwise")
        self.assertEqual((w["m"], w["n"], w["k"], w["batch"]), (8 * 196, 256, 1024, 1))

    def test_a_single_position_stays_pointwise(self):
        cls, w = layer_shapes.layer_work("layer conv n8 1248->52 1x1 k1x1 s1x1 p0x0 g1", 2)
        self.assertEqual(w["variant"], "pointwise")
        self.assertEqual((w["m"], w["batch"]), (8, 1))


class RestateTest(unittest.TestCase):
    def restate(self, rows):
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "in.json"), os.path.join(d, "out.json")
            json.dump({"kernels": rows}, open(src, "w"))
            r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts/layer_shapes.py"), "--restate", src, dst],
                               capture_output=True, text=True)
            return r, (json.load(open(dst)) if r.returncode == 0 else None)

    def test_an_older_benchs_odd_rows_are_restated_per_image(self):
        _, w = layer_shapes.layer_work("layer conv n8 192->64 17x17 k1x1 s1x1 p0x0 g1", 2)
        old = {"label": "layer conv n8 192->64 17x17 k1x1 s1x1 p0x0 g1", "class": "conv", "dtype": "fp16",
               "flops": w["flops"], "bytes": w["bytes"], "m": 8 * 289, "n": 64, "k": 192, "batch": 1,
               "variant": "pointwise"}
        r, doc = self.restate([old])
        self.assertEqual(r.returncode, 0, r.stderr)
        row = doc["kernels"][0]
        self.assertEqual((row["m"], row["batch"], row["variant"]), (289, 8, "pointwise_odd"))
        self.assertIn("1 changed", doc["notes"][-1])

    def test_a_row_whose_flops_disagree_with_its_label_stops_it(self):
        bad = {"label": "layer conv n8 192->64 17x17 k1x1 s1x1 p0x0 g1", "class": "conv", "dtype": "fp16",
               "flops": 1.0, "bytes": 1.0, "m": 8 * 289, "n": 64, "k": 192, "batch": 1}
        r, _ = self.restate([bad])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("differ", r.stderr)


if __name__ == "__main__":
    unittest.main()
