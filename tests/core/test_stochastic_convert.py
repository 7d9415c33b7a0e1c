"""Models that draw random numbers at inference, through the real converter: the hand-made family in
tests/fixtures/stochastic converts with its sampling in both runtimes, its report says how it was
validated, and a conversion whose deterministic part is wrong is caught (slow: real conversions)."""

from __future__ import annotations

import contextlib

import pytest

torch = pytest.importorskip("torch")

from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.convert.worker.validation import VALIDATE_RTOL  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

TREE = FIXTURES / "stochastic"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every fixture model converted once in LiteRT, the two that sample everywhere in ExecuTorch too."""
    opts = ConvertOptions(timeout_s=240, recycle_after=50, workers=1, cache_dir=tmp_path_factory.mktemp("cache"))
    out = tmp_path_factory.mktemp("out")
    specs = discover([str(TREE)], runtimes=("litert",)) + \
        discover([str(TREE)], include=["st-bayes*", "st-dropout*"], runtimes=("executorch",))
    with Converter(opts, log_dir=out, n_workers=1) as conv:
        return {r["model"]: r for r in conv.convert_many(specs, out, out)}


@pytest.mark.parametrize("name", ["st-bayes-linear", "st-dropout-train", "st-bayes-linear@executorch",
                                  "st-dropout-train@executorch"])
def test_a_model_that_samples_is_valid_with_its_draws_and_validated_by_distribution(results, name):
    r = results[name]
    assert r["ok"], r
    v = r["validation"]
    assert v["method"] == "distribution"
    sampling = v["sampling"]
    assert sampling["artifact_draws"] is True and sampling["export"] == "rand-randn"
    assert sampling["draws"]  # named, e.g. "aten.randn: draws on every call"
    figures = sampling["distribution"]
    assert figures["runs"] == 64 and figures["sampled_elements"] > 0
    assert figures["mean_t_max"] <= figures["mean_t_limit"]
    low, high = figures["var_ratio_limits"]
    assert low <= figures["var_ratio_min"] <= figures["var_ratio_max"] <= high
    # the deterministic part: the model at its draws' mean, converted and compared exactly
    assert sampling["at_mean"]["max_abs_diff"] == r["max_abs_diff"] < VALIDATE_RTOL
    assert v["strength"] == "strong" and v["inputs"] == 2


def test_a_draw_that_decides_a_branch_without_changing_the_output_is_valid_and_compared_exactly(results):
    r = results["st-branch-equal"]
    assert r["ok"], r
    v = r["validation"]
    assert v["method"] == "exact"
    assert v["sampling"]["artifact_draws"] is False and v["sampling"]["export"] == "at-mean"
    assert r["max_abs_diff"] < VALIDATE_RTOL


def test_a_draw_that_decides_a_branch_that_changes_the_output_fails_with_what_to_change(results):
    r = results["st-branch-differ"]
    assert not r["ok"] and r["cause"] == "samples-at-inference" and r["stage"] == "validate"
    assert "its draws convert only at their mean" in r["error_message"]
    assert "torch.where(torch.rand(...) < p, a, b)" in r["error_message"]


def _wrong_conv(scale: float, shift: float):
    """A converter that gets the convolutions wrong: only while exporting, PyTorch's own outputs stay right."""
    F = torch.nn.functional
    original_conv = F.conv2d
    from nnlite_tui.core.convert.worker import lowering_rewrites

    original_installed = lowering_rewrites.installed

    @contextlib.contextmanager
    def installed():
        with original_installed():
            F.conv2d = lambda *a, **k: original_conv(*a, **k) * scale + shift
            try:
                yield
            finally:
                F.conv2d = original_conv

    return installed


@pytest.mark.parametrize(("scale", "shift", "caught_by"), [
    (1.02, 0.0, "output differs from PyTorch: max abs diff"),  # too small for the distribution, not for the mean
    (1.0, 1.0, "output differs from PyTorch in distribution over 64 runs"),
], ids=["2%-off", "shifted"])
def test_a_wrong_deterministic_part_is_caught(tmp_path, monkeypatch, scale, shift, caught_by):
    from nnlite_tui.core.convert.worker.errors import StageError, explained
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.runtimes.litert import export as litert_export

    spec = discover([str(TREE / "st-dropout-train.py")])[0]
    monkeypatch.setattr(litert_export.lowering_rewrites, "installed", _wrong_conv(scale, shift))
    with pytest.raises(StageError) as failed:
        convert_one(spec, str(tmp_path / "m.tflite"), get_runtime("litert"))
    fields = explained(failed.value, spec, get_runtime("litert").converter_frames)
    assert fields["stage"] == "validate" and fields["cause"] == "output-mismatch"
    assert caught_by in fields["error_message"]
