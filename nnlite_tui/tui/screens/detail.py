"""Model detail screen: the model's report(s) — shapes, conversion, latency statistics and histogram, device,
and its runtimes and precisions side by side when the run has several."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Sparkline, Static

from nnlite_tui.core.names import short_name
from nnlite_tui.core.report.energy import EnergyFigure, energy_of
from nnlite_tui.core.run_dir import reports_of
from nnlite_tui.core.text_safety import printable
from nnlite_tui.tui.formatting import byte_size, fields, line, milliseconds, seconds, tiny, yes_no
from nnlite_tui.tui.widgets.op_bars import OpBars
from nnlite_tui.tui.widgets.precision_table import PrecisionTable, base_of, precision_rows
from nnlite_tui.tui.state import ModelRow, RunView

STAT_NAMES = ("mean_ns", "median_ns", "p90_ns", "p99_ns", "std_ns", "min_ns", "max_ns")
HISTOGRAM_BINS = 12


def find_reports(run_dir: str | None, model: str) -> list[tuple[Path, dict[str, Any]]]:
    """Reports of exactly `model` (one per device/backend); one being written shows next time."""
    return reports_of(run_dir, model)


def find_key(data: Any, key: str) -> Any:
    """The first value stored under `key` anywhere in nested dicts (report layout varies by version)."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        for value in data.values():
            hit = find_key(value, key)
            if hit is not None:
                return hit
    return None


def histogram(samples_ms: list[float], bins: int = HISTOGRAM_BINS, width: int = 40) -> Iterator[Content]:
    low, high = min(samples_ms), max(samples_ms)
    step = (high - low) / bins or 1.0
    counts = [0] * bins
    for value in samples_ms:
        counts[min(int((value - low) / step), bins - 1)] += 1
    peak = max(counts)
    for i, count in enumerate(counts):
        bar = "█" * max(1 if count else 0, round(width * count / peak))
        yield line(f"{milliseconds(low + i * step):>10} ", (bar + " ", "$primary"), str(count))


def summary(row: ModelRow | None, model: str) -> Content:
    model = printable(model)
    if row is None:
        return line((model + "  ", "bold"), "not in this run")
    lines = [line((model + "  ", "bold"), fields([("status", row.status), ("try", str(row.attempt)),
                                                   ("device", row.device or "-")]))]
    if row.median_ms is not None:
        lines.append(fields([("median", milliseconds(row.median_ms))]))
    if row.error:
        lines.append(Content.from_markup("[$error]$e[/]", e=printable(row.error, keep_newlines=True)))
    for stage, (ok, took, detail) in row.stages.items():
        mark = ("ok      ", "$success") if ok else ("failed  ", "$error")
        lines.append(line(f"  {stage:<10} ", mark, f"{seconds(took):>8}  ", (printable(detail), "dim")))
    return Content("\n").join(lines)


