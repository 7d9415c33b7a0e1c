"""Real conversions that check the converted graph does the model's work (issue 28, graph fidelity).

Hand-made models in tests/fixtures/fidelity carry their FLOPs worked out by hand; torchvision's
resnet18(zero_init_residual=True) is the case that was reported valid with 4 of its 20 convolutions.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections import Counter

import pytest

from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.sources.discover import discover
from tests.conftest import FIXTURES

pytestmark = pytest.mark.slow
HERE = FIXTURES / "fidelity"


def _constants(name: str):
    spec = importlib.util.spec_from_file_location(f"fidelity_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def convert(tmp_path_factory):
    """convert(source, weights="dense") -> (result, op counts of the .tflite or None)."""
    opts = ConvertOptions(timeout_s=240, recycle_after=50, workers=1, cache_dir=tmp_path_factory.mktemp("cache"))
    out = tmp_path_factory.mktemp("out")
    with pytest.MonkeyPatch.context() as mp:  # an empty torch.hub cache in the workers: checkpoints must be fetched
        mp.setenv("TORCH_HOME", str(tmp_path_factory.mktemp("torch-home")))
        converters = {w: Converter(dataclasses.replace(opts, weights=w), log_dir=out, n_workers=1)
                      for w in ("dense", "as-built")}
        converters["strict"] = Converter(dataclasses.replace(opts, strict_weights=True), log_dir=out, n_workers=1)

        def run(source: str, weights: str = "dense"):
            from nnlite_tui.core.runtimes.litert.graph import read_graph

            spec = discover([str(HERE / source)])[0]
            dest = out / f"{spec.name}-{weights}.tflite"
            result = converters[weights].convert(spec, dest)
            ops = Counter(op.type for op in read_graph(str(dest)).ops) if result["ok"] else None
            return result, ops

        yield run
        for c in converters.values():
            c.close()


def test_a_gate_at_zero_folds_its_branch_as_built_and_the_check_fails_it(convert):
    hand = _constants("zero_gate")
    result, _ = convert("zero_gate.py:make", "as-built")
    assert not result["ok"] and result["stage"] == "validate" and result["cause"] == "less-work"
    check = result["compute_check"]
    assert check["model_flops"] == hand.STEM + 2 * hand.BRANCH_CONV + hand.HEAD
    assert check["artifact_flops"] == hand.STEM + hand.HEAD  # the branch's two convolutions are gone
    assert result["error_message"].startswith(f"the converted graph does {check['ratio']:.1%} of PyTorch's work")
    assert result["weights"]["policy"] == "as-built" and result["weights"]["tensors"][0]["name"] == "gate"


def test_a_gate_redrawn_keeps_the_branch(convert):
    hand = _constants("zero_gate")
    result, ops = convert("zero_gate.py:make")
    assert result["ok"], result
    assert ops["CONV_2D"] == 3
    assert result["flops"] == result["model_flops"] == hand.STEM + 2 * hand.BRANCH_CONV + hand.HEAD
    assert result["compute_check"]["ratio"] == 1.0 and result["compute_check"]["verdict"] == "ok"
    assert [t["name"] for t in result["weights"]["tensors"]] == ["gate"] and result["weights"]["redrawn"] == 1


def test_conv3d_work_is_read_from_its_filter(convert):
    result, ops = convert("conv3d.py:make")
    assert result["ok"], result
    assert ops["CONV_3D"] == 1
    assert result["flops"] == _constants("conv3d").FLOPS == result["model_flops"]


def test_zero_init_residual_resnet18_keeps_every_convolution(convert):
    result, ops = convert("resnet_zero_init.py:make")
    assert result["ok"], result
    assert ops["CONV_2D"] == 20
    assert result["compute_check"]["ratio"] == pytest.approx(1.0, abs=0.02)
    weights = result["weights"]
    assert weights["redrawn"] == 8
    assert sorted(t["name"] for t in weights["tensors"]) == sorted(
        f"layer{i}.{j}.bn2.weight" for i in range(1, 5) for j in range(2))


def test_zero_init_residual_resnet18_as_built_is_caught(convert):
    result, _ = convert("resnet_zero_init.py:make", "as-built")
    assert not result["ok"] and result["cause"] == "less-work"
    check = result["compute_check"]
    assert check["ratio"] < 0.2
    assert check["artifact_by_op"]["CONV_2D"] < check["model_by_op"]["aten.convolution"] / 5


def test_a_guard_on_data_is_named_not_blamed_on_sampling(convert):
    result, _ = convert("guard_on_data.py:make")
    assert not result["ok"] and result["cause"] == "data-dependent"
    assert "samples random numbers" not in result["error_message"]
    assert "`if y.sum() > 0:" in result["error_message"] and "guard_on_data.py:16" in result["error_message"]
    assert result["construct"]["construct"]["line"] == 16


def test_strict_weights_keeps_a_requested_checkpoint_a_failure(convert):
    result, _ = convert("../coverage/ab/nn/nn/cov-downloads.py", "strict")
    assert not result["ok"] and result["stage"] == "instantiate" and result["cause"] == "downloads-weights"
    assert "resnet18-f37072fd.pth" in result["error_message"]
