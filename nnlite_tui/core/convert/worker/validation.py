"""Validation of an artifact against PyTorch eager, whatever the runtime, in the conversion worker.

Every output must match PyTorch's within VALIDATE_RTOL (relative to the largest reference value)
on each check input; `strength` says how much that comparison can tell.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nnlite_tui.core.convert.record import OutputsCompared, ValidationRecord

# Relative agreement required between the artifact's and PyTorch eager's outputs.
VALIDATE_RTOL = 1e-3


def check_outputs(runs: Iterable[list], references: list[list]) -> OutputsCompared:
    """runs: per check, the artifact's outputs (numpy); references: PyTorch's (torch tensors or numpy
    arrays: the artifact check reads them from a file). ValueError on a mismatch."""
    import numpy as np

    from nnlite_tui.core.convert.output_check import as_array

    max_abs, scale = 0.0, 1.0
    for outputs, reference in zip(same_shapes(runs, references), references):
        for got, want in zip(outputs, reference):
            want = as_array(want)
            if want.size:
                max_abs = max(max_abs, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
                scale = max(scale, float(np.max(np.abs(want))))
    if not np.isfinite(max_abs) or max_abs > VALIDATE_RTOL * scale:
        raise ValueError(f"output differs from PyTorch: max abs diff {max_abs:.3g} (tolerance {VALIDATE_RTOL * scale:.3g})")
    return {"max_abs_diff": max_abs, "validation": strength(references, scale)}


def same_shapes(runs: Iterable[list], references: list[list]) -> list[list[Any]]:
    """The artifact's outputs per check once they have passed output_check (no output, NaN or Inf:
    OutputProblem) and match PyTorch's in number and shape (ValueError otherwise)."""
    from nnlite_tui.core.convert.output_check import as_array, checked_runs

    got = checked_runs(runs, references)
    for outputs, reference in zip(got, references):
        if len(outputs) != len(reference):
            raise ValueError(f"the converted model has {len(outputs)} outputs, PyTorch gives {len(reference)}")
        for a, b in zip(outputs, reference):
            if a.shape != as_array(b).shape:
                raise ValueError(f"output shape {list(a.shape)} differs from PyTorch {list(as_array(b).shape)}")
    return got


def strength(references: list[list], scale: float) -> ValidationRecord:
    """How much the check above can tell: nothing about the input side when the output ignores it.

    With random weights some models saturate, and their output is the same for any input; a
    converted model that scrambled its input (a wrong layout) would then pass the comparison unseen.
    """
    if len(references) < 2:
        return {"inputs": len(references), "strength": "single-input", "input_sensitivity": None}
    import numpy as np

    from nnlite_tui.core.convert.output_check import as_array

    pairs = [(as_array(a).astype(np.float64), as_array(b).astype(np.float64)) for a, b in zip(references[0], references[1])]
    moved = max((float(np.max(np.abs(a - b))) for a, b in pairs if a.size and a.shape == b.shape), default=0.0)
    sensitivity = moved / scale
    return {"inputs": len(references), "input_sensitivity": sensitivity,
            "strength": "strong" if sensitivity > VALIDATE_RTOL else "weak: the output does not depend on the input"}
