#!/usr/bin/env python3
"""validation/scripts/compiled_call_waits.py: a call split by the compiled graph's entry and exit
marks, the table by CPU state of a --light run (rounds whose four gauge readings are all fast or
all slow; mixed rounds left out), on hand-made visits and on host run cr's stored run, and
--processes: each model in fresh processes, a process that writes nothing recorded as such."""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import compiled_call_waits as waits  # noqa: E402


def visit(rnd, variant, gauges, wall, before=None, inside=None):
    v = {"round": rnd, "variant": variant, "gauge_before_us": gauges[0], "gauge_after_us": gauges[1],
         "wall_median_us": wall}
    if before is not None:
        v.update(before_median_us=before, inside_median_us=inside, after_median_us=wall - before - inside)
    return v


class PartsTest(unittest.TestCase):
    def test_a_call_splits_at_the_first_entry_and_the_last_exit(self):
        marks = [("in", 1.000100), ("out", 1.000900), ("in", 1.000950), ("out", 1.001000)]
        p = waits.parts(1.0, 1.0012, marks)
        self.assertAlmostEqual(p["before"], 100, places=6)
        self.assertAlmostEqual(p["inside"], 900, places=6)
        self.assertAlmostEqual(p["after"], 200, places=6)
        self.assertAlmostEqual(sum(p.values()), 1200, places=6)

    def test_a_call_that_never_entered_the_graph_has_no_parts(self):
        self.assertIsNone(waits.parts(1.0, 1.001, []))
        self.assertIsNone(waits.parts(1.0, 1.001, [("in", 1.0005)]))


class ByStateTest(unittest.TestCase):
    def test_rounds_are_sorted_by_all_four_gauges_and_mixed_ones_left_out(self):
        visits = [
            visit(0, "generated_call", (3.0, 3.1), 2000), visit(0, "compiled_module", (3.2, 3.0), 2600, 250, 2300),
            visit(1, "generated_call", (3.1, 3.0), 2100), visit(1, "compiled_module", (3.0, 3.3), 2700, 260, 2380),
            visit(2, "generated_call", (5.5, 5.9), 3600), visit(2, "compiled_module", (5.2, 6.0), 4300, 350, 3900),
            # a switch in the middle of the round: neither state
            visit(3, "generated_call", (3.0, 5.8), 9999), visit(3, "compiled_module", (5.8, 5.9), 9999, 999, 9999),
        ]
        t = waits.by_state(visits)
        self.assertEqual(sorted(t), ["fast", "slow"])
        self.assertEqual(t["fast"]["rounds"], 2)
        self.assertEqual(t["fast"]["generated_call_us"], 2050)
        self.assertEqual(t["fast"]["outside_us"], 2650 - 2050)
        self.assertEqual(t["fast"]["inside_around_call_us"], 2340 - 2050)
        self.assertEqual(t["slow"], {"rounds": 1, "generated_call_us": 3600, "compiled_module_us": 4300,
                                     "outside_us": 700, "before_us": 350, "inside_around_call_us": 300})

    def test_a_round_without_the_marks_is_left_out(self):
        visits = [visit(0, "generated_call", (3.0, 3.0), 2000), visit(0, "compiled_module", (3.0, 3.0), 2600)]
        self.assertEqual(waits.by_state(visits), {})

    def test_host_run_cr_prints_the_table_its_record_quotes(self):
        path = os.path.join(ROOT, "validation", "h200", "2026-11-28cr", "compiled-call-waits.json.xz")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            waits.summarize(path)
        out = buf.getvalue()
        self.assertIn("| convnext_tiny | fast, 5 | 2,103 | 2,722 | 620 | 248 | 268 |", out)
        with open(os.path.join(ROOT, "validation", "README.md"), encoding="utf-8") as f:
            record = f.read()
        for line in out.splitlines()[2:]:
            self.assertIn(line, record)


class ProcessesTest(unittest.TestCase):
    def test_a_child_measures_one_model_as_asked(self):
        a = argparse.Namespace(batch=8, rounds=30, calls=15, light=True)
        argv = waits.child_argv("/x/waits.py", "/t/0.json", "convnext_small", a)
        self.assertEqual(argv[1:], ["/x/waits.py", "--out", "/t/0.json", "--models", "convnext_small",
                                    "--batch", "8", "--rounds", "30", "--calls", "15", "--light"])
        a.light = False
        self.assertNotIn("--light", waits.child_argv("/x/waits.py", "/t/0.json", "m", a))

    def test_a_childs_rows_carry_its_process_and_a_silent_child_is_recorded(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "0.json")
            with open(path, "w") as f:
                json.dump({"rows": [{"model": "resnet50", "batch": 1, "visits": []}]}, f)
            self.assertEqual(waits.child_rows(path, "resnet50", 1, 3, "exit status 0"),
                             [{"model": "resnet50", "batch": 1, "visits": [], "process": 3}])
            rows = waits.child_rows(os.path.join(tmp, "none.json"), "resnet50", 1, 2, "past its 300 s")
            self.assertEqual(len(rows), 1)
            self.assertEqual(rows[0]["process"], 2)
            self.assertIn("process 2 wrote no rows (past its 300 s", rows[0]["error"])

    def test_every_process_leaves_a_row_where_no_model_can_run(self):
        # Here no GPU (or no torch) can measure: each fresh process records its failure as a
        # row of its own, and the parent writes them all, one per process.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "waits.json")
            script = os.path.join(ROOT, "validation", "scripts", "compiled_call_waits.py")
            run = subprocess.run([sys.executable, script, "--out", out, "--models", "no_such_model",
                                  "--processes", "2", "--process-timeout", "120"],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            self.assertIn("2 of 2: no_such_model, process 2 of 2", run.stdout)
            with open(out) as f:
                rows = json.load(f)["rows"]
            self.assertEqual([r["process"] for r in rows], [1, 2])
            self.assertTrue(all(r["model"] == "no_such_model" and "error" in r for r in rows), rows)


if __name__ == "__main__":
    unittest.main()
