"""Compare two runs: match (model, device, backend, precision), judge each pair's change from its rounds.

Modelled on `asv compare` and criterion: a pair is "slower" or "faster" only when the change is both
beyond the noise band (`threshold`) and statistically supported, else "within noise". With rounds on
both sides (report schema 3, bench/rounds.py) the evidence is the spread between fresh processes:
- the ratio is that of the geometric means of the round medians, and its 95% interval is Welch's t
  interval on the difference of their logarithms (scipy.stats.ttest_ind, unequal variances);
- the change counts only when that whole interval lies outside [1 - t, 1 + t] AND a one-sided
  Mann-Whitney U test across the rounds agrees (scipy.stats.mannwhitneyu, exact, p <= RANK_ALPHA:
  with three rounds a side, only when every round of one run is slower than every round of the other).
A pair where either side has a single round (reports of earlier releases, `--rounds 1`) is compared
as before and marked "single round": a percentile bootstrap of the ratio of medians over both runs'
raw samples (within one process, so narrower than the next run will honour), "unchanged" when the
interval lies wholly inside the band and "uncertain" when it crosses an edge.

Two runs are two sessions of their devices: when both carry their reference figures (references.json,
compare_sessions.py), each pair's interval is widened by the devices' between-session spread
(`ci`; the within-session one stays as `ci_within`) and the band by how far the device moved between
the runs (`host`), so that a host that moved cannot make a verdict. Runs without them (an earlier
release) are compared on their rounds alone and marked "single session".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nnlite_tui.core.report.compare_pair import ROUNDS, SINGLE_ROUND, Pair  # noqa: F401 - re-exported
from nnlite_tui.core.report.compare_sessions import (SAME_SESSION, TWO_SESSIONS, HostMove, between_sd,
                                                     host_moves, widen)
from nnlite_tui.core.report.compare_verdict import (  # noqa: F401 - re-exported: compare's vocabulary
    CONFIDENCE, FASTER, RESAMPLES, SEED, SLOWER, UNCERTAIN, UNCHANGED, classify)
from nnlite_tui.core.report.rows import ResultRow, RunResults, load_run
from nnlite_tui.core.results import Report

if TYPE_CHECKING:
    import numpy as np

    from nnlite_tui.core.report.compare_energy import EnergyPair

# Resampled indices held in memory at once, so that 10,000-sample runs stay within a few tens of MB.
CHUNK_VALUES = 4_000_000

RANK_ALPHA = 0.05
WITHIN_NOISE = "within noise"
BROKEN, FIXED, FAILED_BOTH, NO_SAMPLES = "broken", "fixed", "failed", "no samples"
MARKS = {SLOWER: "+", BROKEN: "!", FASTER: "-", UNCERTAIN: "~", UNCHANGED: " ", WITHIN_NOISE: " ", FIXED: "*",
         FAILED_BOTH: "x", NO_SAMPLES: "?"}
REGRESSIONS = (SLOWER, BROKEN)


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
    sides: tuple[str, str] | None = None  # what before and after are when not two runs (compare_runtimes.py)
    energy: list[EnergyPair] = field(default_factory=list)  # where either run has energy
    hosts: dict[str, HostMove] | None = None  # per device, how far it moved; None: a run has no references

    @property
    def method(self) -> str:
        band = f"[{1 - self.threshold:.2f}, {1 + self.threshold:.2f}]"
        return (f"with rounds: ratio of the geometric means of the round medians, {self.confidence:.0%} CI by "
                f"Welch's t on their logarithms, slower/faster only when the whole CI lies outside {band} and a "
                f"one-sided Mann-Whitney U test across the rounds gives p <= {RANK_ALPHA}, else within noise; "
                f"single round: ratio of medians, {self.confidence:.0%} CI by percentile bootstrap of the raw "
                f"samples ({self.resamples} resamples, seed {self.seed}), slower/faster when the CI lies outside "
                f"{band}")

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


def rounds_ratio(before: list[float], after: list[float],
                 confidence: float = CONFIDENCE) -> tuple[float, tuple[float, float], float]:
    """(ratio of geometric means, its Welch t interval, one-sided rank-test p in the ratio's direction)
    from two runs' round medians (at least two each)."""
    import numpy as np
    from scipy import stats

    lb, la = np.log(np.asarray(before, dtype=float)), np.log(np.asarray(after, dtype=float))
    ratio = float(np.exp(la.mean() - lb.mean()))
    if np.ptp(lb) == 0 and np.ptp(la) == 0:  # no spread on either side: the interval is the point
        ci = (ratio, ratio)
    else:
        low, high = stats.ttest_ind(la, lb, equal_var=False).confidence_interval(confidence)
        ci = (float(np.exp(low)), float(np.exp(high)))
    side = "greater" if ratio >= 1 else "less"
    p = float(stats.mannwhitneyu(after, before, alternative=side, method="exact").pvalue)
    return ratio, ci, p


def classify_rounds(ci: tuple[float, float], p: float, threshold: float, moved: float = 1.0) -> str:
    """`moved` (>= 1): how far the device moved between the sessions; the band widens by it."""
    lo, hi = ci
    if lo > (1 + threshold) * moved and p <= RANK_ALPHA:
        return SLOWER
    if hi < (1 - threshold) / moved and p <= RANK_ALPHA:
        return FASTER
    return WITHIN_NOISE


def across_sessions(pair: Pair, host: HostMove | None, reports: tuple[Report | None, Report | None],
                    threshold: float) -> Pair:
    """The pair judged as two sessions: its interval widened by the between-session spread, its band
    by the device's move (compare_sessions.py)."""
    if host is not None and host.same_session:
        pair.sessions, pair.host = SAME_SESSION, host
        return pair
    pair.sessions, pair.host = TWO_SESSIONS, host
    if pair.ci is None or pair.ratio is None or pair.ratio <= 0:
        return pair
    pair.ci_within = pair.ci
    pair.ci = widen(pair.ratio, pair.ci, between_sd(reports[0]), between_sd(reports[1]))
    moved = host.factor if host else 1.0
    if pair.basis == ROUNDS:
        pair.change = classify_rounds(pair.ci, pair.p_value if pair.p_value is not None else 1.0, threshold, moved)
    else:
        lo, hi = pair.ci
        low_edge, high_edge = (1 - threshold) / moved, (1 + threshold) * moved
        pair.change = (SLOWER if lo > high_edge else FASTER if hi < low_edge
                       else UNCHANGED if lo >= low_edge and hi <= high_edge else UNCERTAIN)
    return pair


def compare_pair(before: ResultRow, after: ResultRow, threshold: float, resamples: int = RESAMPLES,
                 seed: int = SEED) -> Pair:
    ok_b, ok_a = before.status == "done", after.status == "done"
    if not ok_b or not ok_a:
        change = FAILED_BOTH if not ok_b and not ok_a else BROKEN if ok_b else FIXED
        return Pair(before, after, change)
    if len(before.round_medians_ns) >= 2 and len(after.round_medians_ns) >= 2:
        ratio, ci, p = rounds_ratio(before.round_medians_ns, after.round_medians_ns)
        return Pair(before, after, classify_rounds(ci, p, threshold), ratio, ci, ROUNDS, p)
    median_ratio = after.median_ns / before.median_ns if before.median_ns and after.median_ns else None
    if not before.samples_ns or not after.samples_ns:
        return Pair(before, after, NO_SAMPLES, median_ratio, basis=SINGLE_ROUND)
    samples_ci = bootstrap_ratio_ci(before.samples_ns, after.samples_ns, resamples, seed=seed)
    return Pair(before, after, classify(samples_ci, threshold), median_ratio, samples_ci, SINGLE_ROUND)


def _settings(run: RunResults) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for report in run.typed:
        for k, v in (report.benchmark.settings or {}).items():
            out.setdefault(k, set()).add(str(v))
    return out


def settings_changed(before: RunResults, after: RunResults) -> dict[str, tuple[str, str]]:
    """Benchmark settings that differ between the runs (e.g. threads 1 -> 2): the change is on purpose."""
    sb, sa = _settings(before), _settings(after)
    return {k: (", ".join(sorted(sb.get(k, {"-"}))), ", ".join(sorted(sa.get(k, {"-"}))))
            for k in sorted(set(sb) | set(sa)) if sb.get(k) != sa.get(k)}


def inputs_changed(pairs: list[Pair]) -> dict[str, tuple[str, str]]:
    """Models whose artifact's input differs between the runs: a different workload, not a speed change."""
    out = {}
    for p in pairs:
        b, a = p.before.conversion.get("artifact_input_shape"), p.after.conversion.get("artifact_input_shape")
        if b and a and b != a:
            out[p.before.model] = (str(b), str(a))
    return out


ORDER = (SLOWER, BROKEN, FASTER, FIXED, UNCERTAIN, NO_SAMPLES, FAILED_BOTH, WITHIN_NOISE, UNCHANGED)


def compare_energy(pairs: list[Pair], threshold: float, resamples: int, seed: int) -> list[EnergyPair]:
    from nnlite_tui.core.report.compare_energy import compare_energy as energy_pairs

    return energy_pairs(pairs, threshold, resamples, seed)


def compare_runs(before_dir: str | Path, after_dir: str | Path, threshold: float = 0.10,
                 resamples: int = RESAMPLES, seed: int = SEED) -> Comparison:
    before, after = load_run(before_dir), load_run(after_dir)
    by_key_b = {r.key: r for r in before.rows}
    by_key_a = {r.key: r for r in after.rows}
    pairs = [compare_pair(by_key_b[k], by_key_a[k], threshold, resamples, seed)
             for k in sorted(set(by_key_b) & set(by_key_a))]
    hosts = host_moves(before_dir, after_dir)
    if hosts is not None:
        report_b = {id(r): rep for r, rep in zip(before.rows, before.typed)}
        report_a = {id(r): rep for r, rep in zip(after.rows, after.typed)}
        pairs = [across_sessions(p, hosts.get(p.before.device),
                                 (report_b.get(id(p.before)), report_a.get(id(p.after))), threshold) for p in pairs]
    pairs.sort(key=lambda p: (ORDER.index(p.change), -(p.ratio or 0) if p.change != FASTER else (p.ratio or 0)))
    return Comparison(
        before=before, after=after, threshold=threshold, pairs=pairs,
        only_before=[by_key_b[k] for k in sorted(set(by_key_b) - set(by_key_a))],
        only_after=[by_key_a[k] for k in sorted(set(by_key_a) - set(by_key_b))],
        settings_changed=settings_changed(before, after), inputs_changed=inputs_changed(pairs),
        resamples=resamples, seed=seed, energy=compare_energy(pairs, threshold, resamples, seed), hosts=hosts,
    )