def shape_text(value: Any) -> str:
    """(1, 3, 32, 32) for one shape, (1, 10), (1, 4) for several."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple)) for v in value):
        return ", ".join(shape_text(v) for v in value)
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return "-" if value is None else str(value)


def conversion_fields(conversion: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    if "converter" in conversion:
        version = conversion.get("converter_version")
        out.append(("converter", f"{conversion['converter']}" + (f" {version}" if version else "")))
    if isinstance(conversion.get("seconds"), (int, float)):
        out.append(("took", seconds(conversion["seconds"])))
    if isinstance(conversion.get("max_abs_diff"), (int, float)):
        out.append(("max |diff|", tiny(conversion["max_abs_diff"])))
    if isinstance(conversion.get("artifact_bytes"), (int, float)):
        out.append(("size", byte_size(conversion["artifact_bytes"])))
    if conversion.get("layout"):
        out.append(("layout", str(conversion["layout"])))
    return out


def report_lines(path: Path, report: dict[str, Any]) -> Content:
    lines = [Content.from_markup("[b]$name[/]", name=printable(path.name))]
    valid = report.get("valid")
    lines.append(fields([("valid", ("yes", "$success") if valid else ("no", "$error")),
                         ("device", str(report.get("device_type") or "-")),
                         ("os", str(report.get("os_version") or "-")),
                         ("emulator", yes_no(report.get("emulator")))]))
    if report.get("error_message"):
        lines.append(Content.from_markup("[$error]$e[/]", e=printable(report["error_message"], keep_newlines=True)))
    shape = [report.get(f"in_dim_{i}") for i in range(4)]
    output = find_key(report, "output_shapes") or find_key(report, "out_shape")
    lines.append(fields([("input", shape_text([s for s in shape if s is not None])),
                         ("output", shape_text(output))]))
    conversion = report.get("conversion")
    if isinstance(conversion, dict):
        lines.append(line(("conversion  ", "bold"), fields(conversion_fields(conversion))))
    bench = report.get("benchmark") if isinstance(report.get("benchmark"), dict) else {}
    rounds = [r for r in bench.get("rounds") or [] if isinstance(r.get("median_ns"), (int, float))]
    if len(rounds) > 1:
        interval = bench.get("interval") or {}
        stability = bench.get("stability") or {}
        stable = stability.get("verdict") == "stable"
        span = (f"{milliseconds(interval['low_ns'] / 1e6)}-{milliseconds(interval['high_ns'] / 1e6)}"
                if isinstance(interval.get("low_ns"), (int, float)) else "-")
        lines.append(line(("rounds      ", "bold"), fields(
            [("median", milliseconds(float(bench["median_ns"]) / 1e6)), ("95%", span),
             ("verdict", ("stable", "$success") if stable else ("unstable", "$warning"))]
            + [(f"r{r['index']}", milliseconds(r["median_ns"] / 1e6)) for r in rounds])))
        for reason in stability.get("reasons") or []:
            lines.append(Content.styled(f"            {reason}", "$warning"))
    stats = find_key(report, "stats")
    if isinstance(stats, dict):
        lines.append(line(("latency     ", "bold"), fields(
            [(k[:-3], milliseconds(stats[k] / 1e6)) for k in STAT_NAMES if isinstance(stats.get(k), (int, float))])))
    energy = energy_of(report)
    if energy is not None:
        lines.append(line(("energy      ", "bold"), energy_fields(energy)))
    conditions = report.get("conditions")
    if isinstance(conditions, dict):
        throttled = conditions.get("throttled")
        lines.append(line(("conditions  ", "bold"), fields(
            [("throttled", ("yes", "$error") if throttled else yes_no(throttled)),
             ("source", str(conditions.get("source") or "-"))])))
    return Content("\n").join(lines)


def energy_fields(e: EnergyFigure) -> Content:
    """Energy per inference and mean power beside the latency; why there is none otherwise."""
    if not e.valid or e.energy_per_inference_mj is None:
        why = e.reason or "not measured"
        return Content.from_markup("[$warning]no figure[/]: $why", why=why if len(why) <= 160 else why[:159] + "…")
    power = [("load", f"{e.power_load_mw:.0f} mW"), ("idle", f"{e.power_idle_mw:.0f} mW")] \
        if e.power_load_mw is not None and e.power_idle_mw is not None else []
    return fields([("per inference", f"{e.energy_per_inference_mj:.4g} mJ"), *power,
                   ("source", str(e.source or "-"))])


class ModelDetailScreen(Screen):
    BINDINGS = [Binding("escape,q,enter", "app.pop_screen", "Back")]

    def __init__(self, view: RunView, model: str) -> None:
        super().__init__()
        self.view = view
        self.model = model

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail"):
            yield Static(summary(self.view.models.get(self.model), self.model), classes="detail-block")
            precisions = precision_rows(self.view.run_dir, self.model)
            if len({(row.runtime, row.precision) for row in precisions}) > 1:
                runtimes = len({row.runtime for row in precisions}) > 1
                what = "runtimes and precisions" if runtimes else "precisions"
                versus = "median against LiteRT's on the same device, " if runtimes else ""
                yield Static(f"{what} of {base_of(self.model)}: {versus}speed-up against fp32 on the same device, "
                             "accuracy against PyTorch fp32", classes="detail-label")
                yield PrecisionTable(precisions, id="precisions", classes="detail-block")
            reports = find_reports(self.view.run_dir, self.model)
            if not reports:
                yield Static(Content.from_markup("[dim]no report yet[/]"), classes="detail-block")
            for path, report in reports:
                yield Static(report_lines(path, report), classes="detail-block")
                samples = find_key(report, "samples_ns")
                if isinstance(samples, list) and samples:
                    samples_ms = [float(s) / 1e6 for s in samples]
                    yield Static(f"latency of {len(samples_ms)} timed runs, in order", classes="detail-label")
                    yield Sparkline(samples_ms, classes="latency-sparkline")
                    yield Static(Content("\n").join(list(histogram(samples_ms))), classes="detail-block histogram")
                if (report.get("benchmark") or {}).get("ops"):
                    yield Static("where the time goes: top ops of the profiled pass", classes="detail-label")
                    yield OpBars.from_report(report, classes="detail-block")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#detail").border_title = f"Model {short_name(printable(self.model), max(16, self.size.width - 12))}"
