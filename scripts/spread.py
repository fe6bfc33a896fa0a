"""Median and p10..p90 of measured samples, as the measurement files record them
(linear interpolation between closest ranks, like src/common/percentile.h)."""


def pct(v, q):
    if not v:
        return 0  # as Percentile gives for an empty sample
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def spread(v):
    return {"median": pct(v, 0.5), "p10": pct(v, 0.1), "p90": pct(v, 0.9), "n": len(v)}
