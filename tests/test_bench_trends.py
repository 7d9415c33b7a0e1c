"""bench/scale_trends.py on hand-made curves: the growth per 1,000 models and the projected wall time
that bench/lemur_scale.py prints."""

from __future__ import annotations

import math

import pytest

from bench.scale_trends import Trend, fit, intervals, project


def test_growth_per_1000_models_of_an_exact_line() -> None:
    models = [0, 200, 400, 800]
    rss = [100.0 + 0.05 * m for m in models]  # 50 MB more per 1,000 models, from 100 MB
    trend = fit(models, rss)
    assert trend is not None
    assert trend.per_1000 == pytest.approx(50.0)
    assert trend.start == pytest.approx(100.0)
    assert trend.per_1000_pct == pytest.approx(50.0)


def test_a_flat_noisy_figure_grows_by_about_nothing() -> None:
    models = list(range(0, 1000, 50))
    values = [200.0 + (3.0 if i % 2 else -3.0) for i in range(len(models))]
    trend = fit(models, values)
    assert trend is not None
    assert abs(trend.per_1000) < 2 * trend.slope_stderr * 1000 + 1e-9
    assert abs(trend.per_1000_pct or 0.0) < 2.0


def test_too_few_points_or_one_x_is_no_fit() -> None:
    assert fit([1, 2], [3.0, 4.0]) is None
    assert fit([5, 5, 5], [1.0, 2.0, 3.0]) is None


def test_intervals_give_each_step_its_rate_and_growth_per_model() -> None:
    steps = intervals([0, 3600, 7200, 9000], [0, 10, 30, 30], [0, 1000, 5000, 5100])
    assert [s.per_hour for s in steps] == [10.0, 20.0, 0.0]
    assert [s.mid_models for s in steps] == [5.0, 20.0, 30.0]
    assert [s.grown_per_model for s in steps] == [100.0, 200.0, None]


def test_projection_at_a_flat_rate_is_the_rest_at_that_rate() -> None:
    # 100 models in the first hour, then 100 models/hour: 900 more take 9 hours.
    p = project(1000, 100, 1.0, Trend(start=100.0, slope=0.0, slope_stderr=0.0, points=10))
    assert p.hours == pytest.approx(10.0)
    assert p.flat_hours == pytest.approx(10.0)


def test_projection_follows_a_falling_rate() -> None:
    rate = Trend(start=100.0, slope=-0.05, slope_stderr=0.0, points=10)  # 100/h falling to 50/h at 1,000
    p = project(1000, 100, 1.0, rate)
    # By hand: the integral of dn / (100 - 0.05 n) from 100 to 1000 is 20 ln(95 / 50).
    assert p.hours == pytest.approx(1.0 + 20 * math.log(95 / 50))
    # And by a midpoint sum, one model at a time.
    assert p.hours == pytest.approx(1.0 + sum(1 / (100 - 0.05 * (n + 0.5)) for n in range(100, 1000)), rel=1e-6)
    assert p.flat_hours == pytest.approx(10.0)  # the cumulative rate ignores the fall


def test_no_projection_when_the_fitted_rate_reaches_zero_first() -> None:
    p = project(1000, 100, 1.0, Trend(start=100.0, slope=-0.2, slope_stderr=0.0, points=10))
    assert p.hours is None
    assert p.flat_hours == pytest.approx(10.0)
