#!/usr/bin/env python3
"""docs/validation.md's per-model block is what validation/scripts/zoo_report.py prints for the host run it
names (never edited by hand), and a stale block is caught."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "validation", "scripts", "validation_summary.py")


class ValidationSummaryTest(unittest.TestCase):
    def run_check(self, path):
        return subprocess.run([sys.executable, SCRIPT, "--check", path], capture_output=True, text=True)

    def test_docs_block_is_current(self):
        r = self.run_check(os.path.join(ROOT, "docs", "validation.md"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_edited_block_is_stale(self):
        text = open(os.path.join(ROOT, "docs", "validation.md")).read()
        edited = re.sub(r"(\| cuda-graph[a-z-]* \| )(\d+)", lambda m: m.group(1) + str(int(m.group(2)) + 1), text,
                        count=1)
        self.assertNotEqual(text, edited, "the block has no cuda-graph row to edit")
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(edited)
        try:
            r = self.run_check(f.name)
            self.assertEqual(r.returncode, 1)
            self.assertIn("stale", r.stderr)
        finally:
            os.remove(f.name)


if __name__ == "__main__":
    unittest.main()
