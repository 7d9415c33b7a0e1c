"""The on-disk form of a run's state: RUN_DIR/state.json (a TinyDB file) and its journals.

Reading them whole (load_state + replay, or load_snapshot for readers that must not lock or write:
`nnlite status`, the console attached to a run) and the low-level writes RunStore builds on: the
atomic TinyDB storage, journal names and appends. See run_store.py for why there is a journal.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.storages import Storage

from nnlite_tui import __version__
from nnlite_tui.core.disk import fsync_path
from nnlite_tui.core.run_dir import STATE_FILE

SCHEMA_VERSION = 1
fdatasync = getattr(os, "fdatasync", os.fsync)


class StoreError(Exception):
    """The run state cannot be read or written; `path` names the file concerned."""

    def __init__(self, path: str | Path, message: str):
        self.path = Path(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")

    @property
    def exit_code(self) -> int:
        """The CLI's exit code (errors.py): a disk that refused a write is the disk's fault, not the state's."""
        from nnlite_tui.errors import is_disk_error
        from nnlite_tui.exit_codes import ExitCode

        return ExitCode.DISK if is_disk_error(self) else ExitCode.STATE


class RunLocked(StoreError):
    """Another process holds the run directory's writer lock; `pid` names it when it can be read."""

    def __init__(self, path: str | Path, pid: int | None):
        self.pid = pid
        who = f"another nnlite process (pid {pid})" if pid else "another nnlite process"
        super().__init__(Path(path).parent, f"{who} is writing this run; wait for it to end, watch it with "
                                            f"`nnlite status` or `nnlite tui`, or use another --out")

    @property
    def exit_code(self) -> int:
        from nnlite_tui.exit_codes import ExitCode

        return ExitCode.BUSY


class JournalGap(Exception):
    """The journals do not continue state.json: a compaction raced a reader, or entries are lost."""


def state_path(path: str | Path) -> Path:
    """RUN_DIR or RUN_DIR/state.json -> the state file."""
    p = Path(path)
    return p if p.suffix == ".json" else p / STATE_FILE


class AtomicJSONStorage(Storage):
    """TinyDB storage whose writes replace the file atomically (temp, fsync, rename, fsync dir).

    A read is cached, so every table read through one TinyDB sees the same version of the file
    even while a writer in another process replaces it.
    """

    def __init__(self, path: str | Path, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        self._cache: dict | None = None

    def read(self) -> dict | None:
        if self._cache is None:
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                return None
            self._cache = json.loads(text)
        return self._cache

    def write(self, data: dict) -> None:
        self.write_chunks([json.dumps(data)])
        self._cache = data

    def write_chunks(self, chunks: Iterable[str]) -> None:
        """Write the file from pieces of JSON text (lets other threads run between pieces)."""
        if self.read_only:
            raise StoreError(self.path, "opened read-only")
        self._cache = None
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                for chunk in chunks:
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        fsync_path(self.path.parent)


def load_state(path: Path) -> tuple[int, dict | None, dict[str, dict]]:
    """-> (journal seq folded in, config, records by name in insertion order); StoreError if bad."""
    db = TinyDB(path, storage=AtomicJSONStorage, read_only=True)
    try:
        raw = db.storage.read()
    except (OSError, ValueError) as exc:  # ValueError covers JSONDecodeError and UnicodeDecodeError
        raise StoreError(path, f"unreadable run state ({exc}); the file was left untouched") from exc
    if raw is None:
        raise StoreError(path, "no run state here")
    problem = _shape_problem(raw)
    if problem:
        raise StoreError(path, f"not a valid nnlite-tui state file ({problem}); the file was left untouched")
    meta = db.table("meta").get(doc_id=1)
    if meta is None:  # _shape_problem found its schema version: unreachable, but said if it ever is
        raise StoreError(path, "no meta record; the file was left untouched")
    docs = sorted(db.table("models").all(), key=lambda d: d.doc_id)
    config = db.table("config").get(doc_id=1)
    return meta["journal_seq"], (dict(config) if config is not None else None), {d["name"]: dict(d) for d in docs}


def _shape_problem(raw: Any) -> str | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("meta"), dict):
        return "no meta table"
    meta = raw["meta"].get("1")
    version = meta.get("schema_version") if isinstance(meta, dict) else None
    if not isinstance(version, int):
        return "no schema version"
    if version > SCHEMA_VERSION:
        return (f"schema version {version} is newer than this nnlite-tui {__version__} reads "
                f"({SCHEMA_VERSION}); upgrade nnlite-tui")
    if version != SCHEMA_VERSION:
        return f"unknown schema version {version}"
    if not isinstance(meta.get("journal_seq"), int):
        return "no journal seq"
    for name in ("models", "config"):
        table = raw.get(name)
        if not isinstance(table, dict) or not all(k.isdigit() and isinstance(d, dict) for k, d in table.items()):
            return f"{name!r} is not a TinyDB table"
    if not all(isinstance(d.get("name"), str) for d in raw["models"].values()):
        return "a model record has no name"
    return None


