#!/usr/bin/env python3
"""Tests of how scripts/bench_eager.py keeps what it measured when it is cut short (no torch
needed): its file is rewritten after every section with the sections done; --resume keeps
the rows of finished sections only; each row's section is named as `ftax bench` names it
(tests/calibrate/python_bench_sections_test.cc asserts the same rows on the C++ side).
    python3 tests/scripts/bench_eager_sections_test.py
"""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_eager  # noqa: E402

PY = {"version": "3", "torch": "2"}


class SectionOfTest(unittest.TestCase):
    def test_each_row_kind_has_its_section(self):
        s = bench_eager.section_of
        self.assertEqual(s({"framework": "pytorch-eager", "mode": "inference", "class": "kernel"}), "modes:inference")
        self.assertEqual(s({"framework": "pytorch-eager-no-grad", "mode": "no_grad"}), "modes:no_grad")
        self.assertEqual(s({"framework": "pytorch-eager-no-grad"}), "modes:no_grad")
        self.assertEqual(s({"framework": "pytorch-eager", "mode": "inference", "op": "conv"}), "ops:pytorch-eager")
        self.assertEqual(s({"framework": "torchscript", "mode": "no_grad", "op": "linear"}), "ops:torchscript")
        # an op mix ends its framework's per-op section (the C++ bench keeps it with them)
        self.assertEqual(s({"framework": "torchscript", "mode": "no_grad", "mix_of": {"conv": 3}}), "ops:torchscript")
        self.assertEqual(s({"framework": "pytorch-eager", "mode": "inference", "mix_of": {"conv": 3}}),
                         "ops:pytorch-eager")
        self.assertEqual(s({"framework": "torch-compile", "class": "kernel"}), "compile:default")
        self.assertEqual(s({"framework": "torch-compile", "op": "conv"}), "compile:default")
        self.assertEqual(s({"framework": "torch-compile-reduce-overhead"}), "compile:reduce-overhead")
        self.assertEqual(s({"framework": "torchscript", "class": "kernel"}), "")


class ResumeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "part.json")

    def tearDown(self):
        self.dir.cleanup()

    def test_a_cut_run_keeps_its_finished_sections(self):
        eager = {"framework": "pytorch-eager", "mode": "inference", "class": "kernel", "n_ops": 1}
        ops = {"framework": "pytorch-eager", "mode": "inference", "op": "conv", "n_ops": 8}
        bench_eager.save(self.path, PY, [eager], ["modes:inference"], complete=False)
        with open(self.path) as f:
            doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["sections_done"], ["modes:inference"])
        self.assertFalse(os.path.exists(self.path + ".tmp"))
        # a row of a section not marked done (it cannot be trusted whole) is dropped on resume
        bench_eager.save(self.path, PY, [eager, ops], ["modes:inference"], complete=False)
        rows, done = bench_eager.resumed_sections(self.path)
        self.assertEqual(done, ["modes:inference"])
        self.assertEqual(rows, [eager])

    def test_nothing_to_resume(self):
        self.assertEqual(bench_eager.resumed_sections(self.path), ([], []))
        with open(self.path, "w") as f:
            f.write('{"dispatch": [')  # cut mid-write by something other than save()
        self.assertEqual(bench_eager.resumed_sections(self.path), ([], []))

    def test_compiled_library_ops_are_library_keys(self):
        # each is a key the lowering gives a library call (src/predictor/lowering_rules.cc)
        self.assertIn("conv", bench_eager.COMPILED_LIBRARY_OPS)
        self.assertNotIn("layer_norm", bench_eager.COMPILED_LIBRARY_OPS)  # Inductor generates it
        # the convolution in the eager chains' four geometries, each an "op": "conv" row
        geometries = [k for k in bench_eager.COMPILED_LIBRARY_OPS if k.startswith("conv:")]
        self.assertEqual(sorted(geometries), ["conv:1x1", "conv:256c14", "conv:dw"])
        self.assertEqual({k.split(":")[0] for k in bench_eager.COMPILED_LIBRARY_OPS},
                         {"conv", "linear", "matmul", "scaled_dot_product_attention"})


if __name__ == "__main__":
    unittest.main()
