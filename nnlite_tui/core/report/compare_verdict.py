"""The verdict vocabulary shared by every comparison (latency in compare.py, energy in
compare_energy.py): the bootstrap's settings and how an interval of a ratio becomes a verdict."""

from __future__ import annotations

RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 0
SLOWER, FASTER, UNCHANGED, UNCERTAIN = "slower", "faster", "unchanged", "uncertain"


def classify(ci: tuple[float, float], threshold: float) -> str:
    lo, hi = ci
    if lo > 1 + threshold:
        return SLOWER
    if hi < 1 - threshold:
        return FASTER
    if lo >= 1 - threshold and hi <= 1 + threshold:
        return UNCHANGED
    return UNCERTAIN
