"""Rounds: a unit is timed in several fresh benchmark processes (or app launches), and judged by them.

A unit's timed budget (`--runs`, `--min-seconds`, `--warmup-seconds`, `--max-runs`, `--max-seconds`)
is split evenly across its rounds, so three rounds cost about what one did; the warm-up count
(`--warmup`) applies to every round, since every round is a fresh process. The rounds are separated in
time by other work (the Runner puts a unit's next round behind the other units' rounds, and not
sooner than ROUND_GAP_S after its last), so that the drift of a device over seconds to minutes shows
between rounds instead of hiding inside one.

What a unit's report says of its rounds:
- the headline median is the median of the round medians;
- its 95% interval is Student's t interval on the logarithms of the round medians (scipy.stats.t,
  n-1 degrees of freedom): a confidence interval for the unit's typical latency in a fresh process,
  honest with few rounds because the t quantile grows as the rounds get fewer (12.7 for 2 rounds,
  4.30 for 3) and because it is built from the spread between processes, not from the samples of one;
- a stability verdict, `stable` or `unstable` with reasons, in the spirit of pyperf's checks: the
  round medians spread (their relative standard deviation) above SPREAD_LIMIT, one round far from
  the others (OUTLIER_LIMIT off the median of the rest), too little timed work per sample for the
  clock's resolution (fewer than RESOLUTION_TICKS ticks of the coarsest clock step the samples show),
  and the device's reference model drifting by more than DRIFT_LIMIT between the unit's first and
  last round;
- what one session cannot know (`between_session`, `interval_sessions`): the rounds of one run share
  the device's state, so their interval describes this session only. The device's history of
  reference sessions (reference_history.py) gives the spread of a whole session, sd_log (or a stated
  default until the device has history); `interval_sessions` widens the within-session interval by
  it, on the log scale: half-width sqrt(h_within^2 + (z * sd_log)^2), z the normal quantile. That is
  the interval the next session's figure is expected in.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypedDict, cast

from nnlite_tui.core.bench.block import Stats
from nnlite_tui.core.bench.reference import NearestFigure
from nnlite_tui.core.bench.reference_history import BetweenSession
from nnlite_tui.core.bench.thermal_baseline import ThermalWait
from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.outcomes import BenchResult
from nnlite_tui.core.results.model import Benchmark

DEFAULT_ROUNDS = 3
DEFAULT_MAX_ROUNDS = 5  # an unstable unit gets extra rounds up to this many
CONFIDENCE = 0.95
SPREAD_LIMIT = 0.10  # relative std of the round medians (pyperf warns at 10% of the mean)
OUTLIER_LIMIT = 0.25  # one round's median this far off the median of the other rounds
RESOLUTION_TICKS = 100  # a sample should span at least this many ticks of the clock
DRIFT_LIMIT = 0.10  # the device's reference model, first round vs last round
# A unit's next round starts at least this long after its last one ended (behind every other ready unit,
# so with many units the rounds spread over the whole run) ($NNLITE_ROUND_GAP_S: the test
# suite's tiny models shorten it, so that a one-unit run does not spend most of its time waiting).
ROUND_GAP_S = float(os.environ.get("NNLITE_ROUND_GAP_S") or 5.0)
# What a unit measures once, in its first round: declared on the report model's fields.
ONCE_KEYS = Benchmark.measured_once()
METHOD = ("Student's t interval on the logarithms of the round medians (scipy.stats.t, n-1 degrees of "
          "freedom): a 95% confidence interval for the latency in a fresh benchmark process")
SESSIONS_METHOD = ("the within-session interval widened by the device's between-session spread on the log scale: "
                   "half-width sqrt(h_within^2 + (z * sd_log)^2), z the normal 97.5% quantile; sd_log from the "
                   "device's reference history (between_session.source)")


class IntervalBlock(TypedDict):
    """An interval of the median (`interval`, `interval_sessions`)."""

    low_ns: float
    high_ns: float
    confidence: float
    method: str


class VerdictBlock(TypedDict):
    median_ns: float
    rounds: int
    interval: IntervalBlock | None
    spread: float | None
    verdict: str  # "stable" or "unstable"
    reasons: list[str]


class RoundBlock(TypedDict):
    """A Round as the report's `benchmark.rounds` keeps it."""

    index: int
    started_at: float
    seconds: float
    median_ns: float
    stats: Stats
    timed_seconds: float | None
    conditions: Mapping[str, object] | None
    reference: NearestFigure | None
    tick_ns: float | None
    init_ns: float | None
    first_inference_ns: float | None
    warmup_runs: int | None
    warmup_mean_ns: float | None
    thermal: ThermalWait | None


