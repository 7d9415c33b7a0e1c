"""A model's runtimes and precisions side by side (detail screen): the conversion's result, file size,
median, the ratio to LiteRT on the same device and precision, speed-up against fp32 in the same
runtime, and what each precision costs in accuracy against PyTorch fp32.

Read from the run's reports through core.results (found by the model they measure, `model.base_name`,
in the run's index): each names its runtime and precision, and a derived unit's carries the `accuracy`
block; a variant beyond its precision's tolerance shows `degraded`. The runtime columns (runtime, convert, vs LiteRT) appear when
the model has units in more than one runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.widgets import DataTable

from nnlite_tui.core.results import Report, open_results
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, RUNTIMES, label_of
from nnlite_tui.core.sources.units import PRECISIONS, parse_unit
from nnlite_tui.tui.formatting import byte_size, milliseconds

# The order the precisions and runtimes are listed in.
ORDER = tuple(PRECISIONS)
RUNTIME_ORDER = tuple(RUNTIMES)
PRECISION_COLUMNS = ("precision", "device", "size", "median", "speed-up", "top-1", "cosine", "max rel err", "accuracy")
COLUMNS = ("runtime", "precision", "device", "convert", "size", "median", f"vs {label_of(DEFAULT_RUNTIME)}",
           "speed-up", "top-1", "cosine", "max rel err", "accuracy")


@dataclass(frozen=True)
class PrecisionRow:
    precision: str
    device: str  # "<device>__<backend>" as in the report's file name
    size_bytes: int | None
    size_ratio: float | None  # against the fp32 file of the same runtime
    median_ms: float | None
    speedup: float | None  # fp32 median / this median, same runtime, device and backend
    top1: float | None
    cosine: float | None
    max_rel_err: float | None
    verdict: str | None  # "ok" | "degraded" | None (fp32, or no accuracy block)
    valid: bool
    runtime: str = DEFAULT_RUNTIME
    converted: str = "ok"  # "ok", or the failing stage and cause
    vs_litert: float | None = None  # this median / LiteRT's, same device and precision


def base_of(model: str) -> str:
    """The model a unit measures: `model@executorch@int8` -> `model` (the name itself for LiteRT fp32)."""
    return parse_unit(model)[0]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _converted(report: Report) -> str:
    conversion = report.conversion
    if conversion.ok is not False:
        return "ok"
    stage, cause = conversion.stage or "?", conversion.cause
    return f"{stage}: {cause}" if cause and cause != f"{stage}-error" else str(stage)


def precision_rows(run_dir: str | None, model: str) -> list[PrecisionRow]:
    """Every report of `model`'s units in the run, by device, runtime, then precision."""
    if not run_dir:
        return []
    results = open_results(run_dir)
    found = []
    for summary in results.of_model(base_of(model)):
        report = results.load(summary)
        if report is None:  # being written: shown next time
            continue
        stem = summary.file[:-len(".json")]
        device = stem.split("__", 1)[1] if "__" in stem else "-"
        median = report.duration
        found.append((report.runtime_name, report.precision, device, summary.device, report, report.valid,
                      median / 1e6 if report.valid and median else None))
    fp32 = {(runtime, device): (report.conversion.artifact_bytes, median)
            for runtime, precision, device, _, report, _, median in found if precision == "fp32"}
    litert = {(precision, serial): median for runtime, precision, _, serial, _, _, median in found
              if runtime == DEFAULT_RUNTIME and median}
    rows = []
    for runtime, precision, device, serial, report, valid, median in found:
        base_size, base_median = fp32.get((runtime, device), (None, None))
        size = _number(report.conversion.artifact_bytes)
        accuracy = report.accuracy
        reference = litert.get((precision, serial))
        rows.append(PrecisionRow(
            precision=precision, device=device, size_bytes=int(size) if size is not None else None,
            size_ratio=size / base_size if size is not None and base_size else None, median_ms=median,
            speedup=base_median / median if base_median and median else None,
            top1=_number(accuracy.top1_agreement) if accuracy else None,
            cosine=_number(accuracy.cosine) if accuracy else None,
            max_rel_err=_number(accuracy.max_abs_err_rel) if accuracy else None,
            verdict=accuracy.verdict if accuracy else None, valid=valid,
            runtime=runtime, converted=_converted(report),
            vs_litert=median / reference if median and reference else None))

    def order(r: PrecisionRow) -> tuple:
        return (r.device.split("__")[0], RUNTIME_ORDER.index(r.runtime) if r.runtime in RUNTIME_ORDER else 9,
                r.device, ORDER.index(r.precision) if r.precision in ORDER else len(ORDER))

    return sorted(rows, key=order)


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else format(value, spec) + suffix


def columns(rows: list[PrecisionRow]) -> tuple[str, ...]:
    return COLUMNS if len({row.runtime for row in rows}) > 1 else PRECISION_COLUMNS


def cells(row: PrecisionRow, with_runtimes: bool = False) -> tuple[str | Content, ...]:
    size = byte_size(row.size_bytes) + (f" ({row.size_ratio:.2f}x)" if row.size_ratio is not None and
                                        row.precision != "fp32" else "")
    if row.verdict == "degraded":
        verdict: str | Content = Content.styled("degraded", "$error")
    elif row.verdict:
        verdict = Content.styled(str(row.verdict), "$success")
    else:
        verdict = "-"
    median = milliseconds(row.median_ms) if row.valid else Content.styled("failed", "$error")
    accuracy = (_fmt(row.speedup, ".2f", "x"), _fmt(row.top1, ".2f"), _fmt(row.cosine, ".5f"),
                _fmt(row.max_rel_err, ".2e"), verdict)
    if not with_runtimes:
        return (row.precision, row.device, size, median, *accuracy)
    converted = row.converted if row.converted == "ok" else Content.styled(row.converted, "$error")
    return (row.runtime, row.precision, row.device, converted, size, median, _fmt(row.vs_litert, ".2f", "x"),
            *accuracy)


class PrecisionTable(DataTable):
    """Not focusable: the detail screen's keys (enter, escape, q) stay the screen's."""

    DEFAULT_CSS = "PrecisionTable { height: auto; max-height: 20; }"

    def __init__(self, rows: list[PrecisionRow], **kwargs: Any) -> None:
        super().__init__(show_cursor=False, zebra_stripes=True, **kwargs)
        self.can_focus = False
        self.rows_shown = rows

    def on_mount(self) -> None:
        shown = columns(self.rows_shown)
        self.add_columns(*shown)
        for row in self.rows_shown:
            self.add_row(*cells(row, with_runtimes=shown is COLUMNS))
