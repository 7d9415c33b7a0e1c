"""A run directory's reports: written, found by key, listed as summaries, iterated, in one place.

`RunResults(run_dir)` reads the index (index.py) once and compares it with the reports folder; after
that, `get(key)` opens exactly one file, `summaries()` opens none. Every reader of reports goes
through here (the result views, compare, summary.csv, the predictor, the console); `write()` is the
one way a report reaches the folder, and it keeps the index in step.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

from nnlite_tui.core.json_file import write_json_atomic
from nnlite_tui.core.results.index import Entry, append, read_lines, report_files
from nnlite_tui.core.results.model import Report
from nnlite_tui.core.results.summary import UnitKey, UnitSummary
from nnlite_tui.core.results.upgrade import ReportError, parse_report
from nnlite_tui.core.run_dir import REPORT_INDEX_FILE, REPORTS_DIR, report_filename


def read_report(path: Path) -> Report:
    """One report file of any schema as today's Report; ReportError names the file and the problem."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: unreadable report ({exc})") from exc
    return parse_report(raw, str(path))


def load_reports(run_dir: str | Path) -> list[dict[str, object]]:
    """Every report of a run as today's JSON object, in file-name order (the exports: jsonl, LEMUR);
    ReportError names the first unreadable one."""
    return [report.to_json() for report in RunResults(run_dir, strict=True)]


