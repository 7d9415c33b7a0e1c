"""The HTML report's runtime comparison (a run with units in more than one runtime): per model, device
and precision, each runtime's conversion result and median, and the ratio to LiteRT; a scatter of
one runtime's median against LiteRT's (below the diagonal: faster than LiteRT); how many models
convert in which runtime.

Built from the rows (the run's reports) and, for units without a report (skipped: a precision the
runtime does not make), the store's statuses and errors.
"""

from __future__ import annotations

from collections import Counter
from html import escape

from nnlite_tui.core.report import svg
from nnlite_tui.core.report.rows import ResultRow, RunResults
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME
from nnlite_tui.core.sources.units import parse_unit

BASELINE = DEFAULT_RUNTIME


def _converted(row: ResultRow) -> str:
    conv = row.conversion
    if conv.get("ok", True):
        delegation = conv.get("delegation") or {}
        if delegation.get("total_ops"):
            return f"ok ({delegation['delegated_ops']}/{delegation['total_ops']} ops delegated)"
        return "ok"
    cause = conv.get("cause")
    return f"{conv.get('stage') or '?'}: {cause}" if cause else str(conv.get("stage") or "?")


def _cell(row: ResultRow | None, status: str | None, error: dict | None) -> tuple[str, str, str, float | None]:
    """(class, conversion text, median text, median ms) of one runtime's unit."""
    if row is None:
        if status is None:
            return "muted", "not in this run", "", None
        message = (error or {}).get("message") or status
        return "muted", f"{status}: {message}" if status == "skipped" else status, "", None
    median = row.median_ns / 1e6 if row.median_ns else None
    text = f"{median:.4g}" if median is not None else (row.error_stage or "failed")
    return ("" if row.conversion.get("ok", True) else "err"), _converted(row), text, median


def runtime_section(run: RunResults) -> str:
    """The section's HTML, or "" when the run has one runtime only."""
    runtimes = sorted({r.runtime for r in run.rows} | {parse_unit(m)[1] for m in run.statuses},
                      key=lambda r: (r != BASELINE, r))
    if len(runtimes) < 2:
        return ""
    units: dict[tuple[str, str, str], dict[str, ResultRow | None]] = {}
    devices = sorted({r.device for r in run.rows})
    for r in run.rows:
        units.setdefault((r.base_model, r.device, r.precision), {})[r.runtime] = r
    labels = {r.device: r.device_label for r in run.rows}
    reported = {r.model for r in run.rows}
    for name, status in run.statuses.items():  # units without a report, on every device
        if name not in reported:
            model, runtime, precision = parse_unit(name)
            for device in devices:
                units.setdefault((model, device, precision), {}).setdefault(runtime, None)
    head = "".join(f"<th>{escape(rt)} conversion</th><th class=\"num\">{escape(rt)} median ms</th>" for rt in runtimes)
    head += "".join(f'<th class="num">{escape(rt)} / {BASELINE}</th>' for rt in runtimes if rt != BASELINE)
    unit_names = {parse_unit(m): m for m in run.statuses}
    body, points, converts = [], [], Counter()
    for (model, device, precision), by_runtime in sorted(units.items()):
        cells, medians = [], {}
        for rt in runtimes:
            row = by_runtime.get(rt)
            unit = unit_names.get((model, rt, precision))
            cls, conv, median_text, median = _cell(row, run.statuses.get(unit) if unit else None,
                                                    run.errors.get(unit) if unit else None)
            medians[rt] = median
            value = f' data-v="{median:.6g}"' if median is not None else ""
            cells.append(f'<td class="{cls}">{escape(conv)}</td><td class="num"{value}>{escape(median_text)}</td>')
        for rt in runtimes:
            if rt == BASELINE:
                continue
            base, other = medians.get(BASELINE), medians.get(rt)
            ratio = other / base if base and other else None
            cells.append(f'<td class="num">{"" if ratio is None else f"{ratio:.3f}"}</td>')
            if ratio is not None:
                points.append((base, other, f"{labels.get(device, device)} · {precision}",
                               f"{model} on {labels.get(device, device)} ({precision}): {BASELINE} {base:.4g} ms, "
                               f"{rt} {other:.4g} ms ({ratio:.3f}x)"))
        ok = tuple(rt for rt in runtimes if (r := by_runtime.get(rt)) is not None and r.conversion.get("ok", True))
        converts[ok] += 1
        body.append(f"<tr><td>{escape(model)}</td><td>{escape(labels.get(device, device))}</td>"
                    f"<td>{escape(precision)}</td>{''.join(cells)}</tr>")
    others = [rt for rt in runtimes if rt != BASELINE]
    plot = svg.scatter("runtime-scatter", f"{', '.join(others)} vs {BASELINE}: median per model (below the diagonal: "
                       f"faster than {BASELINE})", points, f"{BASELINE} median (ms)",
                       f"{', '.join(others)} median (ms)", diagonal=True)
    summary = "; ".join(f"{n} converted in {' and '.join(ok) if ok else 'none'}"
                        for ok, n in sorted(converts.items(), key=lambda kv: (-len(kv[0]), kv[0])))
    return (f'<h2>Runtimes</h2><div id="runtimes"><p>{escape(", ".join(runtimes))}: each model on each device and '
            f"precision; the ratio is the unit's median over {BASELINE}'s on the same device (above 1: slower). "
            f"Units (model · device · precision): {escape(summary)}.</p>"
            f'<div class="plots">{plot}</div><table id="runtime-table"><tr><th>model</th><th>device</th>'
            f"<th>precision</th>{head}</tr>{''.join(body)}</table></div>")
