"""Real conversions of the LEMUR-format fixture tree tests/fixtures/coverage in a real worker process.

Each fixture model stands for a family that failed before: torchvision imports, weights downloaded at
construction, captioning (image + tokens), text generation (token ids), ops the lowering lacks
(adaptive_max_pool2d, nn.Bilinear), sampling at inference, dict outputs, detection post-processing,
and AlexNet-style mutations whose small trials did not run.
"""

from __future__ import annotations

import pytest

from nnlite_tui.core.convert import ConvertOptions, Converter
from nnlite_tui.core.failure_causes import classify
from nnlite_tui.core.sources import discover
from tests.conftest import FIXTURES

TREE = FIXTURES / "coverage"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every fixture model converted once, by name."""
    home = tmp_path_factory.mktemp("torch-home")  # an empty torch.hub cache: weights must be fetched
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCH_HOME", str(home))
        opts = ConvertOptions(timeout_s=240, recycle_after=50, workers=1,
                              cache_dir=tmp_path_factory.mktemp("cache"))
        out = tmp_path_factory.mktemp("out")
        with Converter(opts, log_dir=out, n_workers=1) as conv:
            specs = discover([str(TREE)])
            return {r["model"]: r for r in conv.convert_many(specs, out, out)}


def test_torchvision_models_and_ops_building_blocks_convert(results):
    r = results["cov-torchvision"]
    assert r["ok"], r
    assert r["task"] == "img-classification"
    assert r["input_signature"] == [{"name": "images", "shape": [1, 32, 32, 3], "dtype": "float32"}]


def test_torchvision_compiled_op_fails_with_a_clear_message(results):
    r = results["cov-torchvision-nms"]
    assert not r["ok"] and r["stage"] == "export" and r["cause"] == "torchvision-ops"
    assert r["error_message"] == ("torchvision's compiled operators are not available in this environment: "
                                  "install a torchvision build that matches your torch")


def test_weights_download_at_construction_fails_fast_offline(results):
    r = results["cov-downloads"]
    assert not r["ok"] and r["stage"] == "instantiate" and r["cause"] == "downloads-weights"
    assert r["error_message"].startswith("the model downloads weights at construction; nnlite converts offline")
    assert "resnet18" in r["error_message"]
    assert r["seconds"] < 30  # refused at once, no network timeout


def test_a_model_that_only_falls_back_from_a_download_converts(results):
    assert results["cov-download-fallback"]["ok"], results["cov-download-fallback"]


def test_captioning_model_gets_image_and_caption_tokens(results):
    r = results["cov-captioning"]
    assert r["ok"], r
    assert r["task"] == "img-captioning"
    assert r["input_signature"] == [
        {"name": "images", "shape": [1, 64, 64, 3], "dtype": "float32"},
        {"name": "captions", "shape": [1, 16], "dtype": "int64"},
    ]
    assert r["output_shapes"] == [[1, 15, 1000]]  # teacher forcing over 15 steps, vocabulary of the trial


def test_text_model_gets_token_ids(results):
    r = results["cov-text-lm"]
    assert r["ok"], r
    assert r["task"] == "txt-generation" and r["layout"] == "as-is"
    assert r["input_signature"] == [{"name": "tokens", "shape": [1, 32], "dtype": "int64"}]
    assert r["output_shapes"] == [[1, 32, 1000]]


def test_adaptive_max_pool_and_bilinear_are_rewritten_exactly(results):
    r = results["cov-adaptive-max-bilinear"]
    assert r["ok"], r
    assert r["max_abs_diff"] < 1e-4 and r["validation"]["strength"] == "strong"


def test_sampling_at_inference_is_a_clear_failure(results):
    r = results["cov-sampling"]
    assert not r["ok"] and r["cause"] == "samples-at-inference"
    assert r["error_message"].startswith("the model samples random numbers at inference")


def test_segmentation_dict_output_is_flattened(results):
    r = results["cov-segmentation"]
    assert r["ok"], r
    assert r["task"] == "img-segmentation"
    assert r["output_shapes"] == [[1, 91, 64, 64], [1, 91, 64, 64]]


def test_detection_post_processing_fails_with_a_task_reason(results):
    r = results["cov-detection"]
    assert not r["ok"] and r["task"] == "obj-detection" and r["cause"] == "data-dependent"
    assert r["stage"] == "export"
    assert r["error_message"].startswith("obj-detection: the eval-mode output")


def test_input_size_comes_from_trials_that_learned(results):
    # its 32x32 trials stayed at chance: converted at 64x64 directly, no retry
    r = results["cov-alexnet-small"]
    assert r["ok"], r
    assert r["input_shape"] == [1, 3, 64, 64] and "input_size_retry" not in r


def test_output_size_too_small_retries_once_at_the_next_recorded_size(results):
    r = results["cov-alexnet-retry"]
    assert r["ok"], r
    assert r["input_shape"] == [1, 3, 64, 64]
    retry = r["input_size_retry"]
    assert retry["from"] == [1, 3, 32, 32] and retry["to"] == [1, 3, 64, 64]
    assert "Output size is too small" in retry["reason"]


def test_every_failure_has_a_cause_the_bench_can_group_by(results):
    for r in results.values():
        assert r.get("cause", "ok" if r["ok"] else None) == classify(r), r


def test_text_to_image_gets_token_ids_and_noise(results):
    r = results["cov-text-to-image"]
    assert r["ok"], r
    assert r["task"] == "txt-image" and r["output_shapes"] == [[1, 3, 32, 32]]
    assert r["input_signature"] == [{"name": "tokens", "shape": [1, 32], "dtype": "int64"},
                                    {"name": "noise", "shape": [1, 100], "dtype": "float32"}]


def test_text_to_image_taking_strings_fails_with_a_task_reason(results):
    r = results["cov-text-to-image-prompts"]
    assert not r["ok"] and r["stage"] == "export" and r["cause"] == "unsupported-input"
    assert r["error_message"].startswith("text-to-image: forward does not take token ids")
