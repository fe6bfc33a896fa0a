#!/usr/bin/env python3
"""Tests of validation/scripts/keep_traces.py: the traces rows name are copied with their
tensor records zeroed, rows are pointed at the copies, and a copy left unzeroed by a run that
was killed (a temporary file) is never taken for a finished one.

    python3 tests/scripts/keep_traces_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "validation", "scripts", "keep_traces.py")


class KeepTracesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.src = os.path.join(self.tmp.name, "bert.fp16.pt")
        with zipfile.ZipFile(self.src, "w") as z:  # a TorchScript archive's layout
            z.writestr("bert/data.pkl", b"pickle")
            z.writestr("bert/data/0", os.urandom(4096))
            z.writestr("bert/code/__torch__.py", b"def forward(): pass")
        self.out = os.path.join(self.tmp.name, "models")
        self.runs = os.path.join(self.tmp.name, "runs.json")
        with open(self.runs, "w") as f:
            json.dump({"rows": [{"model": "bert", "source": self.src}, {"model": "bert", "source": self.src}]}, f)

    def keep(self):
        p = subprocess.run([sys.executable, SCRIPT, self.runs, "--models-out", self.out],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_copies_are_zeroed_and_rows_point_at_them(self):
        self.keep()
        with zipfile.ZipFile(os.path.join(self.out, "bert.fp16.pt")) as z:
            self.assertEqual(z.read("bert/data/0"), bytes(4096))
            self.assertEqual(z.read("bert/data.pkl"), b"pickle")
        with open(self.runs) as f:
            rows = json.load(f)["rows"]
        self.assertEqual([r["source"] for r in rows], ["data/models/bert.fp16.pt"] * 2)
        self.assertEqual(sorted(os.listdir(self.out)), ["bert.fp16.pt"])

    def test_a_killed_runs_temporary_copy_is_not_taken_for_a_zeroed_one(self):
        os.makedirs(self.out)
        with open(os.path.join(self.out, "bert.fp16.pt.tmp"), "wb") as f:
            f.write(open(self.src, "rb").read())  # copied, not yet zeroed
        self.keep()
        with zipfile.ZipFile(os.path.join(self.out, "bert.fp16.pt")) as z:
            self.assertEqual(z.read("bert/data/0"), bytes(4096))


if __name__ == "__main__":
    unittest.main()
