"""Token inputs are filled inside their embedding table: the range read from the model in the worker
(convert/worker/token_ranges.py), carried in the input signature, used by the benchmark's fill
(bench/input_fill.py) and recorded and checked in `input_fill` (bench/range_check.py)."""

from __future__ import annotations

import numpy as np
import pytest

from nnlite_tui.core.bench.input_fill import make_input
from nnlite_tui.core.bench.range_check import check_ranges
from nnlite_tui.core.outcomes import ConversionResult
from tests.conftest import FIXTURES

CAPTIONING = FIXTURES / "tokens" / "captioning_vocab50.py"


def test_the_ranged_integer_fill_stays_in_low_high_and_covers_it():
    ids = make_input((1, 5000), np.int32, 0, None, (3, 10))
    assert ids.dtype == np.int32 and ids.min() == 3 and ids.max() == 9
    # a discrete uniform on 3..9: mean 6, variance (7^2 - 1) / 12 = 4
    assert abs(ids.mean() - 6.0) < 6 * 2 / np.sqrt(5000) and abs(ids.var() - 4.0) < 0.3
    assert make_input((1, 8), np.int64, 0).max() < 127  # no range: the small non-negative ids as before
    floats = make_input((1, 8), np.float32, 0, None, (0, 2))  # a range means nothing to a float input
    assert floats.dtype == np.float32 and floats.min() < 0


def test_the_range_travels_from_the_signature_to_the_artifact():
    result = ConversionResult.from_converter({
        "ok": True, "model": "m", "artifact_path": "/x/m.tflite",
        "input_signature": [{"name": "images", "shape": [1, 8, 8, 3], "dtype": "float32"},
                            {"name": "captions", "shape": [1, 16], "dtype": "int64", "range": [0, 50]}]})
    assert result.artifact.input_ranges == (None, (0, 50))
    assert ConversionResult.from_converter({"ok": True, "model": "m", "artifact_path": "/x"}).artifact.input_ranges == ()


def _block(record: dict) -> dict:
    return {"valid": True, "input_fill": [{"dtype": "float32", "min": -3.0, "max": 3.0}, record]}


CONVERSION = {"input_signature": [{"name": "a", "dtype": "float32"}, {"name": "b", "dtype": "int32", "range": [0, 50]}]}


@pytest.mark.parametrize(("record", "problem"), [
    ({"dtype": "int32", "min": 0.0, "max": 49.0, "range": [0, 50]}, None),
    ({"dtype": "int32", "min": 0.0, "max": 126.0}, "input 1 was filled without its range [0, 50); "
                                                    "input 1 was fed values in [0, 126], outside [0, 50)"),
    ({"dtype": "int32", "min": 0.0, "max": 50.0, "range": [0, 50]}, "input 1 was fed values in [0, 50], outside [0, 50)"),
    ({"dtype": "int32", "min": 0.0, "max": 9.0, "range": [0, 10]}, "input 1 was filled in [0, 10), its conversion "
                                                                    "recorded [0, 50)"),
])
def test_a_fill_outside_the_recorded_range_makes_the_benchmark_invalid(record, problem):
    block = check_ranges(_block(record), CONVERSION)
    assert block["valid"] is (problem is None)
    assert block.get("error_message") == problem


