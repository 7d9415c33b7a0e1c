"""Judging paired rounds: the two sides of a comparison timed side by side, in one session.

Each pair is one fresh-process benchmark of BEFORE's artifact and one of AFTER's, back to back on
one device (in ABBA order, remeasure.py), so whatever the device does over minutes moves both alike
and cancels in their ratio. The evidence is the pairs' log ratios d_i = log(after_i / before_i):
- the ratio is exp(mean d), its 95% interval the paired t interval on d (scipy.stats.t, n-1 degrees
  of freedom);
- a change counts only when that whole interval lies outside [1 - t, 1 + t] AND a one-sided Wilcoxon
  signed-rank test on d agrees (scipy.stats.wilcoxon, exact, p <= ALPHA: with 6 pairs all in one
  direction, p = 1/64); else "within noise". With fewer than MIN_PAIRS_FOR_VERDICT pairs the rank
  test cannot reach ALPHA, so no verdict is possible: that is said, not hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALPHA = 0.05
CONFIDENCE = 0.95
MIN_PAIRS_FOR_VERDICT = 5  # the exact one-sided signed-rank p of n pairs all one way is 2^-n
SLOWER, FASTER, WITHIN_NOISE = "slower", "faster", "within noise"
METHOD = ("re-measured side by side: ratio exp(mean of the pairs' log ratios after/before), 95% CI by the paired "
          "t interval on those log ratios; slower/faster only when the whole CI lies outside {band} and a "
          f"one-sided Wilcoxon signed-rank test on them gives p <= {ALPHA}, else within noise")


@dataclass(frozen=True)
class PairedVerdict:
    change: str
    ratio: float
    ci: tuple[float, float]
    p_value: float | None
    pairs: int


def judge_pairs(before_ns: list[float], after_ns: list[float], threshold: float,
                confidence: float = CONFIDENCE) -> PairedVerdict:
    """The verdict of paired rounds (before_ns[i] and after_ns[i] timed side by side; at least one pair)."""
    import numpy as np
    from scipy import stats

    if len(before_ns) != len(after_ns) or not before_ns:
        raise ValueError(f"paired rounds need as many before as after, got {len(before_ns)} and {len(after_ns)}")
    d = np.log(np.asarray(after_ns, dtype=float)) - np.log(np.asarray(before_ns, dtype=float))
    n = len(d)
    mean = float(d.mean())
    ratio = math.exp(mean)
    if n < 2:
        return PairedVerdict(WITHIN_NOISE, ratio, (ratio, ratio), None, n)
    sd = float(d.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    ci = (math.exp(mean - half), math.exp(mean + half))
    if np.all(d == 0):
        return PairedVerdict(WITHIN_NOISE, ratio, ci, 1.0, n)
    side = "greater" if mean >= 0 else "less"
    p = float(stats.wilcoxon(d, alternative=side).pvalue)
    change = WITHIN_NOISE
    if ci[0] > 1 + threshold and p <= ALPHA:
        change = SLOWER
    elif ci[1] < 1 - threshold and p <= ALPHA:
        change = FASTER
    return PairedVerdict(change, ratio, ci, p, n)


def side_order(pairs: int, unit: str, seed: int) -> list[str]:
    """The order of one unit's 2 x `pairs` benchmarks: A B B A A B ... or B A A B B A ...; which side
    goes first is drawn per unit (seeded by the unit's name, so a resumed session draws the same)."""
    import random
    import zlib

    first = random.Random(zlib.crc32(unit.encode()) ^ seed).random() < 0.5
    out: list[str] = []
    for i in range(pairs):
        a_first = first if i % 2 == 0 else not first
        out += ["A", "B"] if a_first else ["B", "A"]
    return out
