#!/usr/bin/env python3
"""Tests of scripts/export_torchscript.py --reuse: a trace is kept only when it and its
description exist and the description says it was traced at the asked sequence length and
trace batch (no torch needed: reusable() reads files only).

    python3 tests/scripts/export_reuse_test.py
"""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from export_torchscript import reusable  # noqa: E402


class ReuseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.pt = os.path.join(self.tmp.name, "bert-large.fp16.pt")

    def write(self, trace=b"PK\x03\x04", meta=None):
        if trace is not None:
            with open(self.pt, "wb") as f:
                f.write(trace)
        if meta is not None:
            with open(self.pt[:-3] + ".json", "w") as f:
                f.write(meta if isinstance(meta, str) else json.dumps(meta))

    @staticmethod
    def meta(seq=128, batch=2):
        return {"model": "bert-large", "precision": "fp16", "seq": seq,
                "inputs": [{"shape": [batch, seq], "dtype": "int64"}]}

    def test_kept_when_made_at_the_same_seq_and_trace_batch(self):
        self.write(meta=self.meta())
        self.assertTrue(reusable(self.pt, 128, 2))

    def test_traced_again_when_seq_or_batch_differ(self):
        self.write(meta=self.meta(seq=64))
        self.assertFalse(reusable(self.pt, 128, 2))
        self.write(meta=self.meta(batch=1))
        self.assertFalse(reusable(self.pt, 128, 2))

    def test_traced_again_when_a_file_is_missing_empty_or_unreadable(self):
        self.assertFalse(reusable(self.pt, 128, 2))  # nothing there
        self.write(meta=None)
        self.assertFalse(reusable(self.pt, 128, 2))  # no description
        self.write(trace=b"", meta=self.meta())
        self.assertFalse(reusable(self.pt, 128, 2))  # an empty trace (an interrupted save)
        self.write(meta="{not json")
        self.assertFalse(reusable(self.pt, 128, 2))
        self.write(meta={"seq": 128, "inputs": "x"})
        self.assertFalse(reusable(self.pt, 128, 2))


if __name__ == "__main__":
    unittest.main()
