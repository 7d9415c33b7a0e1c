"""The host's check of a quantized input fill: the model's parameters, and the moments of what was fed."""

from __future__ import annotations

import numpy as np
import pytest

from nnlite_tui.core.bench.input_fill import make_input
from nnlite_tui.core.bench.input_check import check_block, expected_input, fill_record, quantized_normal_moments, verify

SHAPE, SEED = (1, 28, 28, 1), 0
MODEL = {"dtype": "int8", "scale": 0.0235, "zero_point": -3}
DETAIL = {"dtype": np.int8, "quantization": (MODEL["scale"], MODEL["zero_point"])}


def _fed(scale=MODEL["scale"], zero_point=MODEL["zero_point"], seed=SEED):
    """A fill that reports the model's parameters but quantized with (scale, zero_point)."""
    return fill_record(DETAIL, make_input(SHAPE, np.int8, seed, (scale, zero_point)))


def test_the_exact_moments_match_a_large_quantized_sample():
    big = make_input((400_000,), np.int8, 1, (MODEL["scale"], MODEL["zero_point"])).astype(np.float64)
    mean, std = quantized_normal_moments("int8", MODEL["scale"], MODEL["zero_point"])
    assert abs(big.mean() - mean) < 0.3 and abs(big.std() - std) < 0.2


@pytest.mark.parametrize("seed", range(5))
def test_a_correct_fill_is_verified(seed):
    check = verify([_fed(seed=seed)], MODEL)
    assert check["verified"] is True and check["problems"] == [], check


@pytest.mark.parametrize("scale, zero_point, wrong", [
    (MODEL["scale"] * 2, MODEL["zero_point"], "standard deviation"),   # scale doubled
    (MODEL["scale"] / 1.3, MODEL["zero_point"], "standard deviation"),  # a different calibration's scale
    (1.0 / 127, MODEL["zero_point"], "standard deviation"),             # a default [-1, 1] range
    (MODEL["scale"], MODEL["zero_point"] + 20, "mean"),                 # zero point shifted
    (MODEL["scale"], 0, None),                                          # zero point ignored: too close to see
])
def test_a_wrongly_applied_scale_or_zero_point_is_caught_by_the_moments(scale, zero_point, wrong):
    check = verify([_fed(scale, zero_point)], MODEL)
    if wrong is None:  # |zero point| 3 on 784 elements is within the noise of the mean: the limit of this check
        assert check["verified"] is True
        return
    assert check["verified"] is False and any(wrong in p for p in check["problems"]), check


def test_parameters_read_from_the_wrong_place_are_named():
    record = fill_record({"dtype": np.int8, "quantization": (0.05, 0)}, make_input(SHAPE, np.int8, 0, (0.05, 0)))
    check = verify([record], MODEL)
    assert check["verified"] is False and check["problems"] == ["input quantized with scale 0.05, the model's is 0.0235"]
    uint8 = fill_record({"dtype": np.uint8, "quantization": (0.0235, 125)}, make_input(SHAPE, np.uint8, 0, (0.0235, 125)))
    assert verify([uint8], MODEL)["problems"] == ["input fed as uint8, the model takes int8"]
    assert verify(None, MODEL)["verified"] is None  # an app that does not report its fill is not judged


def test_a_wrong_fill_makes_the_benchmark_invalid_and_a_float_model_is_not_checked():
    conversion = {"artifact_input_dtype": "int8",
                  "quantization": {"input_quantization": {"scale": MODEL["scale"], "zero_point": MODEL["zero_point"]}}}
    assert expected_input(conversion) == MODEL
    good = {"valid": True, "input_fill": [_fed()], "stats": {"median_ns": 1.0}}
    assert check_block(good, conversion)["input_check"]["verified"] is True and check_block(good, conversion)["valid"]
    bad = check_block({**good, "input_fill": [_fed(scale=MODEL["scale"] * 2)]}, conversion)
    assert bad["valid"] is False and bad["error_stage"] == "input" and "standard deviation" in bad["error_message"]
    fp32 = {"artifact_input_dtype": "float32", "quantization": None}
    assert expected_input(fp32) is None and check_block(good, fp32) is good
