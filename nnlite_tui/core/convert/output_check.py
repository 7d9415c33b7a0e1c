"""Checks of a model's outputs before they are compared: outputs that no comparison can vouch for.

Pure functions on numpy arrays (and anything numpy can read, e.g. torch tensors via np.asarray), for
whichever process compares the artifact with PyTorch. A forward that returns no tensor (None, or a
structure without tensors) and outputs that hold NaN or Inf fail validation with a cause that says
so: NaN compares unequal to itself, so a max-difference test would otherwise read 0.0 and pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


class OutputProblem(ValueError):
    """The outputs cannot be validated; the message says which output and what is wrong with it."""


def checked_runs(runs: Iterable[Sequence[Any]], references: Sequence[Sequence[Any]]) -> list[list[np.ndarray]]:
    """The artifact's outputs per check input (as a list), once PyTorch's and the artifact's outputs have
    passed: at least one output, every value finite. OutputProblem otherwise."""
    if not references or not all(len(r) for r in references):
        raise OutputProblem("the model's forward returned no tensor (None, or a structure without tensors): "
                            "there is nothing to convert or compare")
    got = [[as_array(o) for o in outputs] for outputs in runs]
    for i, reference in enumerate(references):
        _finite(reference, f"PyTorch's output {{k}} on check input {i + 1}",
                "the model itself computes it (random weights can overflow); the artifact cannot be validated")
    for i, outputs in enumerate(got):
        _finite(outputs, f"the converted model's output {{k}} on check input {i + 1}",
                "PyTorch's is finite there")
    return got


def as_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _finite(outputs: Sequence[Any], what: str, why: str) -> None:
    for k, value in enumerate(outputs):
        arr = as_array(value)
        if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.complexfloating)):
            continue
        bad = ~np.isfinite(arr)
        if bad.any():
            nan, inf = int(np.isnan(arr).sum()), int(bad.sum() - np.isnan(arr).sum())
            held = " and ".join(f"{n} {name}" for n, name in ((nan, "NaN"), (inf, "Inf")) if n)
            raise OutputProblem(f"{what.format(k=k)} holds {held} of {arr.size} values; {why}")
