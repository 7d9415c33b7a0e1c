"""A model's precisions side by side (detail screen): file size, median, speed-up against fp32 on the
same device and backend, and what each precision costs in accuracy against PyTorch fp32.

Read from the run's reports: a derived unit's report names its fp32 model (`model.base_name`) and
carries the `accuracy` block; a variant beyond its precision's tolerance shows `degraded`.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.content import Content
from textual.widgets import DataTable

from nnlite_tui.tui.formatting import byte_size, milliseconds

# The order the precisions are listed in (core.precision.PRECISIONS; not imported: the console
# reads reports, it does not derive anything).
ORDER = ("fp32", "fp16", "dynamic-int8", "int8")
COLUMNS = ("precision", "device", "size", "median", "speed-up", "top-1", "cosine", "max rel err", "accuracy")


@dataclass(frozen=True)
class PrecisionRow:
    precision: str
    device: str  # "<device>__<backend>" as in the report's file name
    size_bytes: int | None
    size_ratio: float | None  # against the fp32 file
    median_ms: float | None
    speedup: float | None  # fp32 median / this median, same device and backend
    top1: float | None
    cosine: float | None
    max_rel_err: float | None
    verdict: str | None  # "ok" | "degraded" | None (fp32, or no accuracy block)
    valid: bool


def base_of(model: str) -> str:
    """The fp32 unit's name of `model@precision` (the name itself for an fp32 unit)."""
    name, sep, suffix = model.rpartition("@")
    return name if sep and suffix in ORDER else model


def _reports(run_dir: str, base: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in sorted(glob.glob(str(Path(run_dir, "reports", glob.escape(base) + "*.json")))):
        try:
            data = json.loads(Path(name).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue  # being written: shown the next time the screen opens
        model = data.get("model") if isinstance(data, dict) else None
        unit = str(data.get("model_name") or "") if isinstance(data, dict) else ""
        if isinstance(model, dict) and (model.get("base_name") or base_of(unit)) == base:
            out.append((Path(name).name, data))
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def precision_rows(run_dir: str | None, model: str) -> list[PrecisionRow]:
    """Every report of `model`'s precisions in the run, by device and backend, then precision."""
    if not run_dir:
        return []
    base = base_of(model)
    found = []
    for file_name, report in _reports(run_dir, base):
        precision = str((report.get("model") or {}).get("precision") or "fp32")
        device = file_name[:-len(".json")].split("__", 1)[1] if "__" in file_name else "-"
        conversion = report.get("conversion") or {}
        valid = bool(report.get("valid"))
        median = _number(report.get("duration"))
        found.append((precision, device, conversion, valid, median / 1e6 if valid and median else None,
                      report.get("accuracy") or {}))
    fp32 = {device: (conversion, median) for precision, device, conversion, _, median, _ in found
            if precision == "fp32"}
    rows = []
    for precision, device, conversion, valid, median, accuracy in found:
        base_conversion, base_median = fp32.get(device, ({}, None))
        size, base_size = _number(conversion.get("tflite_bytes")), _number(base_conversion.get("tflite_bytes"))
        rows.append(PrecisionRow(
            precision=precision, device=device, size_bytes=int(size) if size is not None else None,
            size_ratio=size / base_size if size is not None and base_size else None, median_ms=median,
            speedup=base_median / median if base_median and median else None,
            top1=_number(accuracy.get("top1_agreement")), cosine=_number(accuracy.get("cosine")),
            max_rel_err=_number(accuracy.get("max_abs_err_rel")), verdict=accuracy.get("verdict"), valid=valid))
    return sorted(rows, key=lambda r: (r.device, ORDER.index(r.precision) if r.precision in ORDER else len(ORDER)))


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else format(value, spec) + suffix


def cells(row: PrecisionRow) -> tuple[str | Content, ...]:
    size = byte_size(row.size_bytes) + (f" ({row.size_ratio:.2f}x)" if row.size_ratio is not None and
                                        row.precision != "fp32" else "")
    if row.verdict == "degraded":
        verdict: str | Content = Content.styled("degraded", "$error")
    elif row.verdict:
        verdict = Content.styled(str(row.verdict), "$success")
    else:
        verdict = "-"
    median = milliseconds(row.median_ms) if row.valid else Content.styled("failed", "$error")
    return (row.precision, row.device, size, median, _fmt(row.speedup, ".2f", "x"), _fmt(row.top1, ".2f"),
            _fmt(row.cosine, ".5f"), _fmt(row.max_rel_err, ".2e"), verdict)


class PrecisionTable(DataTable):
    """Not focusable: the detail screen's keys (enter, escape, q) stay the screen's."""

    DEFAULT_CSS = "PrecisionTable { height: auto; max-height: 20; }"

    def __init__(self, rows: list[PrecisionRow], **kwargs: Any) -> None:
        super().__init__(show_cursor=False, zebra_stripes=True, **kwargs)
        self.can_focus = False
        self.rows_shown = rows

    def on_mount(self) -> None:
        self.add_columns(*COLUMNS)
        for row in self.rows_shown:
            self.add_row(*cells(row))
