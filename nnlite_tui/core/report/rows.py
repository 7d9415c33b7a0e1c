"""One typed row per report, and a run as the result views see it (reports + the store's statuses).

Reports come from core.results (the typed Report, every earlier schema already upgraded); a row
holds what the views draw, in the views' units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from nnlite_tui.core.ops.block import OpRow, OpsBlockJson
from nnlite_tui.core.ops.block_versions import read_block
from nnlite_tui.core.report.energy import EnergyFigure, energy_of
from nnlite_tui.core.results import Report, RunResults as ReportFolder, family_of, parse_report
from nnlite_tui.core.results.model import EnergyBlock
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME

DEFAULT_PRECISION = "fp32"
__all__ = ["DEFAULT_PRECISION", "ResultRow", "RunResults", "family_of", "load_run", "ops_block_of", "row_from_report"]


def ops_block_of(report: Report) -> OpsBlockJson:
    """The per-op profile (`benchmark.ops`) in the current ops schema and checked, whatever version
    wrote it (core/ops/block_versions.py); {} without one."""
    block = report.benchmark.ops
    if block is None or not block.ops:
        return {}
    return read_block(block.model_dump(mode="json", exclude_unset=True)) or {}


class ValidationJson(TypedDict, total=False):
    strength: str  # "strong", "weak: ...", ... (results/model.py ValidationBlock)


class ComputeCheckJson(TypedDict, total=False):
    verdict: str  # "ok", or how the artifact's FLOPs differ from the model's


class DelegationJson(TypedDict, total=False):
    total_ops: int
    delegated_ops: int


class ConversionJson(TypedDict, total=False):
    """The report's conversion block without its null keys, as the views read it (a runtime's own keys
    ride along)."""

    ok: bool
    stage: str
    cause: str
    converter: str
    converter_version: str
    seconds: float
    cached: bool
    layout: str
    max_abs_diff: float
    validation: ValidationJson
    compute_check: ComputeCheckJson
    delegation: DelegationJson
    worker_peak_rss_mb: float
    artifact_input_shape: list[int]


def conversion_of(report: Report) -> ConversionJson:
    """The report's conversion block as its file holds it, without its null keys."""
    written = report.conversion.model_dump(mode="json", exclude_unset=True)
    # Report validated the declared keys; the others are the converter's own, as it wrote them.
    return cast(ConversionJson, {k: v for k, v in written.items() if v is not None})


class RoundsFields(TypedDict, total=False):
    round_medians_ns: list[float]
    headline_median_ns: float | None
    interval_ns: tuple[float, float] | None
    stable: bool | None
    instability: list[str]


@dataclass
class ResultRow:
    model: str
    family: str
    task: str | None
    device: str  # the serial: what tells two devices apart
    device_label: str  # what a person recognises: the device's model name
    backend: str
    precision: str
    status: str  # done / failed / skipped
    params: int | None = None
    flops: float | None = None
    artifact_bytes: int | None = None
    stats: dict[str, float] = field(default_factory=dict)
    samples_ns: list[float] = field(default_factory=list)
    init_ns: float | None = None
    first_inference_ns: float | None = None
    error_stage: str | None = None
    error_message: str | None = None
    conversion: ConversionJson = field(default_factory=lambda: ConversionJson())
    ops: list[OpRow] = field(default_factory=list)
    ops_invalid: list[str] = field(default_factory=list)  # why the ops block failed its checks
    source_file: str | None = None
    # The rounds (schema 3): each round's median; the headline median across them, its interval and
    # the stability verdict. A report of an earlier schema is one round, its median the samples'.
    round_medians_ns: list[float] = field(default_factory=list)
    headline_median_ns: float | None = None
    interval_ns: tuple[float, float] | None = None
    stable: bool | None = None
    instability: list[str] = field(default_factory=list)
    runtime: str = DEFAULT_RUNTIME  # the unit's runtime (reports before runtimes existed are LiteRT's)
    base_model: str = ""  # the model the unit measures, whatever its runtime and precision (model.base_name)
    energy: EnergyFigure | None = None  # None: the run did not ask for energy
    energy_block: EnergyBlock | None = None  # the whole block (its samples: compare's bootstrap)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.model, self.device, self.backend, self.precision)

    @property
    def median_ns(self) -> float | None:
        return self.headline_median_ns if self.headline_median_ns is not None else self.stats.get("median_ns")

    @property
    def rounds(self) -> int:
        return len(self.round_medians_ns) or (1 if self.stats else 0)

    @property
    def group(self) -> str:
        """The device, runtime (other than LiteRT) and precision a latency was measured on, as one label."""
        runtime = "" if self.runtime == DEFAULT_RUNTIME else f"{self.runtime} · "
        return f"{self.device_label} · {runtime}{self.precision}"


