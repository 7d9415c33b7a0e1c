"""Writing a JSON file so that a reader sees the old file or the new one, never half of one, and
strict JSON (RFC 8259) at that: no bare NaN or Infinity, which strict parsers reject.

The temporary file's name carries the process and thread: two threads writing the same report (a
retry racing a late result) never share one, and a crash leaves a `.tmp` that the next write ignores.
A float that is not finite is written as null, and the document says where in `json_notes`, so that
a reader can tell a value that was not finite from one that was not measured.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
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


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 1, tmp: Path | None = None) -> None:
    """Write `data` to `path` through a temporary file (in the same folder unless `tmp` names one on the
    same file system: the cache keeps its own in a folder it cleans), fsynced, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if tmp is None:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    else:
        tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dumps(data, indent=indent, default=str))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