def test_the_worker_finds_the_table_each_token_input_feeds():
    torch = pytest.importorskip("torch")
    from nnlite_tui.core.convert.worker.token_ranges import embedding_sizes

    class TwoTables(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.words, self.positions = torch.nn.Embedding(50, 4), torch.nn.Embedding(8, 4)
            self.kinds = torch.nn.Embedding(3, 4)

        def forward(self, images, captions, kinds, lengths):
            steps = torch.arange(captions.shape[1] - 1)  # positions: not an input, no range for it
            x = self.words(captions[:, :-1]) + self.positions(steps) + self.kinds(kinds)
            return x.sum() * images.mean() * lengths.sum()

    args = (torch.randn(1, 3, 4, 4), torch.randint(0, 50, (1, 9)), torch.randint(0, 3, (1, 1)), torch.tensor([9]))
    assert embedding_sizes(TwoTables().eval(), args) == {1: 50, 2: 3}  # `lengths` indexes no table


@pytest.mark.slow
def test_a_captioning_model_of_vocabulary_50_benchmarks_on_the_host_inside_its_table(tmp_path):
    """Converted in this process, then timed by the host protocol with and without the recorded range."""
    pytest.importorskip("litert_torch")
    from nnlite_tui.core.bench.protocol import benchmark_result
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover

    spec = discover([f"{CAPTIONING}:make"])[0]
    converted = ConversionResult.from_converter({"model": spec.name, **convert_one(
        spec, str(tmp_path / "cap.tflite"), get_runtime("litert"))})
    assert converted.details["input_signature"][1] == {"name": "args_1", "shape": [1, 12], "dtype": "int64",
                                                       "range": [0, 50], "range_from": "embedding"}
    artifact = converted.artifact
    from nnlite_tui.core.runtimes.litert.token_tables import table_rows

    assert table_rows(artifact.path) == {1: 50}  # the graph's EMBEDDING_LOOKUP table agrees with PyTorch's
    settings = BenchSettings(warmup=1, runs=3, min_seconds=0.0, warmup_seconds=0.0)
    unranged = benchmark_result(artifact.path, settings, profile=False)
    assert not unranged["valid"] and "index out of bounds" in unranged["error_message"]
    ranged = check_ranges(benchmark_result(artifact.path, settings, profile=False, ranges=artifact.input_ranges),
                          converted.details)
    assert ranged["valid"], ranged.get("error_message")
    fill = ranged["input_fill"][1]
    assert fill["range"] == [0, 50] and 0 <= fill["min"] and fill["max"] <= 49


@pytest.mark.slow
def test_ids_looked_up_without_an_embedding_get_the_range_of_the_graphs_table(tmp_path):
    pytest.importorskip("litert_torch")
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover

    spec = discover([f"{FIXTURES / 'tokens' / 'indexed_table.py'}:make"])[0]
    result = convert_one(spec, str(tmp_path / "t.tflite"), get_runtime("litert"))
    assert result["input_signature"][1] == {"name": "args_1", "shape": [1, 6], "dtype": "int64", "range": [0, 40],
                                            "range_from": "graph table"}


def test_a_lemur_models_tokens_are_drawn_again_inside_a_table_smaller_than_the_trials_vocabulary():
    torch = pytest.importorskip("torch")
    from types import SimpleNamespace

    from nnlite_tui.core.convert.worker.token_ranges import ranged_checks
    from nnlite_tui.core.sources import task_inputs

    class Captioner(torch.nn.Module):  # its table has 50 rows; the trial says a vocabulary of 1000
        def __init__(self):
            super().__init__()
            self.words = torch.nn.Embedding(50, 4)

        def forward(self, images, captions):
            return self.words(captions).sum(-1) * images.mean()

    spec = SimpleNamespace(kind="lemur", task="img-captioning", prm={}, out_shape=(1000,), in_shape=(1, 3, 8, 8))
    model = Captioner().eval()
    checks = [task_inputs.build(spec, model, seed) for seed in (0, 1)]
    assert max(int(c.args[1].max()) for c in checks) >= 50  # as the task drew them: PyTorch itself would fail
    ranged = ranged_checks(spec, model, checks)
    assert all(int(c.args[1].max()) < 50 for c in ranged) and len(ranged) == 2
    assert not torch.equal(ranged[0].args[1], ranged[1].args[1])  # still two different checks
    assert ranged[0].signature(nhwc=True)[1] == {"name": "captions", "shape": [1, 16], "dtype": "int64",
                                                 "range": [0, 50], "range_from": "embedding"}


def test_an_app_that_cannot_be_told_the_ranges_is_refused_before_launch():
    from nnlite_tui.core.devices.adb_extras import range_extras
    from nnlite_tui.core.devices.base import DeviceError

    assert range_extras((None, (0, 50)), 3, "s") == {"input_ranges": "[null,[0,50]]"}
    with pytest.raises(DeviceError, match="speaks protocol 2; the installed benchmark app does not take the "
                                          "input_ranges extra") as refused:
        range_extras((None, (0, 50)), 2, "s")
    assert refused.value.kind == "install"
