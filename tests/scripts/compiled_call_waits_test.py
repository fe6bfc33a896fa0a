#!/usr/bin/env python3
"""validation/scripts/compiled_call_waits.py: a call split by the compiled graph's entry and exit
marks, and the table by CPU state of a --light run (rounds whose four gauge readings are all
fast or all slow; mixed rounds left out), on hand-made visits and on host run cr's stored run."""
import contextlib
import io
import os
import sys
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


if __name__ == "__main__":
    unittest.main()
