"""The shipped sample models: LEMUR file format, forward pass and a training step in torch (fast), and every
one converted by the real converter and validated in the LiteRT interpreter against PyTorch (slow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from nnlite_tui.core.sources import lemur
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.worker.model import build_model
from nnlite_tui.core.sources.discover import discover

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SPECS = discover([str(SAMPLES)])
IDS = [s.name for s in SPECS]
MAX_PARAMS = 3_000_000


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # The CI machine has 2 shared cores; torch's default threads oversubscribe them (100x slower here).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_there_are_enough_distinct_samples():
    assert len(SPECS) >= 8
    assert {"plain_cnn", "mobilenetv2_mini", "resnet18_mini", "mobilenetv1_mini", "efficientnet_mini",
            "vit_tiny", "mnist_lenet", "squeezenet_mini"} <= set(IDS)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_lemur_file_format(spec):
    mf = lemur.read_model_file(Path(spec.file))
    assert mf.error is None and mf.has_net
    assert mf.hyperparameters == ("dropout", "lr", "momentum")
    ispec = importlib.util.spec_from_file_location(f"sample_{spec.name}", spec.file)
    module = importlib.util.module_from_spec(ispec)
    ispec.loader.exec_module(module)
    assert module.supported_hyperparameters() == {"lr", "momentum", "dropout"}
    for method in ("__init__", "forward", "train_setup", "learn"):
        assert callable(getattr(module.Net, method))


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_forward_pass_and_size(spec):
    model, example = build_model(spec)
    assert tuple(example.shape) == spec.in_shape
    with torch.no_grad():
        y = model(example)
    assert tuple(y.shape) == (1, 10) and torch.isfinite(y).all()
    assert sum(p.numel() for p in model.parameters()) < MAX_PARAMS


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_other_shapes(spec):
    # Models read channels, size and classes from their arguments, so other inputs work too.
    (other,) = discover([spec.file], in_shape=(1, 3, 48, 48), num_classes=100)
    model, example = build_model(other)
    with torch.no_grad():
        assert tuple(model(example).shape) == (1, 100)


@pytest.mark.parametrize("name", ["plain_cnn", "vit_tiny"])
def test_training_step(name):
    """train_setup/learn follow LEMUR's (SGD on prm lr/momentum); every sample carries the same pair."""
    (spec,) = [s for s in SPECS if s.name == name]
    model, _ = build_model(spec)
    model.train_setup(spec.prm)
    assert model.optimizer.defaults["lr"] == spec.prm["lr"] == 0.01
    before = [p.detach().clone() for p in model.parameters()]
    model.learn([(torch.randn(2, *spec.in_shape[1:]), torch.tensor([1, 7]))])
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


@pytest.fixture(scope="module")
def converter(tmp_path_factory):
    """One worker for every sample: its torch/litert_torch import is paid once; a fresh cache, so each
    model is really converted."""
    opts = ConvertOptions(workers=1, timeout_s=600, cache_dir=tmp_path_factory.mktemp("sample-cache"))
    conv = Converter(opts, log_dir=tmp_path_factory.mktemp("sample-logs"), n_workers=1)
    yield conv
    conv.close()


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_sample_converts_and_matches_pytorch_in_the_interpreter(spec, converter, tmp_path):
    dest = tmp_path / f"{spec.name}.tflite"
    result = converter.convert(spec, dest, tmp_path / f"{spec.name}.log")
    assert result["ok"], (result["stage"], result["error_type"], result["error_message"])
    assert result["cached"] is False
    batch, channels, height, width = spec.in_shape
    assert result["layout"] == "NHWC" and result["artifact_input_shape"] == [batch, height, width, channels]
    assert result["output_shapes"] == [[1, 10]]
    # The worker ran the .tflite in the LiteRT interpreter on two inputs and compared with PyTorch.
    assert result["validation"]["inputs"] == 2
    assert 0 <= result["max_abs_diff"] < 1e-3
    assert dest.stat().st_size == result["artifact_bytes"] > 3 * result["params"]  # fp32: ~4 bytes a weight
