#!/usr/bin/env python3
"""Renders `ftax validate --format json` reports as the Markdown tables of validation/campaigns.md.
Usage: validation_tables.py REPORT.json [--rows]"""
import json
import sys


def main():
    rep = json.load(open(sys.argv[1]))
    show_rows = "--rows" in sys.argv
    print("| framework | points | tolerance | within | inside p10–p90 | within or inside | bound agrees | median abs error |")
    print("|---|---|---|---|---|---|---|---|")
    for f in rep["frameworks"]:
        n = f["rows"]
        pct = lambda k: f"{f[k]}/{n} ({100 * f[k] / n:.0f}%)"
        print(f"| {f['framework']} | {n} | ±{f['tolerance_pct']:.0f}% | {pct('within_tolerance')} | "
              f"{pct('inside_spread')} | {pct('within_or_inside')} | {pct('bound_agrees')} | "
              f"{f['median_abs_error_pct']:.1f}% |")
    causes = []
    for f in rep["frameworks"]:
        mc = f.get("miss_causes") or {}
        if mc:
            causes.append(f"{f['framework']}: " + ", ".join(f"{k} {v}" for k, v in sorted(mc.items())))
    if causes:
        print("\nMisses by cause (validation/campaigns.md, entry 23): " + "; ".join(causes) + ".")
    cx = rep["crossovers"]
    print(f"\nCrossover batch within one power of two: {sum(c['agrees'] for c in cx)}/{len(cx)}.")
    misses = [c for c in cx if not c["agrees"]]
    if misses:
        print("Misses: " + "; ".join(f"{c['model']} {c['framework']} {c['precision']} measured "
                                     f"{c['measured']} predicted {c['predicted']}" for c in misses) + ".")
    if show_rows:
        print("\n| model | framework | prec | batch | measured ms (p10–p90) | predicted ms | error | bound m/p |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rep["rows"]:
            print(f"| {r['model']} | {r['framework']} | {r['precision']} | {r['batch']} | "
                  f"{r['measured_ms']:.3f} ({r['measured_p10_ms']:.3f}–{r['measured_p90_ms']:.3f}) | "
                  f"{r['predicted_ms']:.3f} | {r['error_pct']:+.1f}% | {r['measured_bound'][:4]}/{r['predicted_bound'][:4]} |")


if __name__ == "__main__":
    main()
