#!/usr/bin/env python3
"""Tests of the pooling in scripts/validate_eager.py (no torch needed): a point's row holds the
spread of all its visits' samples, each visit's median, and no samples when it was visited
once; points never measured give no row. Its kernel busy time, and the options it gives each
model's process (--visits within it, --rounds across processes).
    python3 tests/scripts/validate_eager_rounds_test.py
"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import validate_eager  # noqa: E402


def point(host, visits, row=True, probes=(), order=()):
    return {"host": host, "ev": [h / 2 for h in host], "visits": visits, "probes": list(probes),
            "order": list(order),
            "row": {"model": "m", "kernel_ms": 1.0} if row else None}


class PooledRowsTest(unittest.TestCase):
    def test_pools_every_visit(self):
        rows = validate_eager.pooled_rows([point([2.0, 2.1, 2.2, 4.0, 4.1, 4.2], [2.1, 4.1],
                                                 probes=[20.0, 41.0], order=[4, 9])], 2)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertAlmostEqual(r["latency_ms"]["median"], 3.1)
        self.assertEqual(r["latency_ms"]["n"], 6)
        self.assertAlmostEqual(r["latency_ms"]["p10"], 2.05)
        self.assertAlmostEqual(r["latency_ms"]["p90"], 4.15)
        self.assertAlmostEqual(r["event_ms"]["median"], 1.55)
        self.assertAlmostEqual(r["framework_ms_measured"], 2.1)
        self.assertEqual(r["visit_medians_ms"], [2.1, 4.1])
        self.assertEqual(len(r["samples_ms"]), 6)
        self.assertEqual(r["rounds"], 2)
        self.assertEqual(r["visit_probe_us"], [20.0, 41.0])
        self.assertEqual(r["visit_order"], [4, 9])

    def test_probes_only_when_every_visit_has_one(self):
        r = validate_eager.pooled_rows([point([1.0, 2.0], [1.0, 2.0], probes=[20.0])], 2)[0]
        self.assertNotIn("visit_probe_us", r)

    def test_one_round_writes_the_plain_row(self):
        r = validate_eager.pooled_rows([point([3.0, 1.0, 2.0], [2.0])], 1)[0]
        self.assertAlmostEqual(r["latency_ms"]["median"], 2.0)
        self.assertNotIn("samples_ms", r)
        self.assertNotIn("visit_medians_ms", r)
        self.assertNotIn("host_probe_us", r)  # no probe timed

    def test_every_row_keeps_the_host_probe_of_its_visits(self):
        one = validate_eager.pooled_rows([point([3.0], [3.0], probes=[9.6])], 1)[0]
        self.assertAlmostEqual(one["host_probe_us"], 9.6)
        self.assertNotIn("visit_probe_us", one)
        two = validate_eager.pooled_rows([point([1.0, 2.0], [1.0, 2.0], probes=[6.0, 7.0], order=[0, 3])], 2)[0]
        self.assertAlmostEqual(two["host_probe_us"], 6.5)
        self.assertEqual(two["visit_probe_us"], [6.0, 7.0])

    def test_points_without_samples_give_no_row(self):
        rows = validate_eager.pooled_rows([point([], []), point([1.0], [1.0], row=False)], 3)
        self.assertEqual(rows, [])


class BusyTimeTest(unittest.TestCase):
    """A row's kernel_ms is the time at least one kernel ran: kernels one after another add
    up, kernels that overlap count once, in any order."""
    def test_overlaps_count_once(self):
        self.assertEqual(validate_eager.busy_time([(0, 10), (12, 20), (30, 31)]), 19)
        self.assertEqual(validate_eager.busy_time([(5, 30), (0, 10), (8, 12), (40, 50)]), 40)
        self.assertEqual(validate_eager.busy_time([(0, 100), (10, 20)]), 100)
        self.assertEqual(validate_eager.busy_time([]), 0)


class MergeVisitsTest(unittest.TestCase):
    """Rounds across processes (--isolate --rounds R): each process visits a point once and
    writes its samples (--keep-samples); the parent pools a point's visits from all of them."""

    def part_row(self, samples, probe, gauge, kernels=False):
        pt = point(samples, [sorted(samples)[len(samples) // 2]], probes=[probe])
        pt["gauges"] = [gauge]
        pt["row"] = {"model": "m", "precision": "fp16", "batch": 8, "framework": "pytorch-eager"}
        if kernels:
            pt["row"].update({"kernel_ms": 1.0, "kernels": {"k": [1, 1000.0]}})
        return validate_eager.pooled_rows([pt], 1, keep_samples=True)[0]

    def test_a_visit_row_carries_its_samples(self):
        r = self.part_row([2.0, 2.2, 2.1], 20.0, 3.0)
        self.assertEqual(r["samples_ms"], [2.0, 2.2, 2.1])
        self.assertEqual(r["event_samples_ms"], [1.0, 1.1, 1.05])
        self.assertEqual(r["visit_probe_us"], [20.0])
        self.assertEqual(r["visit_gauge_us"], [3.0])
        self.assertNotIn("rounds", r)

    def test_visits_of_several_processes_pool_into_one_row(self):
        points = {}
        visit = validate_eager.merge_visits(points, [self.part_row([2.0, 2.1, 2.2], 20.0, 3.0, kernels=True)], 0)
        visit = validate_eager.merge_visits(points, [self.part_row([4.0, 4.1, 4.2], 41.0, 6.0)], visit)
        self.assertEqual(visit, 2)
        rows = validate_eager.pooled_rows(list(points.values()), 2)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["latency_ms"]["n"], 6)
        self.assertAlmostEqual(r["latency_ms"]["median"], 3.1)
        self.assertEqual(r["visit_medians_ms"], [2.1, 4.1])
        self.assertEqual(r["visit_probe_us"], [20.0, 41.0])
        self.assertEqual(r["visit_order"], [0, 1])
        self.assertAlmostEqual(r["cpu_gauge_us"], 4.5)
        self.assertEqual(r["rounds"], 2)
        # the kernel fields are the first process's (the one that made the kernel pass)
        self.assertEqual(r["kernels"], {"k": [1, 1000.0]})
        self.assertAlmostEqual(r["framework_ms_measured"], 2.1)
        self.assertNotIn("event_samples_ms", r)

    def test_a_point_of_another_batch_is_its_own_row(self):
        points = {}
        a = self.part_row([2.0], 20.0, 3.0)
        b = dict(self.part_row([5.0], 20.0, 3.0), batch=1)
        validate_eager.merge_visits(points, [a, b], 0)
        self.assertEqual(len(validate_eager.pooled_rows(list(points.values()), 2)), 2)


class ChildProcessOptionsTest(unittest.TestCase):
    ARGV = ["--models", "a,b", "--budget-s", "0.3", "--rounds", "2", "--visits", "3",
            "--compile", "default", "--kernels"]

    def test_one_round_passes_every_option_through(self):
        self.assertEqual(validate_eager.child_argv(self.ARGV, 1, 0.3), self.ARGV)

    def test_rounds_across_processes_split_the_budget_and_keep_the_visits(self):
        argv = validate_eager.child_argv(self.ARGV, 2, 0.3)
        self.assertEqual(argv[:6], ["--models", "a,b", "--visits", "3", "--compile", "default"])
        self.assertEqual(argv[6:10], ["--rounds", "1", "--budget-s", repr(0.15)])
        self.assertIn("--keep-samples", argv)
        self.assertNotIn("--kernels", argv)  # the parent adds it for the first round only
        self.assertEqual(argv.count("--rounds"), 1)

    def test_visits_multiply_the_rounds_of_a_process(self):
        self.assertEqual(validate_eager.in_process_rounds(1, 3), 3)
        self.assertEqual(validate_eager.in_process_rounds(2, 3), 6)
        self.assertEqual(validate_eager.in_process_rounds(0, 0), 1)


class FoldPartsTest(unittest.TestCase):
    """A run killed in the middle of a model (a campaign's deadline) leaves that model's rows in
    its part file: --fold-parts keeps them."""

    def row(self, model, batch, framework="pytorch-eager"):
        return {"model": model, "precision": "fp16", "batch": batch, "framework": framework,
                "latency_ms": {"median": 1.0 + batch}}

    def test_folds_the_rows_of_an_interrupted_model_and_keeps_what_was_merged(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "validation_eager.json")
            with open(out, "w") as f:
                json.dump({"schema_version": 1, "kind": "ftax-validation-measurements",
                           "rows": [self.row("a", 1)], "failures": []}, f)
            with open(out + ".b.part.json", "w") as f:
                json.dump({"rows": [self.row("b", 1), self.row("b", 8), self.row("a", 1)],
                           "failures": [{"model": "b", "error": "graph capture failed"}],
                           "host": {"gpu": "H200"}}, f)
            with open(out + ".c.part.json", "w") as f:
                f.write("{\"rows\": [")  # cut off while it was written
            self.assertEqual(validate_eager.fold_parts(out), 2)
            doc = json.load(open(out))
            self.assertEqual([(r["model"], r["batch"]) for r in doc["rows"]], [("a", 1), ("b", 1), ("b", 8)])
            self.assertEqual(doc["host"], {"gpu": "H200"})
            errors = [(f["model"], f["error"]) for f in doc["failures"]]
            self.assertIn(("b", "graph capture failed"), errors)
            self.assertTrue(any(m == "b" and "interrupted" in e and "2 row(s)" in e for m, e in errors))
            self.assertFalse(os.path.exists(out + ".b.part.json"))
            self.assertTrue(os.path.exists(out + ".c.part.json"))  # unreadable: left for a person

    def test_an_interrupted_first_model_still_gives_a_result_file(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "validation_eager.json")
            self.assertEqual(validate_eager.fold_parts(out), 0)  # nothing to fold: no file made
            self.assertFalse(os.path.exists(out))
            with open(out + ".resnet101.part.json", "w") as f:
                json.dump({"rows": [self.row("resnet101", 1, "torch-compile")], "failures": []}, f)
            self.assertEqual(validate_eager.fold_parts(out), 1)
            doc = json.load(open(out))
            self.assertEqual(doc["kind"], "ftax-validation-measurements")
            self.assertEqual(doc["rows"][0]["framework"], "torch-compile")


if __name__ == "__main__":
    unittest.main()
