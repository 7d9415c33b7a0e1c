"""Compare two runs: match (model, device, backend, precision), test the ratio of medians by bootstrap.

Modelled on `asv compare`: a pair is marked slower or faster only when the change is both larger
than the threshold and statistically supported. Here "supported" means the whole confidence
interval of the ratio median(after) / median(before) lies outside [1 - t, 1 + t]; an interval
wholly inside that band is "unchanged", one that crosses its edge is "uncertain". The interval is a
percentile bootstrap: both runs' raw samples are resampled with replacement (independently, since
they are independent runs), the ratio of the resampled medians taken, with a fixed seed so that the
same two runs always give the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nnlite_tui.core.results.rows import ResultRow, RunResults, load_run

if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 0
# Resampled indices held in memory at once, so that 10,000-sample runs stay within a few tens of MB.
CHUNK_VALUES = 4_000_000

SLOWER, FASTER, UNCHANGED, UNCERTAIN = "slower", "faster", "unchanged", "uncertain"
BROKEN, FIXED, FAILED_BOTH, NO_SAMPLES = "broken", "fixed", "failed", "no samples"
MARKS = {SLOWER: "+", BROKEN: "!", FASTER: "-", UNCERTAIN: "~", UNCHANGED: " ", FIXED: "*", FAILED_BOTH: "x",
         NO_SAMPLES: "?"}
REGRESSIONS = (SLOWER, BROKEN)


@dataclass
class Pair:
    before: ResultRow
    after: ResultRow
    change: str
    ratio: float | None = None
    ci: tuple[float, float] | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.before.key


@dataclass
class Comparison:
    before: RunResults
    after: RunResults
    threshold: float
    pairs: list[Pair]
    only_before: list[ResultRow]
    only_after: list[ResultRow]
    settings_changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    inputs_changed: dict[str, tuple[str, str]] = field(default_factory=dict)  # model -> input shapes
    resamples: int = RESAMPLES
    confidence: float = CONFIDENCE
    seed: int = SEED

    @property
    def method(self) -> str:
        return (f"ratio = median(after) / median(before); {self.confidence:.0%} CI: percentile bootstrap of the "
                f"ratio of medians ({self.resamples} resamples of each run's raw samples, seed {self.seed}); "
                f"slower/faster only when the whole CI lies outside [{1 - self.threshold:.2f}, "
                f"{1 + self.threshold:.2f}]")

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.pairs:
            out[p.change] = out.get(p.change, 0) + 1
        return out

    @property
    def regressions(self) -> list[Pair]:
        return [p for p in self.pairs if p.change in REGRESSIONS]


def _bootstrap_medians(samples: list[float], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Medians of `resamples` resamples with replacement.

    The samples are sorted once, so a resample's median is found among its indices (a partition of
    small integers) and only the one or two middle values are looked up: the same medians as
    resampling the values, several times cheaper for runs of thousands of samples.
    """
    import numpy as np

    values = np.sort(np.asarray(samples, dtype=np.float64))
    n = len(values)
    low, high = (n - 1) // 2, n // 2
    kth = (low, high) if low != high else high
    medians = np.empty(resamples)
    step = max(1, CHUNK_VALUES // n)
    for start in range(0, resamples, step):
        count = min(step, resamples - start)
        idx = rng.integers(0, n, size=(count, n), dtype=np.int32)
        idx.partition(kth, axis=1)
        medians[start:start + count] = (values[idx[:, low]] + values[idx[:, high]]) / 2
    return medians


def bootstrap_ratio_ci(before_ns: list[float], after_ns: list[float], resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE, seed: int = SEED) -> tuple[float, float]:
    """Percentile-bootstrap interval of median(after) / median(before); the runs are resampled independently."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ratios = _bootstrap_medians(after_ns, resamples, rng) / _bootstrap_medians(before_ns, resamples, rng)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ratios, [tail, 100 - tail])
    return float(lo), float(hi)


def classify(ci: tuple[float, float], threshold: float) -> str:
    lo, hi = ci
    if lo > 1 + threshold:
        return SLOWER
    if hi < 1 - threshold:
        return FASTER
    if lo >= 1 - threshold and hi <= 1 + threshold:
        return UNCHANGED
    return UNCERTAIN


def compare_pair(before: ResultRow, after: ResultRow, threshold: float, resamples: int = RESAMPLES,
                 seed: int = SEED) -> Pair:
    ok_b, ok_a = before.status == "done", after.status == "done"
    if not ok_b or not ok_a:
        change = FAILED_BOTH if not ok_b and not ok_a else BROKEN if ok_b else FIXED
        return Pair(before, after, change)
    ratio = after.median_ns / before.median_ns if before.median_ns and after.median_ns else None
    if not before.samples_ns or not after.samples_ns:
        return Pair(before, after, NO_SAMPLES, ratio)
    ci = bootstrap_ratio_ci(before.samples_ns, after.samples_ns, resamples, seed=seed)
    return Pair(before, after, classify(ci, threshold), ratio, ci)


def _settings(run: RunResults) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for report in run.reports:
        for k, v in ((report.get("benchmark") or {}).get("settings") or {}).items():
            out.setdefault(k, set()).add(str(v))
    return out


def settings_changed(before: RunResults, after: RunResults) -> dict[str, tuple[str, str]]:
    """Benchmark settings that differ between the runs (e.g. threads 1 -> 2): the change is on purpose."""
    sb, sa = _settings(before), _settings(after)
    return {k: (", ".join(sorted(sb.get(k, {"-"}))), ", ".join(sorted(sa.get(k, {"-"}))))
            for k in sorted(set(sb) | set(sa)) if sb.get(k) != sa.get(k)}


def inputs_changed(pairs: list[Pair]) -> dict[str, tuple[str, str]]:
    """Models whose .tflite input differs between the runs: a different workload, not a speed change."""
    out = {}
    for p in pairs:
        b, a = p.before.conversion.get("tflite_input_shape"), p.after.conversion.get("tflite_input_shape")
        if b and a and b != a:
            out[p.before.model] = (str(b), str(a))
    return out


ORDER = (SLOWER, BROKEN, FASTER, FIXED, UNCERTAIN, NO_SAMPLES, FAILED_BOTH, UNCHANGED)


def compare_runs(before_dir: str | Path, after_dir: str | Path, threshold: float = 0.10,
                 resamples: int = RESAMPLES, seed: int = SEED) -> Comparison:
    before, after = load_run(before_dir), load_run(after_dir)
    by_key_b = {r.key: r for r in before.rows}
    by_key_a = {r.key: r for r in after.rows}
    pairs = [compare_pair(by_key_b[k], by_key_a[k], threshold, resamples, seed)
             for k in sorted(set(by_key_b) & set(by_key_a))]
    pairs.sort(key=lambda p: (ORDER.index(p.change), -(p.ratio or 0) if p.change != FASTER else (p.ratio or 0)))
    return Comparison(
        before=before, after=after, threshold=threshold, pairs=pairs,
        only_before=[by_key_b[k] for k in sorted(set(by_key_b) - set(by_key_a))],
        only_after=[by_key_a[k] for k in sorted(set(by_key_a) - set(by_key_b))],
        settings_changed=settings_changed(before, after), inputs_changed=inputs_changed(pairs),
        resamples=resamples, seed=seed,
    )
