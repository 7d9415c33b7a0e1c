"""Reports are strict JSON (RFC 8259): no bare NaN or Infinity, which strict parsers reject.

A float that is not finite is written as null, and the document says where in `json_notes`, so that
a reader can tell a value that was not finite from one that was not measured.
"""

from __future__ import annotations

import json
import math
from typing import Any

NOTES_KEY = "json_notes"


def dumps(data: Any, **kwargs: Any) -> str:
    """json.dumps(allow_nan=False) of `data` with every NaN/Inf as null (noted in a top-level dict)."""
    notes: list[str] = []
    clean = _finite(data, "", notes)
    if notes and isinstance(clean, dict):
        clean[NOTES_KEY] = [*(clean.get(NOTES_KEY) or []), *notes]
    return json.dumps(clean, allow_nan=False, **kwargs)


def _finite(value: Any, path: str, notes: list[str]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        notes.append(f"{path or '.'}: {value!r} written as null (JSON has no such number)")
        return None
    if isinstance(value, dict):
        return {k: _finite(v, f"{path}.{k}" if path else str(k), notes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{path}[{i}]", notes) for i, v in enumerate(value)]
    return value
