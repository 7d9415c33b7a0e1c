"""Is the artifact's output distribution PyTorch's? Per-output-element tests over repeated runs.

A model that samples at inference gives a different output on every run, in PyTorch and in the
artifact (each with its own generator), so its outputs cannot be compared run by run. Both are run
`runs` times on the same input, and for every output element:
- the means agree: Welch's t on the difference, beyond the deterministic tolerance (VALIDATE_RTOL of
  the largest |value|, so elements that do not vary are held to the usual rule);
- the spreads agree: the ratio of the variances against the F distribution (each variance floored
  at the tolerance squared, so a deterministic element is compared with a deterministic one).
Each test is two-sided at `ALPHA` over all elements together (Bonferroni: each element at
ALPHA / elements), so a correct conversion fails with probability below ALPHA whatever the output
size, and the limits come from scipy's t and F quantiles. Needs numpy and scipy, no torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nnlite_tui.core.convert.worker.validation import VALIDATE_RTOL

ALPHA = 1e-3  # the chance that a correct conversion fails the distribution check
RUNS = 64  # runs on each side


@dataclass
class Spread:
    """Running per-element mean and sum of squared deviations of a model's outputs (Welford)."""

    runs: int = 0
    means: list[np.ndarray] = field(default_factory=list)
    squares: list[np.ndarray] = field(default_factory=list)

    def add(self, outputs: Sequence[Any]) -> None:
        values = [np.asarray(o, dtype=np.float64) for o in outputs]
        if not self.runs:
            self.means = [np.zeros_like(v) for v in values]
            self.squares = [np.zeros_like(v) for v in values]
        if len(values) != len(self.means):
            raise ValueError(f"a run with {len(values)} outputs after runs with {len(self.means)}")
        self.runs += 1
        for mean, square, value in zip(self.means, self.squares, values):
            if value.shape != mean.shape:
                raise ValueError(f"output shape {list(value.shape)} differs from an earlier run's {list(mean.shape)}")
            delta = value - mean
            mean += delta / self.runs
            square += delta * (value - mean)

    def variances(self) -> list[np.ndarray]:
        return [s / max(self.runs - 1, 1) for s in self.squares]


class DistributionMismatch(ValueError):
    """The artifact's outputs are not distributed as PyTorch's."""


def compare(artifact: Spread, reference: Spread, alpha: float = ALPHA) -> dict[str, object]:
    """The figures of both tests; DistributionMismatch when either fails."""
    from scipy import stats

    if len(artifact.means) != len(reference.means):
        raise DistributionMismatch(f"the converted model has {len(artifact.means)} outputs, PyTorch gives "
                                   f"{len(reference.means)}")
    for got, want in zip(artifact.means, reference.means):
        if got.shape != want.shape:
            raise ValueError(f"output shape {list(got.shape)} differs from PyTorch {list(want.shape)}")
    n, m = artifact.runs, reference.runs
    elements = sum(int(a.size) for a in reference.means) or 1
    scale = max([1.0] + [float(np.max(np.abs(a))) for a in reference.means if a.size])
    tol = VALIDATE_RTOL * scale
    t_limit = float(stats.t.ppf(1 - alpha / (2 * elements), df=n + m - 2))
    f_low = float(stats.f.ppf(alpha / (2 * elements), n - 1, m - 1))
    f_high = float(stats.f.ppf(1 - alpha / (2 * elements), n - 1, m - 1))
    worst_t, ratios, sampled, spread_a, spread_p = 0.0, [], 0, [], []
    for mean_a, var_a, mean_p, var_p in zip(artifact.means, artifact.variances(), reference.means,
                                            reference.variances()):
        excess = np.maximum(np.abs(mean_a - mean_p) - tol, 0.0)
        se = np.sqrt(var_a / n + var_p / m)
        t = np.where(excess > 0, excess / np.where(se > 0, se, np.inf), 0.0)
        t = np.where((excess > 0) & (se == 0), np.inf, t)
        worst_t = max(worst_t, float(np.max(t)) if t.size else 0.0)
        ratio = (var_a + tol**2) / (var_p + tol**2)
        ratios.append(ratio.ravel())
        sampled += int(np.count_nonzero(var_p > tol**2))
        spread_a.append(np.sqrt(var_a).ravel())
        spread_p.append(np.sqrt(var_p).ravel())
    ratio = np.concatenate(ratios) if ratios else np.ones(1)
    ratio_min, ratio_max = float(ratio.min()), float(ratio.max())
    figures: dict[str, object] = {
        "runs": n, "alpha": alpha, "elements": elements, "sampled_elements": sampled, "tolerance": tol,
        "mean_t_max": worst_t, "mean_t_limit": t_limit,
        "var_ratio_min": ratio_min, "var_ratio_max": ratio_max, "var_ratio_limits": [f_low, f_high],
        "std_mean_pytorch": float(np.concatenate(spread_p).mean()) if spread_p else 0.0,
        "std_mean_artifact": float(np.concatenate(spread_a).mean()) if spread_a else 0.0,
    }
    problems = []
    if worst_t > t_limit:
        problems.append(f"an output's mean is {worst_t:.3g} standard errors beyond the tolerance (limit {t_limit:.3g})")
    if ratio_min < f_low or ratio_max > f_high:
        problems.append(f"an output's variance is {ratio_min:.3g}-{ratio_max:.3g} "
                        f"times PyTorch's (limits {f_low:.3g}-{f_high:.3g})")
    if problems:
        raise DistributionMismatch(f"output differs from PyTorch in distribution over {n} runs: " + "; ".join(problems))
    return figures
