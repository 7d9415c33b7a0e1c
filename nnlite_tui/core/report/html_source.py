"""How the HTML report reads a run: every report once, one at a time, reduced to what the page shows.

The Results API (core.results) lists the run's reports: its index gives each report's summary without
opening it, and rows.row_from_report reads a report through its typed model. A report of a fast model
carries 10,000 raw samples (twice: wall and native clock); 10,000 such reports are gigabytes of JSON.
Holding them all, as the table views do, costs gigabytes of memory, so this reader keeps per unit
only its row (without raw samples) and a sketch of the samples (histogram up to p99 and a run-order
timeline of bucket medians), and folds devices, settings and reference-model figures as it goes.
report_bytes.py lifts the raw samples out of each file's bytes before orjson parses the rest (they are
not put through the typed model, only sketched); two processes share the files of a large run.

html_parts.read_run is the page's only entry to the run's files; the run's report writer keeps each
report's part (read_one) in a file beside the report index, so the page rarely opens a report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nnlite_tui.core.report.report_bytes import read_report_bytes
from nnlite_tui.core.report.rows import ResultRow, RunResults, row_from_report
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime

HIST_BINS = 24
TIMELINE_POINTS = 48


@dataclass
class Sketch:
    """A unit's raw samples, reduced: a histogram from the fastest sample to p99, and the run order."""

    hist_lo_ns: float
    hist_hi_ns: float
    hist_counts: list[int]
    above_p99: int  # samples beyond the histogram's right edge
    timeline_ns: list[float]  # median of each consecutive bucket of samples
    bucket: int  # samples per timeline point
    count: int


@dataclass
class Unit:
    row: ResultRow  # without raw samples
    sketch: Sketch | None
    throttled: bool | None
    session_interval_ns: tuple[float, float] | None  # the between-session interval, when the report has one


@dataclass
class HtmlRun:
    run_dir: Path
    units: list[Unit]
    statuses: dict[str, str]
    errors: dict[str, dict[str, Any]]
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    settings: dict[str, set[str]] = field(default_factory=dict)
    reference: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # serial -> (at, ns)

    @property
    def rows(self) -> list[ResultRow]:
        return [u.row for u in self.units]


def sketch(samples: list[float] | np.ndarray, stats: dict[str, float]) -> Sketch | None:
    arr = np.asarray(samples)  # integer ns as a rule: kept as integers, which partition faster
    if arr.size == 0 or stats.get("p99_ns") is None:
        return None
    lo, hi = float(stats["min_ns"] if stats.get("min_ns") is not None else arr.min()), float(stats["p99_ns"])
    inside = arr[(arr >= lo) & (arr <= hi)]
    bins = ((inside - lo) * (HIST_BINS / max(hi - lo, 1e-9))).astype(np.int64)
    counts = np.bincount(np.minimum(bins, HIST_BINS - 1), minlength=HIST_BINS)
    bucket = max(1, len(arr) // TIMELINE_POINTS)
    points = arr[: len(arr) // bucket * bucket].reshape(-1, bucket)
    k = bucket // 2  # each bucket's median, as np.median gives it, without its overhead
    if bucket % 2:
        medians = np.partition(points, k, axis=1)[:, k].astype(np.float64)
    else:
        part = np.partition(points, [k - 1, k], axis=1)
        medians = (part[:, k - 1].astype(np.float64) + part[:, k]) / 2
    return Sketch(lo, hi, counts.tolist(), int(np.count_nonzero(arr > hi)), medians.tolist(), bucket, len(arr))


def session_interval(bench: dict[str, Any]) -> tuple[float, float] | None:
    """The between-session interval: a benchmark block named for sessions, with low_ns and high_ns."""
    for key, block in bench.items():
        if "session" in key and isinstance(block, dict) and block.get("low_ns") is not None:
            return float(block["low_ns"]), float(block["high_ns"])
    return None


def _settings(report: dict[str, Any]) -> dict[str, Any]:
    bench = report.get("benchmark") or {}
    items = {k: v for k, v in (bench.get("settings") or {}).items() if not isinstance(v, dict)}
    items["isolation"] = (report.get("isolation") or {}).get("method")
    items["huge pages"] = (bench.get("huge_pages") or {}).get("glibc_tunables")
    items["nnlite"] = (report.get("tool") or {}).get("nnlite")
    # The tool block holds the default runtime's package versions (run/setup.py).
    items["converter"] = (report.get("tool") or {}).get(get_runtime(DEFAULT_RUNTIME).converter)
    return {k: v for k, v in items.items() if v is not None}


# A report's share of the page: its unit, its device block, its settings, its reference-model figures.
Part = tuple[Unit, dict[str, Any], dict[str, Any], list[tuple[float, float]]]


def read_one(path: Path) -> Part:
    """One report: its unit, its device block, its settings and its reference-model figures."""
    report, samples = read_report_bytes(path)  # the raw-sample lists are not in `report`
    bench = report.get("benchmark") or {}
    row = row_from_report(report, path.name)
    row.energy_block = None  # its samples serve compare's bootstrap, not this page
    unit = Unit(row, sketch(samples, row.stats) if row.status == "done" else None, None, session_interval(bench))
    return unit, dict(report.get("device") or {}), _settings(report), _reference(bench)


def from_results(results: RunResults) -> HtmlRun:
    """The page's view of a run already loaded with its reports in memory (rows.load_run)."""
    units = [Unit(row, sketch(row.samples_ns, row.stats) if row.status == "done" else None,
                  (report.get("conditions") or (report.get("benchmark") or {}).get("conditions") or {}).get("throttled"),
                  session_interval(report.get("benchmark") or {}))
             for row, report in zip(results.rows, results.reports)]
    run = HtmlRun(results.run_dir, units, results.statuses, results.errors)
    fold(run, [(dict(r.get("device") or {}), _settings(r), _reference(r.get("benchmark") or {}))
                for r in results.reports])
    return run


def _reference(bench: dict[str, Any]) -> list[tuple[float, float]]:
    return [(float(r["reference"]["at"]), float(r["reference"]["median_ns"])) for r in bench.get("rounds") or []
            if (r.get("reference") or {}).get("at") is not None and r["reference"].get("median_ns")]


def fold(run: HtmlRun, parts: list[tuple[dict[str, Any], dict[str, Any], list[tuple[float, float]]]]) -> None:
    """Devices, settings and reference-model figures of every report, into the run."""
    for device, settings, reference in parts:
        run.devices.setdefault(str(device.get("serial")), device)
        for key, value in settings.items():
            run.settings.setdefault(key, set()).add(str(value))
        if reference:
            run.reference.setdefault(str(device.get("serial")), []).extend(reference)
    run.reference = {serial: sorted(set(points)) for serial, points in sorted(run.reference.items())}
