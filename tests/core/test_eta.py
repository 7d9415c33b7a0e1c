"""The ETA prices what remains by its measured cost: hand-made runs whose true remaining time is known."""

import pytest

from nnlite_tui.core.events import (ConversionCost, ModelStatus, RunControl, RunFinished, RunStarted, StageFinished,
                                    StageStarted)
from nnlite_tui.core.run.eta import EtaEstimator


def started(names, holds=True):
    return RunStarted("runs/x", tuple(names), ("host",), holds_conversions=holds, ts=0.0)


def convert(est, name, start, seconds, bench=None):
    """One unit converted from `start` for `seconds` (then benchmarked for `bench` seconds)."""
    est.fold(StageStarted(name, "convert", ts=start))
    est.fold(StageFinished(name, "convert", True, seconds, ts=start + seconds))
    est.fold(ModelStatus(name, "converted", ts=start + seconds))
    end = start + seconds
    if bench is not None:
        est.fold(StageStarted(name, "benchmark", ts=end))
        est.fold(StageFinished(name, "benchmark", True, bench, ts=end + bench))
        end += bench
    est.fold(ModelStatus(name, "done", ts=end))
    return end


def test_largest_first_run_is_priced_by_cost_not_by_count():
    """Costs 40, 20, 5, 5, 5, 5 (estimated); the run takes 2x each estimate. After the 40 s model
    (80 s of a 160 s run), a count rate says 5 units x 80 s = 400 s; the truth is 80 s."""
    names = ["big", "mid", "a", "b", "c", "d"]
    est = EtaEstimator()
    est.fold(started(names))
    for name, cost in zip(names, (40, 20, 5, 5, 5, 5)):
        est.fold(ConversionCost(name, cost, ts=0.0))
    now = convert(est, "big", 0.0, 80.0)
    eta = est.estimate(now)
    assert eta.seconds == pytest.approx(2 * (20 + 4 * 5))
    assert eta.low <= eta.seconds <= eta.high  # one measured ratio: the band stays at least 2x wide
    assert eta.high >= 2 * eta.low


def test_in_flight_time_counts_down_and_pauses_do_not():
    est = EtaEstimator()
    est.fold(started(["a", "b"]))
    est.fold(ConversionCost("a", 10, ts=0.0))
    est.fold(ConversionCost("b", 10, ts=0.0))
    now = convert(est, "a", 0.0, 10.0)  # ratio 1
    est.fold(StageStarted("b", "convert", ts=now))
    assert est.estimate(now + 4).seconds == pytest.approx(6.0)
    est.fold(RunControl("pause", ts=now + 4))
    assert est.estimate(now + 30).seconds == pytest.approx(6.0)  # paused: nothing runs, nothing counts down
    assert est.paused_s(now + 30) == pytest.approx(26.0)
    est.fold(RunControl("resume", ts=now + 30))
    assert est.estimate(now + 32).seconds == pytest.approx(4.0)


def test_spread_of_measured_ratios_gives_the_band():
    names = [f"m{i}" for i in range(6)]
    est = EtaEstimator()
    est.fold(started(names))
    for name in names:
        est.fold(ConversionCost(name, 10, ts=0.0))
    t = 0.0
    for name, took in zip(names[:4], (5.0, 10.0, 10.0, 20.0)):  # ratios 0.5, 1, 1, 2
        t = convert(est, name, t, took)
    eta = est.estimate(t)
    assert eta.seconds == pytest.approx(20.0)  # two units x 10 x the median ratio 1
    assert eta.low == pytest.approx(2 * 10 * 0.875)  # the quartiles (inclusive) of 0.5, 1, 1, 2
    assert eta.high == pytest.approx(2 * 10 * 1.25)


def test_benchmarks_add_up_when_they_hold_conversions_and_overlap_when_not():
    for holds, expected in ((True, 10 + 2 * 3), (False, 10 + 3)):
        est = EtaEstimator()
        est.fold(started(["a", "b", "c"], holds=holds))
        for name in "abc":
            est.fold(ConversionCost(name, 5, ts=0.0))
        now = convert(est, "a", 0.0, 5.0, bench=3.0)
        assert est.estimate(now).seconds == pytest.approx(expected), holds


def test_unranked_units_cost_the_median_conversion_and_nothing_is_known_before_any():
    est = EtaEstimator()
    est.fold(started(["a", "b", "c"]))
    assert est.estimate(1.0) is None  # no ranking, nothing measured: no figure rather than a made-up one
    now = convert(est, "a", 0.0, 12.0)
    assert est.estimate(now).seconds == pytest.approx(24.0)


def test_finished_run_has_nothing_left():
    est = EtaEstimator()
    est.fold(started(["a"]))
    est.fold(ConversionCost("a", 5, ts=0.0))
    now = convert(est, "a", 0.0, 5.0)
    est.fold(RunFinished({"done": 1}, now, ts=now))
    assert est.estimate(now).seconds == 0.0


def test_time_a_host_benchmark_held_a_conversion_is_not_priced_twice():
    """--isolation pause: a conversion's clock runs on while a benchmark holds it; that benchmark is
    priced as a benchmark, so the conversion is priced without it."""
    est = EtaEstimator()
    est.fold(started(["a", "b", "c"], holds=True))
    for name in "abc":
        est.fold(ConversionCost(name, 10, ts=0.0))
    est.fold(StageStarted("b", "convert", ts=0.0))
    est.fold(StageStarted("a", "benchmark", ts=5.0))
    est.fold(StageFinished("a", "benchmark", True, 10.0, ts=15.0))
    est.fold(StageFinished("b", "convert", True, 20.0, ts=20.0))  # 20 s on its clock, 10 of them held
    assert est.ratios == [1.0]


def test_the_latest_conversions_price_what_is_left():
    """Largest first: the small models left are like the latest conversions, not the first ones."""
    names = [f"m{i}" for i in range(12)]
    est = EtaEstimator()
    est.fold(started(names))
    for name in names:
        est.fold(ConversionCost(name, 10, ts=0.0))
    t = 0.0
    for i, name in enumerate(names[:10]):  # ratio 1 for the first four, 3 for the six after them
        t = convert(est, name, t, 10.0 if i < 4 else 30.0)
    eta = est.estimate(t)
    assert eta.seconds == pytest.approx(2 * 30.0)
    assert eta.low <= eta.seconds <= eta.high and eta.low < 2 * 30.0
