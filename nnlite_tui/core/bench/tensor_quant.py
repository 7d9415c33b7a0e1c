"""Per-tensor affine quantization of model inputs and outputs (numpy only).

A full-int8 model takes int8 (or uint8, int16) tensors with a scale and zero point: the value it
means is `scale * (q - zero_point)`. Feeding it raw random integers would exercise a different
input range than the float model sees; so every producer of inputs quantizes a float sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def quant_params(detail: Mapping[str, Any]) -> tuple[float, int] | None:
    """(scale, zero_point) of an interpreter tensor detail, or None when it is not quantized."""
    params = detail.get("quantization") or (0.0, 0)
    scale, zero_point = float(params[0]), int(params[1])
    return (scale, zero_point) if scale > 0.0 else None


def quantize(x, dtype, scale: float, zero_point: int):
    """round(x / scale) + zero_point, saturated to the integer dtype's range."""
    info = np.iinfo(dtype)
    q = np.round(np.asarray(x, dtype=np.float64) / scale) + zero_point
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(q, scale: float, zero_point: int):
    return (np.asarray(q, dtype=np.float64) - zero_point) * scale


def to_model_input(x, detail: Mapping[str, Any]):
    """A float sample as the tensor wants it: quantized when the tensor is, else cast."""
    dtype = detail["dtype"]
    params = quant_params(detail)
    if params is not None and np.issubdtype(dtype, np.integer):
        return quantize(x, dtype, *params)
    return np.asarray(x).astype(dtype)


def from_model_output(y, detail: Mapping[str, Any]):
    """An output as float64 values: dequantized when the tensor is quantized."""
    params = quant_params(detail)
    if params is not None and np.issubdtype(np.asarray(y).dtype, np.integer):
        return dequantize(y, *params)
    return np.asarray(y, dtype=np.float64)