def per_round(settings: BenchSettings, rounds: int) -> BenchSettings:
    """The settings of one round: the unit's timed budget split evenly across its rounds."""
    if rounds <= 1:
        return settings
    runs = max(1, math.ceil(settings.runs / rounds))
    return replace(settings, runs=runs, max_runs=max(runs, math.ceil(settings.max_runs / rounds)),
                   min_seconds=settings.min_seconds / rounds, max_seconds=settings.max_seconds / rounds,
                   warmup_seconds=settings.warmup_seconds / rounds)


@dataclass(frozen=True)
class Round:
    """One round's figures, as a report keeps them."""

    index: int  # 1-based
    started_at: float  # wall clock (epoch seconds) when the round's benchmark started
    seconds: float  # the round's wall time on the device, start-up and load included
    median_ns: float
    stats: Stats
    timed_seconds: float | None = None
    # Thermal and power state around the timed runs, as the device wrote it (results.model.Conditions)
    conditions: Mapping[str, object] | None = None
    reference: NearestFigure | None = None  # the device's nearest reference figure
    tick_ns: float | None = None  # the coarsest clock step seen in the round's samples
    # The round's own work beside its timed runs: the load, the first inference, the warm-up.
    init_ns: float | None = None
    first_inference_ns: float | None = None
    warmup_runs: int | None = None
    warmup_mean_ns: float | None = None
    # A phone's round: the thermal baseline wait before it (bench/thermal_baseline.py): start figures, seconds waited.
    thermal: ThermalWait | None = None

    def to_dict(self) -> RoundBlock:
        return {"index": self.index, "started_at": self.started_at, "seconds": self.seconds,
                "median_ns": self.median_ns, "stats": self.stats, "timed_seconds": self.timed_seconds,
                "conditions": self.conditions, "reference": self.reference, "tick_ns": self.tick_ns,
                "init_ns": self.init_ns, "first_inference_ns": self.first_inference_ns,
                "warmup_runs": self.warmup_runs, "warmup_mean_ns": self.warmup_mean_ns, "thermal": self.thermal}


def clock_tick_ns(samples_ns: list[int | float]) -> float | None:
    """The clock step the samples show: the smallest positive gap between distinct sample values
    (1 ns for a nanosecond clock, 1000 ns for samples rounded to microseconds)."""
    distinct = sorted(set(float(s) for s in samples_ns))
    gaps = [b - a for a, b in zip(distinct, distinct[1:]) if b > a]
    return min(gaps) if gaps else None


