"""Latency statistics, defined once.

The same definitions are implemented by the Android app's JVM core (android-app/PROTOCOL.md,
"Statistics"); a cross-language test feeds both the same samples and expects the same numbers.

- mean: arithmetic mean.
- median, p90, p99: linear interpolation between closest ranks (numpy's default, Hyndman-Fan
  type 7): rank = q * (n - 1) on the sorted samples.
- std: population standard deviation (divide by n), in the spirit of LiteRT's benchmark_model.
- min, max.
All values are nanoseconds, as floats (mean, median, percentiles and std need not be integers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from nnlite_tui.core.bench.block import Stats

STAT_KEYS = ("count", "mean_ns", "median_ns", "p90_ns", "p99_ns", "std_ns", "min_ns", "max_ns")


def percentile(sorted_samples: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) of already sorted samples, by linear interpolation."""
    if not sorted_samples:
        raise ValueError("percentile of no samples")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    rank = q * (len(sorted_samples) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(sorted_samples) - 1)
    frac = rank - low
    return float(sorted_samples[low]) + (float(sorted_samples[high]) - float(sorted_samples[low])) * frac


def summarize(samples_ns: Sequence[int | float]) -> Stats:
    """Statistics of a run's timed samples, keyed as STAT_KEYS."""
    if not samples_ns:
        raise ValueError("no samples to summarize")
    ordered = sorted(float(s) for s in samples_ns)
    n = len(ordered)
    mean = math.fsum(ordered) / n
    variance = math.fsum((s - mean) ** 2 for s in ordered) / n
    return {
        "count": n,
        "mean_ns": mean,
        "median_ns": percentile(ordered, 0.5),
        "p90_ns": percentile(ordered, 0.9),
        "p99_ns": percentile(ordered, 0.99),
        "std_ns": math.sqrt(variance),
        "min_ns": ordered[0],
        "max_ns": ordered[-1],
    }
