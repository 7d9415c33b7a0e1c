"""Trends over a long run's samples: how much a figure that should stay flat grows per 1,000 models,
and how long a larger run would take at the measured rate. Pure arithmetic (scipy's least squares), so
it is tested on hand-made curves (tests/test_bench_trends.py) and used by bench/lemur_scale.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import linregress

PER = 1000.0  # growth is quoted per this many models


@dataclass(frozen=True)
class Trend:
    """y ~ start + slope * models, least squares over `points` samples."""

    start: float  # the fitted value at 0 models
    slope: float  # per model
    slope_stderr: float
    points: int

    @property
    def per_1000(self) -> float:
        return self.slope * PER

    @property
    def per_1000_pct(self) -> float | None:
        """Growth per 1,000 models as a share of the fitted start (None when the start is not positive)."""
        return 100.0 * self.per_1000 / self.start if self.start > 0 else None


def fit(models: Sequence[float], values: Sequence[float]) -> Trend | None:
    """The least-squares line of `values` over `models`; None with fewer than 3 points or one x."""
    if len(models) != len(values):
        raise ValueError(f"{len(models)} x values for {len(values)} y values")
    if len(models) < 3 or len(set(models)) < 2:
        return None
    result = linregress(models, values)
    return Trend(start=float(result.intercept), slope=float(result.slope), slope_stderr=float(result.stderr),
                 points=len(models))


@dataclass(frozen=True)
class Interval:
    """What happened between two samples: models finished, in how long, and what grew meanwhile."""

    mid_models: float  # the models finished halfway through the interval (the x of its rate)
    models: int
    seconds: float
    grown: float  # how much the cumulative figure given to `intervals` grew

    @property
    def per_hour(self) -> float:
        return self.models / self.seconds * 3600.0

    @property
    def grown_per_model(self) -> float | None:
        return self.grown / self.models if self.models else None


def intervals(elapsed_s: Sequence[float], finished: Sequence[int],
              cumulative: Sequence[float] | None = None) -> list[Interval]:
    """Consecutive samples as intervals (`cumulative`: a figure that accumulates, e.g. the event log's
    bytes, whose growth per model finished in the interval is then known)."""
    grown = cumulative if cumulative is not None else [0.0] * len(elapsed_s)
    out = []
    for i in range(1, len(elapsed_s)):
        seconds = elapsed_s[i] - elapsed_s[i - 1]
        if seconds > 0:
            out.append(Interval(mid_models=(finished[i] + finished[i - 1]) / 2, models=finished[i] - finished[i - 1],
                                seconds=seconds, grown=grown[i] - grown[i - 1]))
    return out


@dataclass(frozen=True)
class Projection:
    target: int
    hours: float | None  # None: the fitted rate reaches zero before the target
    flat_hours: float  # the target at the run's cumulative rate, no trend


def project(target: int, measured_models: int, measured_hours: float, rate: Trend | None) -> Projection:
    """Wall time for `target` models: the measured hours for the first `measured_models`, then the rest at
    the fitted rate r(n) = start + slope * n models/hour, i.e. the integral of dn / r(n) from the models
    measured to the target. Beside it, the target at the cumulative rate (measured models / measured hours)."""
    flat = target * measured_hours / measured_models if measured_models else math.inf
    if rate is None:
        return Projection(target, None, flat)
    left, right = measured_models, max(target, measured_models)
    r_left, r_right = rate.start + rate.slope * left, rate.start + rate.slope * right
    if r_left <= 0 or r_right <= 0:
        return Projection(target, None, flat)
    if abs(rate.slope) * (right - left) < 1e-9 * r_left:  # flat within rounding: the integral's limit
        rest = (right - left) / r_left
    else:
        rest = math.log(r_right / r_left) / rate.slope
    return Projection(target, measured_hours + rest, flat)
