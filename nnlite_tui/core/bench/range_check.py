"""Did the benchmark keep each integer input inside the range its conversion recorded? Checked on the host.

Token ids index an embedding table: a filler that ignores the range either fails the run ("index out
of bounds") or, where a runtime clamps or reads on, times the model on ids it never sees. Every
benchmark (host, simulated app, real app) records per input the range it was told and the minimum
and maximum it fed (`input_fill`); the host compares them with the conversion's `input_signature`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ERROR_TYPE = "InputRangeMismatch"


def expected_ranges(conversion: Mapping[str, Any]) -> list[tuple[int, int] | None]:
    """Per input, the [low, high) its conversion recorded (None for an input without one)."""
    from nnlite_tui.core.outcomes import input_ranges

    return list(input_ranges(conversion.get("input_signature")))


def problems(records: Sequence[Mapping[str, Any]] | None, expected: Sequence[tuple[int, int] | None]) -> list[str]:
    """What is wrong with the fill of the inputs that have a range; [] when it is right or unreported."""
    if not records:
        return []  # an older report without input_fill: nothing to check (the run itself says if ids overflowed)
    out = []
    for i, (record, bounds) in enumerate(zip(records, expected)):
        if bounds is None:
            continue
        low, high = bounds
        told = record.get("range")
        if told is None:
            out.append(f"input {i} was filled without its range [{low}, {high})")
        elif [int(v) for v in told] != [low, high]:
            out.append(f"input {i} was filled in [{told[0]}, {told[1]}), its conversion recorded [{low}, {high})")
        lo, hi = record.get("min"), record.get("max")
        if lo is not None and hi is not None and (lo < low or hi >= high):
            out.append(f"input {i} was fed values in [{lo:g}, {hi:g}], outside [{low}, {high})")
    return out


def check_ranges(block: Mapping[str, Any], conversion: Mapping[str, Any]) -> Mapping[str, Any]:
    """The benchmark block, invalid at stage `input` when an integer input was fed outside its range."""
    expected = expected_ranges(conversion)
    if not any(expected) or not block.get("valid"):
        return block
    found = problems(block.get("input_fill"), expected)
    if not found:
        return block
    return {**block, "valid": False, "error_stage": "input", "error_type": ERROR_TYPE,
            "error_message": "; ".join(found)}
