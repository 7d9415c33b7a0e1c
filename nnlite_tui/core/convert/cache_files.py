"""The conversion cache's files: names, the Entry record, and the writes that are whole or absent
(layout and rules: convert_cache.py)."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nnlite_tui.core.json_file import write_json_atomic

META, TMP = "meta.json", "tmp"
ARTIFACT_STEM = "model"  # an entry's artifact is model<suffix>, the suffix of the runtime that made it
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def artifact_name(suffix: str) -> str:
    """The file name of an entry's artifact made by a runtime whose artifacts end in `suffix` (".pte")."""
    return f"{ARTIFACT_STEM}{suffix}"


def is_artifact_name(name: str) -> bool:
    """model.<one suffix>, whichever runtime made it. An entry stored before artifacts carried their
    runtime's suffix holds model.tflite for every runtime (an ExecuTorch program too) and is read the
    same way: the sha256 in its meta.json, not the name, says which bytes it holds. A half-written
    `model.<suffix>.part` is not an artifact."""
    stem, dot, suffix = name.partition(".")
    return stem == ARTIFACT_STEM and bool(dot) and bool(suffix) and "." not in suffix


def find_artifact(entry_dir: Path) -> Path | None:
    """The artifact stored in an entry directory, or None (a failure's entry, or one being evicted)."""
    try:
        names = sorted(f.name for f in os.scandir(entry_dir) if is_artifact_name(f.name))
    except FileNotFoundError:
        return None
    return entry_dir / names[0] if names else None


@dataclass(frozen=True)
class Entry:
    key: str
    path: Path  # the entry directory (a legacy entry: one of its <key>.* files)
    bytes: int
    last_used: float  # epoch seconds
    ok: bool  # holds an artifact
    shared: bool  # the artifact has other hard links (a run directory's copy)
    legacy: bool = False


def place_file(src: Path, dest: Path) -> None:
    """Put src at dest (a hard link when possible), replacing dest atomically."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    # A unique temporary name: a .tmp left by a killed run must not stand in the way (or be src).
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise
        shutil.copyfile(src, tmp)  # another filesystem, or links not allowed
    os.replace(tmp, dest)
    # rename() does nothing when tmp and dest are already links to one file (the same cached
    # artifact placed twice, as a derived precision does with its fp32 file): tmp is then left.
    tmp.unlink(missing_ok=True)


def write_json_durable(path: Path, data: Any, tmp_dir: Path | None = None) -> None:
    # <name>.<pid>.<rand>: the form tmp/ cleaning reads the owner from
    tmp = (tmp_dir or path.parent) / f"{path.name.replace('.', '-')}.{os.getpid()}.{secrets.token_hex(4)}"
    write_json_atomic(path, data, tmp=tmp)
