"""Results of a run so far, from the console's own state: latency vs parameter count, failures by
stage, median latency per device. Pure Python (no Textual), drawn by screens/results.py.

The parameter count is not part of the pipeline's events; it is read once per finished model from
the run's report summaries (core.results.RunResults: the run's index, no report opened) and kept in
ParamCache.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from nnlite_tui.core.results import RunResults, open_results
from nnlite_tui.tui.state import ModelRow

DENSITY = " ·•●█"  # cells holding 0, 1, 2-3, 4-7, 8+ models


@dataclass(frozen=True)
class Point:
    params: int
    median_ms: float
    name: str = ""  # the unit, for the plot's cursor


@dataclass(frozen=True)
class DeviceFigures:
    device: str
    done: int
    median_ms: float
    fastest_ms: float
    slowest_ms: float


def failure_stage(row: ModelRow) -> str:
    """The stage a failed model failed in: its error reads 'stage: Type: message'."""
    head = (row.error or "").split(":", 1)[0].strip()
    return head if head and " " not in head else "unknown"


def failures_by_stage(rows: Iterable[ModelRow]) -> list[tuple[str, int]]:
    counts = Counter(failure_stage(row) for row in rows if row.status == "failed")
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class FailureGroup:
    """Failed units of one stage with the same error (its first line, without the stage)."""

    stage: str
    message: str
    count: int
    example: str  # the first such unit in the queue


def failure_groups(rows: Iterable[ModelRow]) -> dict[str, list[FailureGroup]]:
    """Each stage's failures by error, commonest first: hundreds of failures are mostly a few causes."""
    found: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row.status == "failed":
            stage = failure_stage(row)
            first = (row.error or "").splitlines()[0] if row.error else ""
            message = first[len(stage) + 1:].strip() if first.startswith(stage + ":") else first
            found.setdefault((stage, " ".join(message.split()) or "(no message)"), []).append(row.name)
    groups: dict[str, list[FailureGroup]] = {}
    for (stage, message), names in sorted(found.items(), key=lambda item: (-len(item[1]), item[0])):
        groups.setdefault(stage, []).append(FailureGroup(stage, message, len(names), names[0]))
    return groups


def device_figures(rows: Iterable[ModelRow]) -> list[DeviceFigures]:
    by_device: dict[str, list[float]] = {}
    for row in rows:
        if row.status == "done" and row.median_ms is not None and row.device:
            by_device.setdefault(row.device, []).append(row.median_ms)
    return [DeviceFigures(device, len(values), statistics.median(values), min(values), max(values))
            for device, values in sorted(by_device.items())]


def read_params(results: RunResults | None, model: str) -> int | None:
    """The parameter count in the unit's report summaries, if it has a report."""
    for summary in results.of_unit(model) if results is not None else ():
        if summary.params and summary.params > 0:
            return int(summary.params)
    return None


class ParamCache:
    """Parameter counts of finished models, read from the run's report summaries at most once each."""

    def __init__(self) -> None:
        self.params: dict[str, int | None] = {}

    def missing(self, rows: Iterable[ModelRow]) -> list[str]:
        return [row.name for row in rows if row.status == "done" and row.name not in self.params]

    def fill(self, run_dir: str | None, names: Iterable[str]) -> None:
        results = open_results(run_dir) if run_dir else None
        for name in names:
            self.params[name] = read_params(results, name)

    def points(self, rows: Iterable[ModelRow]) -> list[Point]:
        out = []
        for row in rows:
            params = self.params.get(row.name)
            if row.status == "done" and params and row.median_ms and row.median_ms > 0:
                out.append(Point(params, row.median_ms, row.name))
        return out


def scatter(points: list[Point], width: int, height: int) -> tuple[list[str], tuple[float, float, float, float]]:
    """Rows of a log-log scatter plot (parameters across, latency up), with the axes' ranges."""
    if not points:
        return [" " * width] * height, (0, 0, 0, 0)
    xs = [math.log10(p.params) for p in points]
    ys = [math.log10(p.median_ms) for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    counts = [[0] * width for _ in range(height)]
    for x, y in zip(xs, ys):
        column = min(width - 1, int((x - x0) / (x1 - x0) * (width - 1) + 0.5))
        row = min(height - 1, int((y - y0) / (y1 - y0) * (height - 1) + 0.5))
        counts[height - 1 - row][column] += 1  # latency grows upwards
    glyph = lambda n: DENSITY[0 if n == 0 else 1 if n == 1 else 2 if n < 4 else 3 if n < 8 else 4]  # noqa: E731
    return ["".join(glyph(n) for n in line) for line in counts], (10 ** x0, 10 ** x1, 10 ** y0, 10 ** y1)
