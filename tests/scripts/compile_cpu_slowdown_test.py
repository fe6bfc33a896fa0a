#!/usr/bin/env python3
"""validation/scripts/compile_cpu_slowdown.py's windows (no torch needed): the medians per window
of a hand-made series, and host run cd's stored table is what the script makes of its stored
series (validation/h200/2026-11-28cd/slowdown.jsonl -> slowdown.txt)."""
import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import compile_cpu_slowdown  # noqa: E402

RUN = os.path.join(ROOT, "validation", "h200", "2026-11-28cd")


class WindowsTest(unittest.TestCase):
    def test_medians_per_window(self):
        # (seconds since the event, gauge us, eager ms)
        series = [(-3.0, 6.0, 3.0), (-1.0, 8.0, 5.0), (0.0, 7.0, 4.0), (14.9, 9.0, 6.0), (15.0, 5.0, 2.0),
                  (44.0, 7.0, 3.0), (50.0, 100.0, 100.0)]
        w = compile_cpu_slowdown.windows(series)
        self.assertEqual(w["before"], (7.0, 4.0))
        self.assertEqual(w["0-15 s"], (8.0, 5.0))
        self.assertEqual(w["15-45 s"], (6.0, 2.5))  # 50 s lies past the last window

    def test_a_window_without_samples_is_left_out(self):
        self.assertNotIn("15-45 s", compile_cpu_slowdown.windows([(-1.0, 6.0, 3.0), (2.0, 7.0, 3.5)]))

    def test_host_run_cd_table_is_its_series(self):
        rows = [json.loads(line) for line in open(os.path.join(RUN, "slowdown.jsonl")) if line.strip()]
        table = open(os.path.join(RUN, "slowdown.txt")).read()
        self.assertEqual([r["condition"] for r in rows], ["compile", "busy", "threads1"])
        for r in rows:
            w = compile_cpu_slowdown.windows(r["series"])
            gauges = " / ".join(f"{w[k][0]:.2f}" for k in ("before", "0-15 s", "15-45 s"))
            self.assertIn(gauges, table, r["condition"])


if __name__ == "__main__":
    unittest.main()
