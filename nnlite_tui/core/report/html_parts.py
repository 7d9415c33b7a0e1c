"""The HTML page's part of each report, kept in a file beside the run's report index.

A 10,000-model run's reports are gigabytes of JSON, most of it raw samples; the page needs a few
kilobytes of each (its row, a sketch of the samples, the device, settings and reference figures:
html_source.read_one). Reading every report again for each `nnlite report --format html` costs
seconds per thousand reports, so the run's report writer adds each report's part to this file as it
writes the report (`add`), and the page reads the parts (`load`): one small JSON line per report.

Like the report index, the file is a cache of the reports and never the truth: a line is used only
while its report file has the size and modification time it records, a part of another version is
read again from its report, and parts the file lacks (a run written before it existed, a report
rewritten by `compare --remeasure`) are read from the reports and added when the folder is writable.
The last line for a file wins. The parts come from reports this tool wrote, and are parsed as JSON
into plain values and rebuilt field by field: a line that does not rebuild is read again from its report.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import orjson

from nnlite_tui.core.report.energy import EnergyFigure
from nnlite_tui.core.report.html_source import HtmlRun, Part, Sketch, Unit, fold, read_one
from nnlite_tui.core.report.rows import ResultRow, _label_twins, store_statuses
from nnlite_tui.core.results import RunResults as ReportFolder
from nnlite_tui.core.results.index import report_files
from nnlite_tui.core.run_dir import REPORT_PAGES_FILE, STATE_FILE

# Bump when a part's fields or their meaning change: lines of another version are read again.
PART_VERSION = 1
_ROW_FIELDS = {f.name for f in fields(ResultRow)}
_LEFT_OUT = ("samples_ns", "energy_block")  # the page sketches the samples; the energy block is compare's
_APPEND_LOCK = threading.Lock()
PARALLEL_FROM = 200  # reports read again; below this a second process costs more than it saves


@dataclass(frozen=True, slots=True)
class Stamp:
    """A report file as the folder holds it: a part is valid for exactly this file."""

    mtime_ns: int
    size: int


def _line(name: str, stamp: Stamp, part: Part) -> bytes:
    unit, device, settings, reference = part
    row = {k: v for k, v in asdict(unit.row).items() if k not in _LEFT_OUT}
    return orjson.dumps({
        "v": PART_VERSION, "file": name, "mtime_ns": stamp.mtime_ns, "size": stamp.size,
        "row": row, "sketch": asdict(unit.sketch) if unit.sketch is not None else None,
        "session": list(unit.session_interval_ns) if unit.session_interval_ns else None,
        "device": device, "settings": settings, "reference": [list(p) for p in reference],
    }, default=str) + b"\n"


def _pair(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _part(item: dict[str, Any]) -> Part:
    """A line's part, rebuilt; KeyError, TypeError or ValueError when it does not fit today's types."""
    row_fields = dict(item["row"])
    if not set(row_fields) <= _ROW_FIELDS:
        raise ValueError(f"unknown row fields {sorted(set(row_fields) - _ROW_FIELDS)}")
    energy = row_fields.get("energy")
    row_fields["energy"] = EnergyFigure(**energy) if energy is not None else None
    row_fields["interval_ns"] = _pair(row_fields.get("interval_ns"))
    row = ResultRow(**row_fields)
    sketch = Sketch(**item["sketch"]) if item["sketch"] is not None else None
    unit = Unit(row, sketch, None, _pair(item["session"]))
    reference = [(float(at), float(ns)) for at, ns in item["reference"]]
    return unit, dict(item["device"]), dict(item["settings"]), reference


def load(run_dir: Path) -> dict[str, tuple[Stamp, Part]]:
    """Every part the run's file holds, by report file name (the last line for a name wins)."""
    try:
        data = (Path(run_dir) / REPORT_PAGES_FILE).read_bytes()
    except FileNotFoundError:
        return {}
    parts: dict[str, tuple[Stamp, Part]] = {}
    for line in data[: data.rfind(b"\n") + 1].splitlines():
        try:
            item = orjson.loads(line)
            if not isinstance(item, dict) or item.get("v") != PART_VERSION:
                continue
            parts[str(item["file"])] = (Stamp(int(item["mtime_ns"]), int(item["size"])), _part(item))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            continue  # torn by a crash, or of another layout: its report is read again
    return parts


def stamp_of(path: Path) -> Stamp:
    st = path.stat()
    return Stamp(st.st_mtime_ns, st.st_size)


def append(run_dir: Path, lines: list[bytes]) -> None:
    """Add lines to the run's file (OSError is the caller's: a read-only run reads its reports)."""
    if not lines:
        return
    with _APPEND_LOCK:
        fd = os.open(Path(run_dir) / REPORT_PAGES_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, b"".join(lines))
        finally:
            os.close(fd)


def line_of(path: Path, part: Part | None = None, stamp: Stamp | None = None) -> bytes:
    """The line for one report file (its part read from it unless given)."""
    return _line(path.name, stamp or stamp_of(path), part or read_one(path))


def add(run_dir: Path, report_path: Path) -> None:
    """The report writer's call once a report is written: its part joins the file."""
    append(run_dir, [line_of(report_path)])


def _read_missing(paths: list[Path]) -> list[Part]:
    if len(paths) >= PARALLEL_FROM and (os.cpu_count() or 1) > 1:
        with ProcessPoolExecutor(max_workers=2) as pool:
            return list(pool.map(read_one, paths, chunksize=64))
    return [read_one(p) for p in paths]


def read_run(run_dir: str | Path) -> HtmlRun:
    """The run as the page shows it: each report's part (from the parts file while it matches the
    report, else read from the report), plus the store's statuses; a folder with only reports/ is a
    run too. ValueError names an unreadable report or state file."""
    path = Path(run_dir)
    if not (path / "reports").is_dir() and not (path / STATE_FILE).exists():
        raise ValueError(f"{path}: no reports/ folder and no {STATE_FILE}; not a run directory")
    folder = ReportFolder(path, strict=True)
    summaries = folder.summaries()
    stamps = {name: Stamp(mtime_ns, size) for name, mtime_ns, size in report_files(folder.folder)}
    kept = load(path)
    parts: dict[str, Part] = {}
    for summary in summaries:
        known = kept.get(summary.file)
        if known is not None and known[0] == stamps.get(summary.file):
            parts[summary.file] = known[1]
    missing = [s.file for s in summaries if s.file not in parts]
    fresh = _read_missing([folder.folder / name for name in missing])
    parts.update(zip(missing, fresh))
    try:
        append(path, [_line(name, stamps[name], part) for name, part in zip(missing, fresh) if name in stamps])
    except OSError:
        pass  # a read-only copy of a run: its reports are read again next time, with the same figures
    ordered = [parts[s.file] for s in summaries]
    run = HtmlRun(path, [p[0] for p in ordered], {}, {})
    for unit, summary in zip(run.units, summaries):
        unit.throttled = summary.throttled  # the summary knows where each schema keeps it
    fold(run, [p[1:] for p in ordered])
    _label_twins(run.rows)
    _, run.statuses, run.errors = store_statuses(path, [u.row for u in run.units])
    return run