def journals(state: Path) -> list[tuple[int, Path]]:
    prefix = state.name + ".journal."
    found = [(int(p.name[len(prefix):]), p) for p in state.parent.glob(prefix + "*") if p.name[len(prefix):].isdigit()]
    return sorted(found)


def _journal_entries(path: Path) -> list[dict]:
    """Complete entries of one journal; a bad or unterminated tail is a write cut short, not damage."""
    lines = path.read_bytes().split(b"\n")[:-1]  # bytes after the last newline were never acknowledged
    entries: list[dict] = []
    for i, line in enumerate(lines):
        entry = _parse_entry(line)
        if entry is None:
            if any(_parse_entry(later) is not None for later in lines[i + 1:]):
                raise StoreError(path, f"corrupt journal line {i + 1}; the file was left untouched")
            break
        entries.append(entry)
    return entries


def _parse_entry(line: bytes) -> dict | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    ok = isinstance(entry, dict) and isinstance(entry.get("seq"), int) and isinstance(entry.get("put"), dict)
    return entry if ok and isinstance(entry["put"].get("name"), str) else None


def replay(state: Path, seq: int, records: dict[str, dict]) -> int:
    """Apply the journal entries after `seq` to `records`; -> the last seq. JournalGap if one is missing."""
    for start, path in journals(state):
        if start > seq + 1:
            raise JournalGap(f"{path.name} starts at entry {start}, state.json ends at {seq}")
        try:
            entries = _journal_entries(path)
        except FileNotFoundError as exc:
            raise JournalGap(f"{path.name} vanished while reading") from exc
        for entry in entries:
            if entry["seq"] > seq + 1:
                raise JournalGap(f"{path.name} skips from entry {seq} to {entry['seq']}")
            if entry["seq"] == seq + 1:
                records[entry["put"]["name"]] = entry["put"]
                seq += 1
    return seq


def load_snapshot(run_dir: str | Path, *, attempts: int = 50) -> tuple[dict | None, list[dict]]:
    """The latest durable (config, records) of a run, read without writing or locking anything."""
    path = state_path(run_dir)
    for attempt in range(attempts):
        seq, config, records = load_state(path)
        try:
            replay(path, seq, records)
        except JournalGap:
            time.sleep(0.002 * (attempt + 1))  # a compaction replaced the files under us: read again
            continue
        return config, list(records.values())
    raise StoreError(path, "the run state kept changing while it was read; try again")


def journal_path(state: Path, start: int) -> Path:
    return state.with_name(f"{state.name}.journal.{start}")


def write_all(fd: int | None, data: bytes) -> None:
    assert fd is not None, "journal not open"
    end = os.lseek(fd, 0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        os.ftruncate(fd, end)  # a half line followed by whole ones would read as a damaged journal
        raise
