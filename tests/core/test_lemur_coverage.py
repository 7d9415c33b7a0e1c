"""Real conversions of the LEMUR-format fixture tree tests/fixtures/coverage in a real worker process.

Each fixture model stands for a family that failed before: torchvision imports, weights downloaded at
construction, captioning (image + tokens), text generation (token ids), ops the lowering lacks
(adaptive_max_pool2d, nn.Bilinear), sampling at inference, dict outputs, detection post-processing,
and AlexNet-style mutations whose small trials did not run.
"""

from __future__ import annotations

import pytest

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.causes import classify
from nnlite_tui.core.sources.discover import discover
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


def test_pretrained_weights_requested_at_construction_are_random_and_the_url_recorded(results):
    r = results["cov-downloads"]
    assert r["ok"], r
    assert r["weights"]["not_downloaded"] == ["https://download.pytorch.org/models/resnet18-f37072fd.pth"]
    assert r["params"] == 11_181_642  # resnet18's body with a 10-class head: the architecture of the pretrained path


def test_other_network_use_at_construction_still_fails_fast_offline(results):
    r = results["cov-downloads-url"]
    assert not r["ok"] and r["stage"] == "instantiate" and r["cause"] == "downloads-weights"
    assert r["error_message"].startswith("the model downloads weights at construction; nnlite converts offline")
    assert "example.com" in r["error_message"]
    assert r["seconds"] < 30  # refused at once, no network timeout


def test_a_model_that_only_falls_back_from_a_download_converts(results):
    assert results["cov-download-fallback"]["ok"], results["cov-download-fallback"]


def test_captioning_model_gets_image_and_caption_tokens(results):
    r = results["cov-captioning"]
    assert r["ok"], r
    assert r["task"] == "img-captioning"
    assert r["input_signature"] == [
        {"name": "images", "shape": [1, 64, 64, 3], "dtype": "float32"},
        # ids inside the table the captions index (its Embedding: the trial's vocabulary, out_shape[0])
        {"name": "captions", "shape": [1, 16], "dtype": "int64", "range": [0, 1000], "range_from": "embedding"},
    ]
    assert r["output_shapes"] == [[1, 15, 1000]]  # teacher forcing over 15 steps, vocabulary of the trial


def test_transformer_decoder_captioning_exports_without_the_causal_mask_guard(results):
    # nn.TransformerDecoder asks bool((tgt_mask == causal).all()) without an is_causal hint: a guard on
    # data that torch.export stops on (it used to be reported as sampling, for the SDPA kernel it calls)
    r = results["cov-captioning-transformer"]
    assert r["ok"], r
    assert r["output_shapes"] == [[1, 15, 500]]
    assert r["compute_check"]["verdict"] == "ok" and r["compute_check"]["ratio"] == pytest.approx(1.0, abs=0.01)
    # its two decoder layers are deep copies: the second's weights are re-drawn, or the converter merges them
    dups = [t for t in r["weights"]["tensors"] if t["reason"].startswith("equal to an earlier parameter")]
    assert dups and all(t["name"].startswith("dec.layers.1.") for t in dups)


def test_text_model_gets_token_ids(results):
    r = results["cov-text-lm"]
    assert r["ok"], r
    assert r["task"] == "txt-generation" and r["layout"] == "as-is"
    assert r["input_signature"] == [{"name": "tokens", "shape": [1, 32], "dtype": "int64", "range": [0, 1000],
                                     "range_from": "embedding"}]
    assert r["output_shapes"] == [[1, 32, 1000]]


def test_adaptive_max_pool_and_bilinear_are_rewritten_exactly(results):
    r = results["cov-adaptive-max-bilinear"]
    assert r["ok"], r
    assert r["max_abs_diff"] < 1e-4 and r["validation"]["strength"] == "strong"


def test_sampling_at_inference_converts_with_its_draws_and_says_how_it_was_validated(results):
    r = results["cov-sampling"]
    assert r["ok"], r
    assert r["validation"]["method"] == "distribution"
    assert r["validation"]["sampling"]["artifact_draws"] is True


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
    assert r["input_signature"] == [{"name": "tokens", "shape": [1, 32], "dtype": "int64", "range": [0, 1000],
                                     "range_from": "embedding"},
                                    {"name": "noise", "shape": [1, 100], "dtype": "float32"}]


def test_text_to_image_taking_strings_fails_with_a_task_reason(results):
    r = results["cov-text-to-image-prompts"]
    assert not r["ok"] and r["stage"] == "export" and r["cause"] == "unsupported-input"
    assert r["error_message"].startswith("text-to-image: forward does not take token ids")


def test_a_model_importing_lemurs_package_outside_a_checkout_says_what_to_do(results):
    r = results["cov-lemur-package"]
    assert not r["ok"] and r["stage"] == "import" and r["cause"] == "lemur-package"
    assert "the model imports LEMUR's package (nn-dataset, module 'ab')" in r["error_message"]
    assert "point nnlite at a full LEMUR checkout" in r["error_message"] and "install nn-dataset" in r["error_message"]


def test_a_model_of_a_full_lemur_checkout_imports_its_package_in_the_sandbox(tmp_path):
    """The checkout's ab/ (with ab/__init__.py) is what the model imports, visible in the sandbox."""
    specs = discover([str(FIXTURES / "lemur_checkout")])
    opts = ConvertOptions(timeout_s=240, workers=1, cache_dir=tmp_path / "cache")
    with Converter(opts, log_dir=tmp_path, n_workers=1) as conv:
        (r,) = conv.convert_many(specs, tmp_path, tmp_path)
    assert r["ok"], r
    assert r["params"] == 3 * 24 * 9 + 24 + 24 * 10 + 10  # the conv's width came from the package (HIDDEN)


def test_text_to_image_is_built_with_the_image_shape_lemur_trains_it_with(results):
    """LEMUR's Train passes Net the first batch's input shape, the images: a conditional VAE reads its
    channels and size from in_shape[1:] (where nnlite passed token ids' shape: IndexError)."""
    r = results["cov-text-to-image-vae"]
    assert r["ok"], r
    assert r["input_signature"][0] == {"name": "images", "shape": [1, 32, 32, 3], "dtype": "float32"}
    assert r["input_signature"][1]["name"] == "text_tokens" and r["input_signature"][1]["range"] == [0, 1000]
    assert r["output_shapes"] == [[1, 3, 32, 32]]


def test_a_detector_built_as_torchvisions_is_measured_as_its_backbone_and_head(results):
    r = results["cov-detection-cut"]
    assert r["ok"], r
    assert r["measured_graph"]["part"] == "backbone+head"
    assert "nms" in r["measured_graph"]["excluded"]
    assert r["compute_check"]["verdict"] == "ok"
