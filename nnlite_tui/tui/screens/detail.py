"""Model detail screen: the model's report(s) — shapes, conversion, latency statistics and histogram, device,
and its runtimes and precisions side by side when the run has several."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Sparkline, Static

from nnlite_tui.core.names import short_name
from nnlite_tui.core.report.energy import EnergyFigure, energy_of
from nnlite_tui.core.results import Report, open_results, parse_report
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, label_of
from nnlite_tui.tui.failure import cause_line, split_error
from nnlite_tui.core.text_safety import printable
from nnlite_tui.tui.formatting import byte_size, fields, line, milliseconds, seconds, tiny, yes_no
from nnlite_tui.tui.widgets.op_bars import OpBars
from nnlite_tui.tui.widgets.precision_table import PrecisionTable, base_of, precision_rows
from nnlite_tui.tui.state import ModelRow, RunView
from nnlite_tui.tui.trust import trust_flags

STAT_NAMES = ("mean_ns", "median_ns", "p90_ns", "p99_ns", "std_ns", "min_ns", "max_ns")
HISTOGRAM_BINS = 12


def find_reports(run_dir: str | None, model: str) -> list[tuple[Path, Report]]:
    """Reports of exactly `model` (one per device/backend), from the run's index; one being written
    shows next time."""
    if not run_dir:
        return []
    results = open_results(run_dir)
    found = []
    for summary in results.of_unit(model):
        report = results.load(summary)
        if report is not None:
            found.append((results.path_of(summary), report))
    return found


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
    if row.error:  # said once, here: the stage's line and the report leave it out
        lines.append(Content.styled(printable(cause_line(row.error)), "bold $error"))
        rest = row.error.splitlines()[1:]
        if rest:
            lines.append(Content.styled(printable("\n".join(rest), keep_newlines=True), "$error"))
    for stage, (ok, took, detail) in row.stages.items():
        mark = ("ok      ", "$success") if ok else ("failed  ", "$error")
        if row.error and not ok and said(detail, row.error):
            detail = ""
        lines.append(line(f"  {stage:<10} ", mark, f"{seconds(took):>8}  ", (printable(detail), "dim")))
    return Content("\n").join(lines)


def said(text: str | None, error: str | None) -> bool:
    """`text` says nothing `error` has not: the stored error holds its message (any prefix aside)."""
    if not text or not error:
        return False
    message = text.strip().splitlines()[0] if text.strip() else ""
    return bool(message) and (message in error or split_error(message)[2] in error)


def trust_lines(report: Report) -> Content:
    """The trust flags, before the numbers (trust.py)."""
    style = {"ok": "$success", "warn": "$warning", "bad": "bold $error"}
    return Content("\n").join(line((f"{name:<14}", "bold"), (text, style[level]))
                              for name, text, level in trust_flags(report))


def shape_text(value: Any) -> str:
    """(1, 3, 32, 32) for one shape, (1, 10), (1, 4) for several."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple)) for v in value):
        return ", ".join(shape_text(v) for v in value)
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return "-" if value is None else str(value)


def conversion_fields(conversion: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    if conversion.get("converter"):
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


def report_lines(path: Path, report: Report | Mapping[str, Any], error: str | None = None) -> Content:
    """A report's block: its trust flags first, then the numbers; `error` (the unit's, already shown
    above) is not repeated."""
    if not isinstance(report, Report):
        report = parse_report(report, path.name)
    lines = [Content.from_markup("[b]$name[/]", name=printable(path.name)), trust_lines(report)]
    lines.append(fields([("valid", ("yes", "$success") if report.valid else ("no", "$error")),
                         ("device", str(report.device_type or "-")),
                         ("os", str(report.os_version or "-")),
                         ("emulator", yes_no(report.emulator))]))
    if report.error_message and not said(str(report.error_message), error):
        lines.append(Content.from_markup("[$error]$e[/]", e=printable(str(report.error_message), keep_newlines=True)))
    shape = [s for s in (report.in_dim_0, report.in_dim_1, report.in_dim_2, report.in_dim_3) if s is not None]
    if shape or report.output_shapes:  # a unit that failed before it had shapes: no "input ()"
        lines.append(fields([("input", shape_text(shape) if shape else "-"),
                             ("output", shape_text(report.output_shapes))]))
    if "conversion" in report.model_fields_set:
        conversion = report.conversion.model_dump(mode="json", exclude_unset=True)
        lines.append(line(("conversion  ", "bold"), fields(conversion_fields(conversion))))
    bench = report.benchmark
    rounds = [r for r in bench.rounds or [] if r.median_ns is not None]
    if len(rounds) > 1:
        interval, stability = bench.interval, bench.stability
        stable = stability is not None and stability.verdict == "stable"
        span = (f"{milliseconds(interval.low_ns / 1e6)}-{milliseconds((interval.high_ns or 0) / 1e6)}"
                if interval and interval.low_ns is not None else "-")
        median = bench.headline_median_ns
        lines.append(line(("rounds      ", "bold"), fields(
            [("median", milliseconds(float(median) / 1e6) if median is not None else "-"), ("95%", span),
             ("verdict", ("stable", "$success") if stable else ("unstable", "$warning"))]
            + [(f"r{r.index}", milliseconds(r.median_ns / 1e6)) for r in rounds if r.median_ns is not None])))
        for reason in stability.reasons if stability else []:
            lines.append(Content.styled(f"            {reason}", "$warning"))
    if bench.stats is not None:
        stats = bench.stats.model_dump()
        lines.append(line(("latency     ", "bold"), fields(
            [(k[:-3], milliseconds(stats[k] / 1e6)) for k in STAT_NAMES if isinstance(stats.get(k), (int, float))])))
    energy = energy_of(report.benchmark.energy)
    if energy is not None:
        lines.append(line(("energy      ", "bold"), energy_fields(energy)))
    conditions = report.conditions
    if conditions is not None:
        throttled = conditions.throttled
        lines.append(line(("conditions  ", "bold"), fields(
            [("throttled", ("yes", "$error") if throttled else yes_no(throttled)),
             ("source", str(conditions.source or "-"))])))
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
                versus = f"median against {label_of(DEFAULT_RUNTIME)}'s on the same device, " if runtimes else ""
                yield Static(f"{what} of {base_of(self.model)}: {versus}speed-up against fp32 on the same device, "
                             "accuracy against PyTorch fp32", classes="detail-label")
                yield PrecisionTable(precisions, id="precisions", classes="detail-block")
            reports = find_reports(self.view.run_dir, self.model)
            if not reports:
                yield Static(Content.from_markup("[dim]no report yet[/]"), classes="detail-block")
            row = self.view.models.get(self.model)
            for path, report in reports:
                yield Static(report_lines(path, report, row.error if row else None), classes="detail-block")
                samples = report.benchmark.samples_ns
                if samples:
                    samples_ms = [float(s) / 1e6 for s in samples]
                    yield Static(f"latency of {len(samples_ms)} timed runs, in order", classes="detail-label")
                    yield Sparkline(samples_ms, classes="latency-sparkline")
                    yield Static(Content("\n").join(list(histogram(samples_ms))), classes="detail-block histogram")
                if report.benchmark.ops is not None:
                    yield Static("where the time goes: top ops of the profiled pass", classes="detail-label")
                    yield OpBars.from_report(report.to_json(), classes="detail-block")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#detail").border_title = f"Model {short_name(printable(self.model), max(16, self.size.width - 12))}"
