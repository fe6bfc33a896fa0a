#!/usr/bin/env python3
"""Tests of validation/scripts/merge_passes.py: per point the pass with the lowest median is
kept, every pass's median stays in the row, points of only some passes survive with the right
pass index, and unreadable input stops the merge with a message naming the file.

Runs the script as a subprocess, as validation/scripts/gpu_campaign.sh users do:
    python3 tests/scripts/merge_passes_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "validation", "scripts", "merge_passes.py")


def row(model, median, batch=1, seq=128, precision="fp16", framework="pytorch-eager", **extra):
    r = {"model": model, "framework": framework, "precision": precision, "batch": batch,
         "seq": seq, "latency_ms": {"median": median, "p10": median * 0.95, "p90": median * 1.1}}
    r.update(extra)
    return r


class MergePassesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, doc):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def run_merge(self, *inputs, out=None):
        out = out or os.path.join(self.tmp.name, "merged.json")
        p = subprocess.run([sys.executable, SCRIPT, out, *inputs], capture_output=True,
                           text=True, timeout=60)
        return p, out

    def merge(self, *inputs):
        p, out = self.run_merge(*inputs)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return json.load(f)

    @staticmethod
    def by_point(doc):
        return {(r["model"], r["precision"], r["batch"]): r for r in doc["rows"]}

    def test_a_faster_pass_without_kernels_takes_them_from_the_pass_that_recorded_them(self):
        # Pass 1 recorded kernels (1.5 ms of kernel time); pass 2 (--no-kernels) timed faster.
        kern = {"kernels_per_iter": 100.0, "kernel_ms": 1.5, "aten_ops_per_iter": 60.0,
                "kernels": {"k": [100.0, 1500.0]}}
        p1 = self.write("p1.json", {"rows": [row("resnet", 6.0, seq=None, framework_ms_measured=4.5, **kern),
                                             row("vit", 3.0, seq=None, **kern)]})
        p2 = self.write("p2.json", {"rows": [row("resnet", 4.0, seq=None, kernels_pending=True),
                                             row("vit", 3.3, seq=None, kernels_pending=True)]})
        rows = self.by_point(self.merge(p1, p2))
        r = rows[("resnet", "fp16", 1)]
        self.assertEqual(r["latency_ms"]["median"], 4.0)
        self.assertEqual(r["pass_used"], 1)
        self.assertNotIn("kernels_pending", r)
        self.assertEqual(r["kernels_from_pass"], 0)
        self.assertEqual(r["kernels_per_iter"], 100.0)
        self.assertAlmostEqual(r["framework_ms_measured"], 2.5)  # 4.0 - 1.5, not pass 1's 4.5
        v = rows[("vit", "fp16", 1)]  # pass 1 won: its own row, kernels and all
        self.assertEqual(v["pass_used"], 0)
        self.assertNotIn("kernels_from_pass", v)
        self.assertNotIn("kernels_pending", v)

    def test_keeps_lower_median_pass_per_point(self):
        # Pass 1 wins bert b1 and resnet; pass 2 wins bert b8. Rows carry a marker so the
        # whole kept row (not only its median) can be traced to its pass.
        p1 = self.write("p1.json", {"rows": [
            row("bert", 2.0, batch=1, marker="p1"),
            row("bert", 9.0, batch=8, marker="p1"),
            row("resnet", 5.0, seq=None, marker="p1")]})
        p2 = self.write("p2.json", {"rows": [
            row("resnet", 6.5, seq=None, marker="p2"),
            row("bert", 2.4, batch=1, marker="p2"),
            row("bert", 7.5, batch=8, marker="p2")]})
        doc = self.merge(p1, p2)
        self.assertEqual(doc["merged_from"], [p1, p2])
        self.assertEqual(len(doc["rows"]), 3)
        rows = self.by_point(doc)

        b1 = rows[("bert", "fp16", 1)]
        self.assertEqual(b1["latency_ms"]["median"], 2.0)
        self.assertEqual(b1["marker"], "p1")
        self.assertEqual(b1["pass_used"], 0)
        self.assertEqual(b1["pass_medians_ms"], [2.0, 2.4])

        b8 = rows[("bert", "fp16", 8)]
        self.assertEqual(b8["latency_ms"]["median"], 7.5)
        self.assertEqual(b8["marker"], "p2")
        self.assertEqual(b8["pass_used"], 1)
        self.assertEqual(doc["merged_from"][b8["pass_used"]], p2)
        self.assertEqual(b8["pass_medians_ms"], [9.0, 7.5])
        # The kept row's quantiles come from the same pass as its median.
        self.assertAlmostEqual(b8["latency_ms"]["p90"], 7.5 * 1.1)

        rn = rows[("resnet", "fp16", 1)]
        self.assertEqual(rn["marker"], "p1")
        self.assertEqual(rn["pass_used"], 0)
        self.assertEqual(rn["pass_medians_ms"], [5.0, 6.5])

    def test_three_passes_pick_the_minimum_wherever_it_is(self):
        paths = [self.write(f"p{i}.json", {"rows": [row("gpt2", m)]})
                 for i, m in enumerate([4.0, 3.1, 3.6])]
        doc = self.merge(*paths)
        (r,) = doc["rows"]
        self.assertEqual(r["pass_used"], 1)
        self.assertEqual(r["latency_ms"]["median"], 3.1)
        self.assertEqual(r["pass_medians_ms"], [4.0, 3.1, 3.6])

    def test_points_are_told_apart_by_every_key_field(self):
        # Same model, but precision, batch, seq or framework differ: five distinct points,
        # none of which may be merged with another.
        p1 = self.write("p1.json", {"rows": [
            row("bert", 1.0), row("bert", 2.0, precision="fp32"), row("bert", 3.0, batch=4),
            row("bert", 4.0, seq=384), row("bert", 5.0, framework="torchscript")]})
        p2 = self.write("p2.json", {"rows": [row("bert", 0.5, precision="fp32")]})
        doc = self.merge(p1, p2)
        self.assertEqual(len(doc["rows"]), 5)
        medians = sorted(r["latency_ms"]["median"] for r in doc["rows"])
        self.assertEqual(medians, [0.5, 1.0, 3.0, 4.0, 5.0])
        fp32 = [r for r in doc["rows"] if r["precision"] == "fp32"][0]
        self.assertEqual(fp32["pass_used"], 1)
        self.assertEqual(fp32["pass_medians_ms"], [2.0, 0.5])

    def test_point_of_only_one_pass_is_kept_with_its_pass_index(self):
        # "only2" exists in pass 2 only (e.g. pass 1 was cut short by a time limit); "only1"
        # exists in pass 1 only. Their pass_used must point at the file that holds them.
        p1 = self.write("p1.json", {"rows": [row("shared", 3.0), row("only1", 8.0)]})
        p2 = self.write("p2.json", {"rows": [row("only2", 11.0), row("shared", 2.0)]})
        doc = self.merge(p1, p2)
        rows = {r["model"]: r for r in doc["rows"]}
        self.assertEqual(set(rows), {"shared", "only1", "only2"})

        self.assertEqual(doc["merged_from"][rows["only1"]["pass_used"]], p1)
        self.assertEqual(rows["only1"]["pass_medians_ms"], [8.0, None])
        self.assertEqual(rows["only1"]["latency_ms"]["median"], 8.0)

        self.assertEqual(rows["only2"]["pass_used"], 1)
        self.assertEqual(doc["merged_from"][rows["only2"]["pass_used"]], p2)
        # One entry per pass, aligned with merged_from; null where the pass has no such point.
        self.assertEqual(rows["only2"]["pass_medians_ms"], [None, 11.0])
        self.assertEqual(rows["only2"]["latency_ms"]["median"], 11.0)

        self.assertEqual(rows["shared"]["pass_used"], 1)
        self.assertEqual(rows["shared"]["pass_medians_ms"], [3.0, 2.0])

    def test_rows_without_a_numeric_median_do_not_count(self):
        # A row whose median is missing or not a number must not win or add a median.
        p1 = self.write("p1.json", {"rows": [
            {"model": "bert", "framework": "pytorch-eager", "precision": "fp16", "batch": 1,
             "seq": 128, "latency_ms": {"median": "n/a"}}]})
        p2 = self.write("p2.json", {"rows": [row("bert", 4.0)]})
        doc = self.merge(p1, p2)
        (r,) = doc["rows"]
        self.assertEqual(r["pass_used"], 1)
        self.assertEqual(r["pass_medians_ms"], [None, 4.0])
        # ... and the dropped row is listed with its pass file, not lost silently.
        self.assertEqual(len(doc["failures"]), 1)
        self.assertEqual(doc["failures"][0]["pass_file"], p1)
        self.assertIn("latency_ms.median", doc["failures"][0]["error"])

    def test_malformed_latency_and_zero_median_are_failures_not_crashes(self):
        p1 = self.write("p1.json", {"rows": [
            {"model": "bert", "framework": "pytorch-eager", "precision": "fp16", "batch": 1,
             "seq": 128, "latency_ms": None},
            {"model": "bert", "framework": "pytorch-eager", "precision": "fp16", "batch": 2,
             "seq": 128, "latency_ms": {"median": 0}},
            {"model": "bert", "framework": "pytorch-eager", "precision": "fp16", "batch": 4,
             "seq": 128, "latency_ms": {"median": True}}]})
        p2 = self.write("p2.json", {"rows": [row("bert", 4.0)]})
        doc = self.merge(p1, p2)
        self.assertEqual(len(doc["rows"]), 1)
        self.assertEqual(len(doc["failures"]), 3)

    def test_failures_are_kept_with_their_pass_file(self):
        p1 = self.write("p1.json", {"rows": [row("bert", 1.0)],
                                    "failures": [{"model": "big", "error": "OOM"}]})
        p2 = self.write("p2.json", {"rows": [row("bert", 1.1)],
                                    "failures": [{"model": "huge", "error": "OOM"}]})
        doc = self.merge(p1, p2)
        self.assertEqual([(f["model"], f["pass_file"]) for f in doc["failures"]],
                         [("big", p1), ("huge", p2)])
        self.assertIn("lowest median", doc["merge_rule"])

    def test_missing_file_fails_and_names_it(self):
        p1 = self.write("p1.json", {"rows": [row("bert", 1.0)]})
        missing = os.path.join(self.tmp.name, "no-such-pass.json")
        p, out = self.run_merge(p1, missing)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(missing, p.stderr)
        self.assertFalse(os.path.exists(out), "a failed merge must not write its output")

    def test_file_without_rows_fails_and_names_it(self):
        p1 = self.write("p1.json", {"rows": [row("bert", 1.0)]})
        for name, doc in [("norows.json", {"failures": []}),
                          ("rowsobj.json", {"rows": {"bert": 1.0}}),
                          ("toplist.json", [row("bert", 1.0)])]:
            with self.subTest(name=name):
                bad = self.write(name, doc)
                p, out = self.run_merge(p1, bad)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(bad, p.stderr)
                self.assertIn("rows", p.stderr)
                self.assertFalse(os.path.exists(out))

    def test_invalid_json_fails_and_names_it(self):
        bad = self.write("truncated.json", '{"rows": [')
        p1 = self.write("p1.json", {"rows": [row("bert", 1.0)]})
        p, _ = self.run_merge(bad, p1)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(bad, p.stderr)

    def test_too_few_arguments_prints_usage(self):
        p1 = self.write("p1.json", {"rows": [row("bert", 1.0)]})
        p = subprocess.run([sys.executable, SCRIPT, p1], capture_output=True, text=True,
                           timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("merge_passes.py OUT.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
