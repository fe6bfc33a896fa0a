#!/usr/bin/env python3
"""validation/scripts/framework_ranking.py: the order of frameworks from slowest to fastest, ties within 5%
written in a fixed order, and the count of models whose predicted order is the measured one."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "validation", "scripts"))
import framework_ranking  # noqa: E402


def row(model, fw, measured, predicted, batch=1):
    return {"model": model, "framework": fw, "precision": "fp16", "batch": batch,
            "measured_ms": measured, "predicted_ms": predicted}


class FrameworkRankingTest(unittest.TestCase):
    def test_ties_compare_equal_in_any_order(self):
        a = framework_ranking.order({"cuda-graph": 1.00, "cuda-graph-eager": 1.03, "pytorch-eager": 5.0})
        b = framework_ranking.order({"cuda-graph": 1.03, "cuda-graph-eager": 1.00, "pytorch-eager": 5.0})
        self.assertEqual(a, "E > G = GE")
        self.assertEqual(a, b)
        self.assertEqual(framework_ranking.order({"cuda-graph": 1.0, "cuda-graph-eager": 1.2}), "GE > G")

    def run_on(self, rows):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"rows": rows}, f)
        try:
            out = io.StringIO()
            with redirect_stdout(out):
                framework_ranking.main([f.name])
            return out.getvalue()
        finally:
            os.remove(f.name)

    def test_counts_models_whose_order_holds(self):
        rows = [row("a", "pytorch-eager", 5, 6), row("a", "torchscript", 3, 3.2), row("a", "cuda-graph", 1, 1),
                row("b", "pytorch-eager", 5, 2), row("b", "torchscript", 3, 3.2), row("b", "cuda-graph", 1, 1),
                # two frameworks only: not ranked; another batch: ignored
                row("c", "pytorch-eager", 5, 6), row("c", "cuda-graph", 1, 1),
                row("a", "torch-compile", 9, 9, batch=8)]
        out = self.run_on(rows)
        self.assertIn("| a | 5.00 / 6.00 | 3.00 / 3.20 | 1.00 / 1.00 | E > TS > G | E > TS > G |", out)
        self.assertIn("| b | 5.00 / 2.00 | 3.00 / 3.20 | 1.00 / 1.00 | E > TS > G | TS > E > G |", out)
        self.assertNotIn("| c |", out)
        self.assertNotIn("torch.compile", out.splitlines()[0])
        self.assertIn("equals the measured one for 1 of 2 models", out)


if __name__ == "__main__":
    unittest.main()
