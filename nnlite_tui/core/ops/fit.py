"""The predictor's fallback: time as a non-negative linear function of an op's (or a run's) work,
fitted to relative error (scipy's non-negative least squares)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_FIT_POINTS = 3


@dataclass
class Fit:
    """time_us = sum(coef[i] * x[i]) + intercept, every coefficient >= 0."""
    coef: tuple[float, ...]
    intercept: float
    points: int

    def __call__(self, *x: float) -> float:
        return sum(c * v for c, v in zip(self.coef, x)) + self.intercept


def nnls_fit(rows: Sequence[tuple[float, ...]]) -> Fit | None:
    """rows of (x..., time_us); None with fewer than MIN_FIT_POINTS rows (nothing to fit)."""
    if len(rows) < MIN_FIT_POINTS:
        return None
    import numpy as np
    from scipy.optimize import nnls

    data = np.asarray(rows, dtype=float)
    x = np.column_stack([data[:, :-1], np.ones(len(data))])
    y = data[:, -1]
    w = 1.0 / np.maximum(np.abs(y), 1.0)  # relative error: a 5 µs op counts as much as a 500 µs one
    coef, _ = nnls(x * w[:, None], y * w)
    return Fit(coef=tuple(float(c) for c in coef[:-1]), intercept=float(coef[-1]), points=len(rows))
