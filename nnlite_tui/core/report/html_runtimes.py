"""The HTML report's runtime comparison (a run with units in more than one runtime): per model, device
and precision, each runtime's conversion result and median, and the ratio to the default runtime
(LiteRT); a scatter of one runtime's median against LiteRT's (below the diagonal: faster than LiteRT);
how many models convert in which runtime.

Built from the rows (the run's reports) and, for units without a report (skipped: a precision the
runtime does not make), the store's statuses and errors. The section travels as data (columns, like
the model table's) and the page draws it: a Tabulator table and an ECharts scatter (report.js).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from html import escape
from typing import TypedDict

from nnlite_tui.core.report.rows import ResultRow
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME
from nnlite_tui.core.sources.units import parse_unit

BASELINE = DEFAULT_RUNTIME


class RuntimeColumns(TypedDict):
    """One entry per unit (model · device · precision); text as indices into the page's strings."""

    model: list[str]
    device: list[int | None]
    precision: list[int | None]
    conversion: dict[str, list[int | None]]  # runtime -> its conversion text
    median: dict[str, list[float | None]]  # runtime -> its median (ms)
    note: dict[str, list[int | None]]  # runtime -> what stands for a missing median
    ratio: dict[str, list[float | None]]  # each runtime but the baseline -> its median over the baseline's


class RuntimeData(TypedDict):
    """The page's `runtimes` entry (report.js reads these keys)."""

    runtimes: list[str]
    baseline: str
    summary: str
    columns: RuntimeColumns
    ratio_titles: dict[str, str]


def _converted(row: ResultRow) -> str:
    conv = row.conversion
    if conv.get("ok", True):
        delegation = conv.get("delegation") or {}
        if delegation.get("total_ops"):
            return f"ok ({delegation['delegated_ops']}/{delegation['total_ops']} ops delegated)"
        return "ok"
    cause = conv.get("cause")
    return f"{conv.get('stage') or '?'}: {cause}" if cause else str(conv.get("stage") or "?")


def _cell(row: ResultRow | None, status: str | None,
          error: Mapping[str, object] | None) -> tuple[str, str, float | None]:
    """(conversion text, what stands for the median when there is none, median ms) of one runtime's unit."""
    if row is None:
        if status is None:
            return "not in this run", "", None
        message = (error or {}).get("message") or status
        return (f"{status}: {message}" if status == "skipped" else status), "", None
    median = row.median_ns / 1e6 if row.median_ns else None
    return _converted(row), "" if median is not None else (row.error_stage or "failed"), median


def runtimes_of(rows: list[ResultRow], statuses: dict[str, str]) -> list[str]:
    return sorted({r.runtime for r in rows} | {parse_unit(m)[1] for m in statuses}, key=lambda r: (r != BASELINE, r))


def runtime_data(rows: list[ResultRow], statuses: dict[str, str], errors: Mapping[str, Mapping[str, object]],
                 strings: Callable[[object], int | None]) -> RuntimeData | None:
    """The section's columns (text as indices into `strings`), or None when the run has one runtime only."""
    runtimes = runtimes_of(rows, statuses)
    if len(runtimes) < 2:
        return None
    units: dict[tuple[str, str, str], dict[str, ResultRow | None]] = {}
    devices = sorted({r.device for r in rows})
    for r in rows:
        units.setdefault((r.base_model, r.device, r.precision), {})[r.runtime] = r
    labels = {r.device: r.device_label for r in rows}
    reported = {r.model for r in rows}
    for name in statuses:  # units without a report, on every device
        if name not in reported:
            model, runtime, precision = parse_unit(name)
            for device in devices:
                units.setdefault((model, device, precision), {}).setdefault(runtime, None)
    unit_names = {parse_unit(m): m for m in statuses}
    others = [rt for rt in runtimes if rt != BASELINE]
    cols = RuntimeColumns(model=[], device=[], precision=[], conversion={rt: [] for rt in runtimes},
                          median={rt: [] for rt in runtimes}, note={rt: [] for rt in runtimes},
                          ratio={rt: [] for rt in others})
    converts: Counter[tuple[str, ...]] = Counter()
    for (model, device, precision), by_runtime in sorted(units.items()):
        cols["model"].append(model)
        cols["device"].append(strings(labels.get(device, device)))
        cols["precision"].append(strings(precision))
        medians: dict[str, float | None] = {}
        for rt in runtimes:
            unit = unit_names.get((model, rt, precision))
            conv, note, median = _cell(by_runtime.get(rt), statuses.get(unit) if unit else None,
                                       errors.get(unit) if unit else None)
            medians[rt] = median
            cols["conversion"][rt].append(strings(conv))
            cols["note"][rt].append(strings(note))
            cols["median"][rt].append(None if median is None else float(f"{median:.4g}"))
        for rt in others:
            base, other = medians.get(BASELINE), medians.get(rt)
            cols["ratio"][rt].append(float(f"{other / base:.4g}") if base and other else None)
        ok = tuple(rt for rt in runtimes if (cell := by_runtime.get(rt)) is not None and cell.conversion.get("ok", True))
        converts[ok] += 1
    summary = "; ".join(f"{n} converted in {' and '.join(ok) if ok else 'none'}"
                        for ok, n in sorted(converts.items(), key=lambda kv: (-len(kv[0]), kv[0])))
    return {"runtimes": runtimes, "baseline": BASELINE, "summary": summary, "columns": cols,
            "ratio_titles": {rt: f"{rt} / {BASELINE}" for rt in others}}


def runtime_section(data: RuntimeData | None) -> str:
    """The section's frame (the page fills it from the data block), or "" when the run has one runtime."""
    if data is None:
        return ""
    return (f'<h2>Runtimes</h2><div id="runtimes"><p>{escape(", ".join(data["runtimes"]))}: each model on each '
            f"device and precision; the ratio is the unit's median over {BASELINE}'s on the same device (above 1: "
            f"slower). Units (model · device · precision): {escape(data['summary'])}.</p>"
            '<div class="plots"><div class="plot" id="plot-runtime-scatter" data-plot="runtime-scatter"></div></div>'
            '<div id="runtime-table"></div></div>')