@dataclass(frozen=True)
class Verdict:
    median_ns: float
    rounds: int
    interval: tuple[float, float] | None  # (low_ns, high_ns); None with one round
    spread: float | None  # relative std of the round medians
    stable: bool
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> VerdictBlock:
        return {"median_ns": self.median_ns, "rounds": self.rounds,
                "interval": {"low_ns": self.interval[0], "high_ns": self.interval[1], "confidence": CONFIDENCE,
                             "method": METHOD} if self.interval else None,
                "spread": self.spread, "verdict": "stable" if self.stable else "unstable",
                "reasons": list(self.reasons)}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def t_interval(medians: list[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Student's t interval on log(medians), back on the ns scale; None for fewer than two rounds."""
    if len(medians) < 2 or min(medians) <= 0:
        return None
    from scipy import stats

    logs = [math.log(m) for m in medians]
    n = len(logs)
    mean = math.fsum(logs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (n - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return math.exp(mean - half), math.exp(mean + half)


def judge(rounds: list[Round]) -> Verdict:
    """The unit's figures and stability from its rounds (at least one)."""
    medians = [r.median_ns for r in rounds]
    median = _median(medians)
    reasons: list[str] = []
    spread = None
    if len(medians) >= 2:
        mean = math.fsum(medians) / len(medians)
        spread = math.sqrt(math.fsum((m - mean) ** 2 for m in medians) / (len(medians) - 1)) / mean
        if spread > SPREAD_LIMIT:
            reasons.append(f"round medians spread {spread:.1%} (relative std; over {SPREAD_LIMIT:.0%})")
    if len(medians) >= 3:
        for i, r in enumerate(rounds):
            rest = _median(medians[:i] + medians[i + 1:])
            off = abs(r.median_ns / rest - 1)
            if off > OUTLIER_LIMIT:
                reasons.append(f"round {r.index} is {off:.0%} off the median of the others")
    ticks = [r.tick_ns for r in rounds if r.tick_ns]
    if ticks and median / max(ticks) < RESOLUTION_TICKS:
        reasons.append(f"too little work per sample for the clock: median {median:.0f} ns is "
                       f"{median / max(ticks):.0f} clock steps of {max(ticks):.0f} ns (under {RESOLUTION_TICKS})")
    refs = [r.reference for r in rounds if r.reference and r.reference.get("median_ns")]
    if len(refs) >= 2 and refs[0]["at"] != refs[-1]["at"]:
        drift = refs[-1]["median_ns"] / refs[0]["median_ns"] - 1
        if abs(drift) > DRIFT_LIMIT:
            reasons.append(f"the device's reference model moved {drift:+.0%} between the first and last round")
    return Verdict(median_ns=median, rounds=len(rounds), interval=t_interval(medians), spread=spread,
                   stable=not reasons, reasons=tuple(reasons))


def sessions_interval(medians: list[float], between: BetweenSession,
                      confidence: float = CONFIDENCE) -> IntervalBlock | None:
    """The interval a figure of the next session is expected in: the within-session t interval (or
    the median alone, with one round) widened by the between-session spread."""
    if not medians or min(medians) <= 0:
        return None
    from scipy import stats

    within = t_interval(medians, confidence)
    if within is not None:
        centre, half_within = (math.log(within[0]) + math.log(within[1])) / 2, math.log(within[1] / within[0]) / 2
    else:
        centre, half_within = math.log(_median(medians)), 0.0
    half = math.hypot(half_within, float(stats.norm.ppf(0.5 + confidence / 2)) * between.sd_log)
    return {"low_ns": math.exp(centre - half), "high_ns": math.exp(centre + half), "confidence": confidence,
            "method": SESSIONS_METHOD}


def round_of(index: int, result: BenchResult, started_at: float, reference: NearestFigure | None) -> Round:
    """A valid round's figures from its benchmark result."""
    block = result.block
    samples = block.get("samples_ns") or []
    # a valid block's stats: the device wrote them by the protocol's definition (bench/stats.py)
    stats = cast(Stats, dict(block["stats"]))
    return Round(index=index, started_at=started_at, seconds=result.seconds, median_ns=float(block["stats"]["median_ns"]),
                 stats=stats, timed_seconds=block.get("timed_seconds"),
                 conditions=block.get("conditions"), reference=reference, tick_ns=clock_tick_ns(samples),
                 init_ns=block.get("init_ns"), first_inference_ns=block.get("first_inference_ns"),
                 warmup_runs=block.get("warmup_runs"), warmup_mean_ns=block.get("warmup_mean_ns"),
                 thermal=(result.cooldown or {}).get("thermal_baseline"))


def combine(rounds: list[Round], results: list[BenchResult], between: BetweenSession | None = None) -> BenchResult:
    """One unit's result from its valid rounds: the headline median, interval and verdict across rounds,
    the rounds themselves, and the raw samples of all rounds pooled (their statistics as `stats`);
    the device as it was before the first round and after the last. With `between` (the device's
    between-session spread), also the interval that covers the next session."""
    from nnlite_tui.core.bench.stats import summarize

    verdict = judge(rounds)
    first, last = results[0], results[-1]
    samples = [s for r in results for s in r.block.get("samples_ns") or []]
    native = [r.block.get("native_samples_ns") for r in results]
    pooled_native = [s for n in native if n for s in n] if all(native) else None
    throttled = any((r.block.get("conditions") or {}).get("throttled") for r in results)
    conditions = {**(last.block.get("conditions") or {}), "throttled": throttled} if last.block.get("conditions") \
        else None
    block = {
        **{k: v for k, v in last.block.items() if k != "log"},
        "init_ns": first.block.get("init_ns"),
        "first_inference_ns": first.block.get("first_inference_ns"),
        "stats": summarize(samples),
        "samples_ns": samples,
        "timed_seconds": math.fsum(r.block.get("timed_seconds") or 0.0 for r in results),
        "native_samples_ns": pooled_native,
        "native_stats": summarize(pooled_native) if pooled_native else None,
        "conditions": conditions,
        "median_ns": verdict.median_ns,
        "interval": verdict.to_dict()["interval"],
        "stability": {k: v for k, v in verdict.to_dict().items() if k not in ("median_ns", "interval")},
        "rounds": [r.to_dict() for r in rounds],
        "log": last.block.get("log"),
    }
    if between is not None:
        block["between_session"] = between.to_dict()
        block["interval_sessions"] = sessions_interval([r.median_ns for r in rounds], between)
    for key in ONCE_KEYS:  # measured after the unit's first round only
        once = next((r.block[key] for r in results if r.block.get(key) is not None), None)
        if once is not None:
            block[key] = once
    return BenchResult(serial=last.serial, block=block, device_info=last.device_info, before=first.before,
                       after=last.after, seconds=math.fsum(r.seconds for r in results), cooldown=first.cooldown)
