"""Quantized files store each distinct zero-point vector once: smaller, and the interpreter computes
exactly the same. efficientnet_mini (12,920 per-channel scales and zero points) is the case in point."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.sources.discover import discover
from nnlite_tui.core.runtimes.litert.compact import compact
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # real conversions and runs


@pytest.fixture(scope="module")
def efficientnet(tmp_path_factory):
    out = tmp_path_factory.mktemp("compact")
    specs = discover([str(REPO / "sample_models" / "efficientnet_mini.py")], precisions=("fp32", "int8"))
    options = ConvertOptions(workers=1, cache_dir=out / "cache", calibration_samples=8)
    with Converter(options, log_dir=None, n_workers=1) as converter:
        results = {r["model"]: r for r in converter.convert_many(specs, out / "tflite")}
    return out, results


def _outputs(path, count: int = 3) -> list[np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path), num_threads=1)
    interpreter.allocate_tensors()
    detail, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    rng = np.random.default_rng(0)
    got = []
    for _ in range(count):
        interpreter.set_tensor(detail["index"], rng.standard_normal(detail["shape"]).astype(np.float32))
        interpreter.invoke()
        got.append(interpreter.get_tensor(out["index"]).copy())
    return got


def test_efficientnet_int8_file_is_at_most_036_of_fp32_and_within_tolerance(efficientnet):
    _, results = efficientnet
    int8 = results["efficientnet_mini@int8"]
    assert int8["ok"], int8
    q = int8["quantization"]
    assert q["compaction"]["bytes_after"] == int8["artifact_bytes"] < q["compaction"]["bytes_before"]
    assert q["compaction"]["shared_vectors"] > 100
    # Before sharing the zero points it was 0.42x; the int8 weights alone are 0.25x of fp32's.
    assert q["size_ratio"] <= 0.36, q
    assert int8["accuracy"]["verdict"] == "ok"


def test_compacting_changes_no_output_of_the_quantizer_file(efficientnet, tmp_path):
    out, results = efficientnet
    from ai_edge_quantizer import quantizer, recipe

    fp32 = results["efficientnet_mini"]["artifact_path"]
    plain = tmp_path / "plain.tflite"
    # Dynamic-range int8 needs no calibration: a quantizer file with per-channel zero points, fast.
    quantizer.Quantizer(fp32, recipe.dynamic_wi8_afp32()).quantize().export_model(str(plain))
    compacted = tmp_path / "compacted.tflite"
    shutil.copy(plain, compacted)
    info = compact(compacted)
    assert info["bytes_after"] == compacted.stat().st_size < plain.stat().st_size == info["bytes_before"]
    for a, b in zip(_outputs(plain), _outputs(compacted)):
        assert np.array_equal(a, b)
