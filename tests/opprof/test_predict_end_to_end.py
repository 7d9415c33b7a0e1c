"""`nnlite predict` end to end on real models, judged against an independent measurement.

`nnlite run --profile-ops` profiles three sample models (real conversions, LiteRT's profiler);
`nnlite predict` predicts the same models from those profiles; then a separate `nnlite run`, without
the profiler, in fresh benchmark processes afterwards, measures them again. The prediction is
compared with that second run's medians, never with the profile it was built from.

The models are the three whose ops are mostly under a µs (mnist_lenet 5 of 9, efficientnet_mini 70
of 123, vit_tiny 190 of 228): where the time a profile cannot resolve decides the prediction.

The tolerance: the median over the three of |prediction - measurement| / measurement within 25%, and
each within 35%, each widened by how far the two runs' own plain medians (the profiled run times its
models unprofiled too) lie apart: a prediction cannot agree with one measurement better than two
measurements of the same model agree with each other. This catches what breaks a prediction
outright: units, missing ops, double counting, a remainder left out of a tiny model. The 10% the
predictor aims at is not judged here: it predicts a run nothing interrupted from 20 profiled runs at
one moment, and on a busy machine that moment and the second run's median part by a fifth either
way while the two runs' plain medians agree within 3%. Seen: a CI machine, -27.2%, -19.5%, -4.5%
(median 19.5%); this machine under the suite's second worker, -19.3%, -13.4%, -0.8% with the runs
2.8%, 3.6%, 0.7% apart; with one core kept busy, +14.0%, -2.5%, +2.5%. On a quiet host the median
error was 3-7%. bench/predictor_accuracy.py judges the target against this host's noise floor, and
the half µs schema 3 added per XNNPACK operator is tested where blocks are read
(test_block_check.py).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = ("mnist_lenet", "efficientnet_mini", "vit_tiny")
MEDIAN_TOLERANCE, MODEL_TOLERANCE = 0.25, 0.35


def nnlite(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True, timeout=1500,
                          cwd=REPO)
    assert proc.returncode == 0, f"nnlite {' '.join(args)}: {proc.stdout[-2000:]}{proc.stderr[-3000:]}"
    return proc


def include() -> list[str]:
    return [arg for name in MODELS for arg in ("--include", name)]


def medians_ms(run: Path) -> dict[str, float]:
    reports = [json.loads(p.read_text()) for p in (run / "reports").glob("*.json")]
    return {r["model_name"]: r["duration"] / 1e6 for r in reports if r.get("valid")}



def predicted_ms(output: str) -> dict[str, float]:
    """The `pred ms` column of `nnlite predict`'s table (a model with no prediction is absent)."""
    rows = {}
    for line in output.splitlines():
        parts = line.split()
        if parts and parts[0] in MODELS and "no prediction" not in line:
            rows[parts[0]] = float(parts[1])
    return rows


@pytest.mark.slow
def test_predictions_from_real_profiles_match_a_separate_benchmark(tmp_path):
    profiled, again = tmp_path / "profiled", tmp_path / "again"
    nnlite("run", "sample_models", *include(), "--profile-ops", "xnnpack", "--out", str(profiled), "--headless")
    predicted = predicted_ms(nnlite("predict", "sample_models", *include(), "--from", str(profiled)).stdout)
    nnlite("run", "sample_models", *include(), "--out", str(again), "--headless")  # the independent measurement
    measured, first = medians_ms(again), medians_ms(profiled)
    assert set(predicted) == set(MODELS) == set(measured) == set(first), (predicted, measured, first)
    errors = {name: (predicted[name] - measured[name]) / measured[name] for name in MODELS}
    drift = {name: abs(first[name] - measured[name]) / measured[name] for name in MODELS}
    report = ", ".join(f"{n} {predicted[n]:.3f} vs {measured[n]:.3f} ms ({e:+.1%}; the runs {drift[n]:.1%} apart)"
                       for n, e in errors.items())
    assert statistics.median(abs(e) for e in errors.values()) <= MEDIAN_TOLERANCE + statistics.median(
        drift.values()), report
    assert all(abs(errors[n]) <= MODEL_TOLERANCE + drift[n] for n in MODELS), report