class RunResults:
    """The reports of one run directory (a folder with reports/ in it; it need not exist yet)."""

    def __init__(self, run_dir: str | Path, *, strict: bool = False) -> None:
        """`strict`: an unreadable report raises ReportError (the result views); otherwise it is left
        out until it can be read (a report being written, read by the live console)."""
        self.run_dir = Path(run_dir)
        self.folder = self.run_dir / REPORTS_DIR
        self.index_path = self.run_dir / REPORT_INDEX_FILE
        self.strict = strict
        self._entries: dict[str, Entry] = {}  # file name -> entry
        self._by_key: dict[UnitKey, str] = {}
        self._by_unit: dict[str, set[str]] = {}  # unit -> its files
        self._by_model: dict[str, set[str]] = {}  # model measured -> its units' files
        self._offset = 0
        self._sorted: list[UnitSummary] | None = None  # summaries() in file-name order, until the next change
        # File name -> why it cannot be read, as of the last reconcile (not strict: left out, said here).
        self.problems: dict[str, str] = {}
        self._lock = threading.Lock()
        self.reconcile()

    # ----- reading -----
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Report]:
        """Every report, in file-name order."""
        for summary in self.summaries():
            report = self._load(summary.file)
            if report is not None:
                yield report

    def summaries(self) -> list[UnitSummary]:
        """Every report's summary, in file-name order (no report is opened)."""
        if self._sorted is None:
            self._sorted = [self._entries[name].summary for name in sorted(self._entries)]
        return self._sorted

    def summary(self, key: UnitKey) -> UnitSummary | None:
        name = self._by_key.get(key)
        return self._entries[name].summary if name else None

    def get(self, key: UnitKey) -> Report | None:
        """The report of exactly this unit, device and backend, or None."""
        name = self._by_key.get(key)
        return self._load(name) if name else None

    def of_unit(self, unit: str) -> list[UnitSummary]:
        """The summaries of exactly `unit` (one per device and backend), in file-name order."""
        return [self._entries[name].summary for name in sorted(self._by_unit.get(unit, ()))]

    def of_model(self, model: str) -> list[UnitSummary]:
        """The summaries of every unit that measures `model` (each runtime and precision, each device)."""
        return [self._entries[name].summary for name in sorted(self._by_model.get(model, ()))]

    def load(self, summary: UnitSummary) -> Report | None:
        """The full report behind a summary (None: removed since, or unreadable and not strict)."""
        return self._load(summary.file)

    def path_of(self, summary: UnitSummary) -> Path:
        return self.folder / summary.file

    # ----- keeping up with the folder -----
    def refresh(self) -> int:
        """Take in what this run's writer added to the index since the last look; how many entries."""
        with self._lock:
            try:
                size = self.index_path.stat().st_size
            except FileNotFoundError:
                return 0
            if size < self._offset:  # rewritten: read it whole again
                self._offset = 0
            entries, self._offset = read_lines(self.index_path, self._offset)
            for entry in entries:
                self._put(entry)
            return len(entries)

    def reconcile(self) -> None:
        """Read the index, then summarise every report it does not describe as the folder holds it."""
        with self._lock:
            self._entries.clear()
            self.problems.clear()
            entries, self._offset = read_lines(self.index_path)
            for entry in entries:
                self._entries[entry.summary.file] = entry
            fresh: list[Entry] = []
            present = set()
            for name, mtime_ns, size in report_files(self.folder):
                present.add(name)
                known = self._entries.get(name)
                if known is None or (known.mtime_ns, known.size) != (mtime_ns, size):
                    summarised = self._summarise(name, mtime_ns, size)
                    if summarised is not None:
                        fresh.append(summarised)
            for name in set(self._entries) - present:
                del self._entries[name]
            for entry in fresh:
                self._entries[entry.summary.file] = entry
            self._reindex()
            if fresh:
                self._save(fresh)

    def _summarise(self, name: str, mtime_ns: int, size: int) -> Entry | None:
        try:
            report = read_report(self.folder / name)
        except ReportError as exc:
            if self.strict:
                raise
            self.problems[name] = str(exc)
            return None
        return Entry(UnitSummary.of(report, name), mtime_ns, size)

    def _put(self, entry: Entry) -> None:
        old = self._entries.get(entry.summary.file)
        self._entries[entry.summary.file] = entry
        if old is None or (old.summary.unit, old.summary.model) == (entry.summary.unit, entry.summary.model):
            self._add_to_maps(entry.summary)
            self._sorted = None
        else:
            self._reindex()

    def _reindex(self) -> None:
        self._by_key.clear()
        self._by_unit.clear()
        self._by_model.clear()
        self._sorted = None
        for entry in self._entries.values():
            self._add_to_maps(entry.summary)

    def _add_to_maps(self, summary: UnitSummary) -> None:
        self._by_key[summary.key] = summary.file
        self._by_unit.setdefault(summary.unit, set()).add(summary.file)
        self._by_model.setdefault(summary.model, set()).add(summary.file)

    def _save(self, entries: list[Entry]) -> None:
        try:
            append(self.index_path, entries)
            self._offset = self.index_path.stat().st_size
        except OSError:
            pass  # a read-only copy of a run: its index lives in memory, rebuilt on each open

    def _load(self, name: str) -> Report | None:
        try:
            return read_report(self.folder / name)
        except ReportError:
            if self.strict:
                raise
            return None

    # ----- writing -----
    def write(self, report: Report, key: UnitKey | None = None) -> Path:
        """Write one report (atomically) and its index line; the path it was written to. `key` names
        the device and backend when the report cannot (a device that failed before it said its serial)."""
        if key is None:
            backend = str((report.benchmark.settings or {}).get("backend") or report.benchmark.backend or "?")
            key = UnitKey(report.model_name, report.serial, backend)
        name = report_filename(*key)
        path = self.folder / name
        write_json_atomic(path, report.to_json())
        st = path.stat()
        entry = Entry(UnitSummary.of(report, name), st.st_mtime_ns, st.st_size)
        with self._lock:
            append(self.index_path, [entry])
            self._put(entry)
        return path


_OPEN: dict[Path, RunResults] = {}
_OPEN_LOCK = threading.Lock()


def open_results(run_dir: str | Path) -> RunResults:
    """The run's results for a long-lived reader (the console): opened once per process, then only
    brought up to date with what the run's writer added since (no folder listing, no report opened)."""
    path = Path(run_dir).resolve()
    with _OPEN_LOCK:
        results = _OPEN.get(path)
        if results is None:
            results = _OPEN[path] = RunResults(path)
            return results
    results.refresh()
    return results
