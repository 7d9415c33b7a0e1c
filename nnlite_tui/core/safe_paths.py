"""Paths built from fields of a report or a state file, which a model (its name, its task) or anyone who
edited the file controls: each field must be one plain path component, and the path must stay under
the folder it was meant for once resolved (links included). Otherwise UnsafePath, naming the file and
the field, and nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path


class UnsafePath(ValueError):
    """A field that would make a path outside its folder."""


def component(value: object, field: str, source: str | Path) -> str:
    """value as one path component: not empty, no separator, no NUL, not "." or ".."."""
    text = str(value)
    bad = ("is empty" if not text else "holds a NUL byte" if "\x00" in text
           else "holds a path separator" if "/" in text or (os.altsep and os.altsep in text)
           else "is a relative path step" if text in (".", "..") else "")
    if bad:
        raise UnsafePath(f"{source}: {field} {text!r} {bad}; it cannot name a file or folder")
    return text


def inside(root: Path, parts: list[tuple[str, str]], source: str | Path) -> Path:
    """root / each part, where every part is (value, field name), checked to stay under root."""
    path = Path(root)
    for value, field in parts:
        path = path / component(value, field, source)
    base = os.path.realpath(root)
    resolved = os.path.realpath(path)
    if resolved != base and not resolved.startswith(base.rstrip(os.sep) + os.sep):
        raise UnsafePath(f"{source}: the path it makes, {path}, leads outside {root} (through a link)")
    return path
