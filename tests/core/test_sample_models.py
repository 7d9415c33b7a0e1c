"""The shipped sample models: LEMUR file format, forward pass and a training step in torch (fast), and one
real conversion checked in the LiteRT interpreter (slow). The conversion tests cover all of them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from nnlite_tui.core import lemur
from nnlite_tui.core.sources import discover

torch = pytest.importorskip("torch")

from nnlite_tui.core.convert_worker import build_model  # noqa: E402  (needs torch)

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


@pytest.mark.slow
def test_one_sample_converts_and_matches_in_the_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv("LITERT_TORCH_SHOW_PROGRESS", "n")
    litert_torch = pytest.importorskip("litert_torch")
    from ai_edge_litert.interpreter import Interpreter

    (spec,) = [s for s in SPECS if s.name == "resnet18_mini"]
    model, example = build_model(spec)
    path = tmp_path / "resnet18_mini.tflite"
    litert_torch.convert(model, (example,)).export(str(path))
    assert path.stat().st_size > 4 * 600_000  # fp32 weights: about 4 bytes per parameter

    it = Interpreter(model_path=str(path), num_threads=1)
    it.allocate_tensors()
    (inp,), (out,) = it.get_input_details(), it.get_output_details()
    assert tuple(inp["shape"]) == spec.in_shape and tuple(out["shape"]) == (1, 10)
    x = torch.randn(*spec.in_shape, generator=torch.Generator().manual_seed(1))
    it.set_tensor(inp["index"], x.numpy())
    it.invoke()
    with torch.no_grad():
        expected = model(x).numpy()
    assert abs(it.get_tensor(out["index"]) - expected).max() < 1e-4
