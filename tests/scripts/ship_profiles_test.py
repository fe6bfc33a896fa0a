#!/usr/bin/env python3
"""The shipped host profiles (data/profiles/*.json) come from the host runs their provenance
names: validation/scripts/ship_profiles.sh, run into a scratch folder, remakes every kernel and
framework parameter of each within 2% from the host run's bench and the prior, and names the
same prior profiles and bench, each a file of the checkout.
Needs ftax built with Ceres (`ftax calibrate`); exits 0 with a note otherwise.
    FTAX_BINARY=build/ftax python3 tests/scripts/ship_profiles_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FTAX = os.environ.get("FTAX_BINARY", os.path.join(ROOT, "build", "ftax"))


def params(doc, prefix=""):
    """{path: value} of every number under the profile's gpu and frameworks objects."""
    out = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.update(params(v, f"{prefix}/{k}"))
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        out[prefix] = float(doc)
    return out


class ShipProfilesTest(unittest.TestCase):
    def test_the_script_remakes_the_shipped_profiles(self):
        probe = subprocess.run([FTAX, "calibrate", "--help"], capture_output=True, text=True)
        if probe.returncode != 0:
            self.skipTest("ftax calibrate unavailable in this build")
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([os.path.join(ROOT, "validation", "scripts", "ship_profiles.sh"),
                                  os.path.dirname(os.path.abspath(FTAX)), out],
                                 capture_output=True, text=True, cwd=ROOT)
            if run.returncode == 3 or "without Ceres" in run.stderr:
                self.skipTest("this build fits no profiles (no Ceres)")
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            for gpu in ("h200", "h100"):
                with open(os.path.join(ROOT, "data", "profiles", gpu + ".json")) as f:
                    shipped = json.load(f)
                with open(os.path.join(out, gpu + ".json")) as f:
                    remade = json.load(f)
                self.assertEqual(remade["provenance"]["host_run"], shipped["provenance"]["host_run"])
                # Fitted with the prior of the same refined profiles, named as the checkout keeps them.
                self.assertEqual(remade["provenance"]["refined_with"], shipped["provenance"]["refined_with"])
                for path in shipped["provenance"]["refined_with"] + shipped["provenance"]["measurements"]:
                    self.assertTrue(os.path.exists(os.path.join(ROOT, path)), path)
                for part in ("gpu", "frameworks"):
                    a, b = params(shipped[part]), params(remade[part])
                    self.assertEqual(sorted(a), sorted(b), f"{gpu}: {part} keys differ")
                    for k, v in a.items():
                        if k.endswith("/stderr"):
                            continue  # uncertainties move with the fit's conditioning
                        self.assertAlmostEqual(b[k], v, delta=0.02 * abs(v) + 1e-9,
                                               msg=f"{gpu}: {part}{k}: shipped {v}, remade {b[k]}")


if __name__ == "__main__":
    unittest.main()
