"""Was a quantized model fed the input its tensor asks for? The benchmark's record, checked on the host.

A full-int8 model takes int8 inputs with a scale and zero point; the benchmark (host, simulated app,
real app) fills them with a standard-normal sample quantized as `clamp(round(x / scale) + zp)`.
A filler that reads the wrong parameters, or applies them wrongly, still produces a timing, just of
the model on inputs it never sees (saturated, or all near zero). So every benchmark reports, per
input, the parameters it read from the model and the mean and standard deviation of the integers
it fed (`input_fill`), and the host checks both against the tensor parameters the conversion
recorded:
- the dtype, scale and zero point must be the model's (a filler that read the wrong tensor field);
- the integers' mean and standard deviation must be those of a standard normal quantized with the
  model's parameters (computed exactly from the normal CDF), within six standard errors for the
  tensor's element count (a filler that read the right parameters and applied them wrongly).
The generators differ between Python and Java, so the values cannot be compared one by one; the
moments can. A zero point off by a few units on a small tensor stays within the noise of the mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from nnlite_tui.core.bench.block import FillRecord, InputDetail

KEY = "input_fill"
SIGMAS = 6.0  # standard errors a moment may stray before the fill counts as wrong
ERROR_TYPE = "InputQuantizationMismatch"


class ExpectedInput(TypedDict):
    """The model's input quantization as its conversion recorded it."""

    dtype: str
    scale: float
    zero_point: int


class Moments(TypedDict):
    mean: float
    std: float
    mean_tolerance: float
    std_tolerance: float


class _InputCheckCommon(TypedDict):
    verified: bool | None  # None: nothing was reported
    expected: ExpectedInput
    problems: list[str]


class InputCheck(_InputCheckCommon, total=False):
    """The block's `input_check`."""

    moments: Moments  # of a standard normal quantized with the model's parameters


def fill_record(detail: InputDetail, fed: Any, value_range: Sequence[int] | None = None) -> FillRecord:
    """What the benchmark fed one input: the parameters it read, the moments and extremes of the
    values, and the [low, high) it was told to stay inside (an integer input's range), if any."""
    import numpy as np

    from nnlite_tui.core.bench.tensor_quant import quant_params

    params = quant_params(detail)
    values = np.asarray(fed, dtype=np.float64).ravel()
    record: FillRecord = {"dtype": np.asarray(fed).dtype.name, "scale": params[0] if params else 0.0,
              "zero_point": params[1] if params else 0, "elements": int(values.size),
              "mean": float(values.mean()) if values.size else 0.0, "std": float(values.std()) if values.size else 0.0,
              "min": float(values.min()) if values.size else None, "max": float(values.max()) if values.size else None}
    if value_range is not None and not params and np.issubdtype(np.asarray(fed).dtype, np.integer):  # what it applied to
        record["range"] = [int(value_range[0]), int(value_range[1])]
    return record


def expected_input(conversion: Mapping[str, Any]) -> ExpectedInput | None:
    """The model's input quantization as its conversion recorded it; None for a float input."""
    q = (conversion.get("quantization") or {}).get("input_quantization")
    dtype = conversion.get("artifact_input_dtype")
    if not q or not dtype or float(q.get("scale") or 0.0) <= 0.0:
        return None
    return {"dtype": str(dtype), "scale": float(q["scale"]), "zero_point": int(q["zero_point"])}


def quantized_normal_moments(dtype: str, scale: float, zero_point: int) -> tuple[float, float]:
    """Mean and standard deviation of clamp(round(x / scale) + zero_point) for x ~ N(0, 1)."""
    import numpy as np  # not at module level: the runner imports this module and never needs numpy otherwise

    info = np.iinfo(np.dtype(dtype))
    k = np.arange(info.min, info.max + 1, dtype=np.float64)
    upper = (k - zero_point + 0.5) * scale
    upper[-1] = math.inf  # the top value takes the whole upper tail (saturation), the bottom the lower
    cdf = np.array([0.5 * (1.0 + math.erf(u / math.sqrt(2.0))) for u in upper])
    p = np.diff(np.concatenate(([0.0], cdf)))
    mean = float((p * k).sum())
    return mean, float(math.sqrt(max((p * (k - mean) ** 2).sum(), 0.0)))


def verify(records: Sequence[Mapping[str, Any]] | None, expected: ExpectedInput) -> InputCheck:
    """{"verified": True | False | None, "expected", "problems"}; None when nothing was reported."""
    out: InputCheck = {"verified": None, "expected": ExpectedInput(**expected), "problems": []}
    if not records:
        out["problems"].append("the benchmark did not report how it filled its inputs")
        return out
    got = records[0]
    problems = out["problems"]
    if got.get("dtype") != expected["dtype"]:
        problems.append(f"input fed as {got.get('dtype')}, the model takes {expected['dtype']}")
    elif not math.isclose(float(got.get("scale") or 0.0), expected["scale"], rel_tol=1e-5):
        problems.append(f"input quantized with scale {got.get('scale'):.6g}, the model's is {expected['scale']:.6g}")
    elif int(got.get("zero_point") or 0) != expected["zero_point"]:
        problems.append(f"input quantized with zero point {got.get('zero_point')}, "
                        f"the model's is {expected['zero_point']}")
    else:
        mean, std = quantized_normal_moments(expected["dtype"], expected["scale"], expected["zero_point"])
        n = max(int(got.get("elements") or 0), 1)
        mean_tol, std_tol = SIGMAS * std / math.sqrt(n), SIGMAS * std / math.sqrt(2 * n)
        out["moments"] = {"mean": mean, "std": std, "mean_tolerance": mean_tol, "std_tolerance": std_tol}
        if abs(float(got["mean"]) - mean) > mean_tol:
            problems.append(f"fed integers' mean {got['mean']:.3f}, a standard normal quantized with the model's "
                            f"scale and zero point gives {mean:.3f} (+-{mean_tol:.3f})")
        if abs(float(got["std"]) - std) > std_tol:
            problems.append(f"fed integers' standard deviation {got['std']:.3f}, a standard normal quantized with "
                            f"the model's scale and zero point gives {std:.3f} (+-{std_tol:.3f})")
    out["verified"] = not problems
    return out


def check_block(block: Mapping[str, Any], conversion: Mapping[str, Any]) -> Mapping[str, Any]:
    """The benchmark block with `input_check` added for a quantized input; a fill that is provably
    wrong makes it invalid at stage `input` (its timings are of inputs the model never sees)."""
    expected = expected_input(conversion)
    if expected is None or not block.get("valid"):
        return block
    check = verify(block.get(KEY), expected)
    out = {**block, "input_check": check}
    if check["verified"] is False:
        out.update(valid=False, error_stage="input", error_type=ERROR_TYPE, error_message="; ".join(check["problems"]))
    return out
