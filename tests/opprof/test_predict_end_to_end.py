"""`nnlite predict` end to end on real models, judged against an independent measurement.

`nnlite run --profile-ops` profiles three sample models (real conversions, LiteRT's profiler);
`nnlite predict` predicts the same models from those profiles; then a separate `nnlite run`, without
the profiler, in fresh benchmark processes afterwards, measures them again. The prediction is
compared with that second run's medians, never with the profile it was built from.

The models are the three whose ops are mostly under a µs (mnist_lenet 5 of 9, efficientnet_mini 70
of 123, vit_tiny 190 of 228): where the time a profile cannot resolve decides the prediction. The
tolerance: the median over the three of |prediction - measurement| / measurement within 10%, and
each within 35%, each widened by how far the two runs' own plain medians (the profiled run times its
models unprofiled too) lie apart: a prediction cannot agree with one measurement better than two
measurements of the same model agree with each other (on a CI machine all three predictions fell
4-27% short of the second run, median 19.5%, with nothing to tell drift from error). Two plain runs of these models on this host (busy, load average 9-10) differed by
0.9%, 3.7% and 1.4%; in the runs of this test it was written against, the median error was 3-7%
(each model within 8%); a single model can move by a third in a slow phase of the VM
(bench/README.md, "This host's drift"), which the median of three absorbs once. What the 10%
rejects, on one such pair of profile and measurement: schema 3's half µs per XNNPACK operator
(+15.6%, +8.0%, +21.1%: median 15.6%) and the run's time outside its ops left out (-22.9%, -16.7%,
-19.1%: median 19.1%). Units, missing ops or double counting fail the per-model bound.
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
MEDIAN_TOLERANCE, MODEL_TOLERANCE = 0.10, 0.35


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
