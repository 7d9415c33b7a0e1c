"""The run's report index: one JSON line per report written, with the report's summary and the
file's size and modification time. Readers find a report by its key in memory, never by globbing.

Appending a line is cheap and safe beside a reader (a half-written last line is read next time);
the last line for a file wins. The index is a cache of the reports, never the truth: opening a run
compares it with the reports folder once (os.scandir, no file opened) and summarises again every
report that is new, changed, or from an index of another summary version; a run written before the
index existed gets one on first open, when its folder is writable.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.results.summary import SUMMARY_VERSION, UnitSummary

_APPEND_LOCK = threading.Lock()  # one line per write() call, and one writer thread at a time


@dataclass(frozen=True, slots=True)
class Entry:
    summary: UnitSummary
    mtime_ns: int
    size: int

    def to_line(self) -> str:
        return json.dumps({"v": SUMMARY_VERSION, "mtime_ns": self.mtime_ns, "size": self.size,
                           "summary": self.summary.to_json()}, default=str) + "\n"


def read_lines(path: Path, offset: int = 0) -> tuple[list[Entry], int]:
    """Entries from byte `offset` on, and the offset after the last whole line (a line being written,
    or one of another summary version, is skipped)."""
    entries: list[Entry] = []
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return entries, 0
    end = data.rfind(b"\n") + 1
    for line in data[:end].splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line torn by a crash: the report it names is summarised again on open
        if isinstance(item, dict) and item.get("v") == SUMMARY_VERSION:
            entries.append(Entry(UnitSummary.from_json(item["summary"]), int(item["mtime_ns"]), int(item["size"])))
    return entries, offset + end


def append(path: Path, entries: list[Entry]) -> None:
    """Add entries to the index (the caller handles OSError: a read-only run keeps its index in memory)."""
    if not entries:
        return
    text = "".join(e.to_line() for e in entries).encode()
    with _APPEND_LOCK:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text)
        finally:
            os.close(fd)


def report_files(folder: Path) -> Iterator[tuple[str, int, int]]:
    """(name, mtime_ns, size) of each report file in the folder, from one directory listing."""
    try:
        with os.scandir(folder) as it:
            for item in it:
                if item.name.endswith(".json") and item.is_file():
                    st = item.stat()
                    yield item.name, st.st_mtime_ns, st.st_size
    except FileNotFoundError:
        return