def row_from_report(report: Report | Mapping[str, object], source_file: str | None = None) -> ResultRow:
    if not isinstance(report, Report):
        report = parse_report(report, source_file or "a report")
    bench = report.benchmark
    valid = report.valid
    error = report.error
    ops = ops_block_of(report)
    return ResultRow(
        model=report.model_name,
        family=family_of(report.model_name),
        task=report.model.task,
        device=str(report.device.serial or report.device_type or "?"),
        device_label=str(report.device.model or report.device_type or report.device.serial or "?"),
        backend=str(bench.backend or "?"),
        precision=report.precision,
        status="done" if valid else "failed",
        params=report.params,
        flops=report.model.flops or ops.get("flops"),
        artifact_bytes=report.conversion.artifact_bytes,
        stats=bench.stats.model_dump(exclude_none=True) if valid and bench.stats else {},
        samples_ns=[float(s) for s in bench.samples_ns or []] if valid else [],
        init_ns=bench.init_ns,
        first_inference_ns=bench.first_inference_ns,
        error_stage=None if valid else (error.stage if error else None),
        error_message=None if valid else ((error.message if error else None) or report.error_message),
        conversion=conversion_of(report),
        ops=list(ops.get("ops") or []),
        ops_invalid=list(ops.get("invalid_reasons") or []),
        source_file=source_file,
        **_rounds_fields(report if valid else None),
        runtime=report.runtime_name,
        base_model=report.base_model,
        energy=energy_of(bench.energy) if valid else None,
        energy_block=bench.energy if valid else None,
    )


def _rounds_fields(report: Report | None) -> RoundsFields:
    if report is None:
        return {}
    bench = report.benchmark
    interval, stability = bench.interval, bench.stability
    verdict = stability.verdict if stability else None
    return {"round_medians_ns": [float(r.median_ns) for r in bench.rounds or [] if r.median_ns is not None],
            "headline_median_ns": bench.median_ns,
            "interval_ns": (float(interval.low_ns), float(interval.high_ns))
            if interval and interval.low_ns is not None and interval.high_ns is not None else None,
            "stable": None if verdict is None else verdict == "stable",
            "instability": list(stability.reasons) if stability else []}


@dataclass
class RunResults:
    """A run as the views see it: its rows (core.results.RunResults is the folder they come from)."""

    run_dir: Path
    rows: list[ResultRow]
    reports: list[dict[str, Any]]  # the reports as JSON objects, in the rows' order (the HTML page's source)
    statuses: dict[str, str]  # model -> status in the store (covers models without a report)
    errors: dict[str, dict[str, Any]]  # model -> the store's last error, for models without a report
    config: Mapping[str, object] | None  # the run's configuration as its state file holds it
    typed: list[Report] = field(default_factory=list)  # the same reports, typed, in the rows' order

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for status in self.statuses.values():
            counts[status] = counts.get(status, 0) + 1
        return counts


def _label_twins(rows: list[ResultRow]) -> None:
    """Two phones of the same model are two devices: their labels get the serial."""
    serials: dict[str, set[str]] = {}
    for row in rows:
        serials.setdefault(row.device_label, set()).add(row.device)
    for row in rows:
        if len(serials[row.device_label]) > 1:
            row.device_label = f"{row.device_label} ({row.device})"


def store_statuses(path: Path, rows: list[ResultRow]) -> tuple[Mapping[str, object] | None, dict[str, str],
                                                                dict[str, dict[str, Any]]]:
    """(the run's config, each model's status, each failed model's error): the reports' own view, then the
    store's where the run has a state file; a row the store says was skipped is marked so.
    ValueError names a state file that cannot be read."""
    from nnlite_tui.core.run_dir import STATE_FILE
    from nnlite_tui.core.store.files import StoreError, load_snapshot

    statuses = {row.model: row.status for row in rows}
    errors: dict[str, dict[str, Any]] = {}
    config = None
    if (path / STATE_FILE).exists():
        try:
            config, records = load_snapshot(path)
        except StoreError as exc:
            raise ValueError(str(exc)) from None
        for rec in records:
            statuses[rec["name"]] = rec.get("status") or "queued"
            if rec.get("error"):
                errors[rec["name"]] = rec["error"]
    for row in rows:
        if statuses.get(row.model) == "skipped":
            row.status = "skipped"
    return config, statuses, errors


def load_run(run_dir: str | Path) -> RunResults:
    """A run's reports as rows, plus the store's view when the run has a state file.

    A folder with only reports/ (copied off a machine, say) is a run too: the statuses then come
    from the reports alone. ValueError (core.results.ReportError) names an unreadable report.
    """
    from nnlite_tui.core.run_dir import REPORTS_DIR, STATE_FILE

    path = Path(run_dir)
    has_state = (path / STATE_FILE).exists()
    if not (path / REPORTS_DIR).is_dir() and not has_state:
        raise ValueError(f"{path}: no {REPORTS_DIR}/ folder and no {STATE_FILE}; not a run directory")
    folder = ReportFolder(path, strict=True)
    typed: list[Report] = []
    rows = []
    for summary in folder.summaries():
        report = folder.load(summary)
        if report is not None:
            typed.append(report)
            rows.append(row_from_report(report, summary.file))
    reports = [r.to_json() for r in typed]
    _label_twins(rows)
    config, statuses, errors = store_statuses(path, rows)
    return RunResults(run_dir=path, rows=rows, reports=reports, statuses=statuses, errors=errors, config=config,
                      typed=typed)
