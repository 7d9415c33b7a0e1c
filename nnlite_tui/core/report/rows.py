"""One typed row per report, and a run as the result views see it (reports + the store's statuses)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nnlite_tui.core.ops.block_versions import read_block
from nnlite_tui.core.report.document import runtime_of
from nnlite_tui.core.report.energy import EnergyFigure, energy_block, energy_of
from nnlite_tui.core.run_dir import load_reports

DEFAULT_PRECISION = "fp32"
DEFAULT_RUNTIME = "litert"
_HASH_SUFFIX = re.compile(r"[-_][0-9a-f]{16,}$")


def precision_of(report: dict[str, Any]) -> str:
    """The report's precision variant; reports written before variants existed are fp32."""
    for block in (report, report.get("benchmark") or {}, report.get("conversion") or {}, report.get("model") or {}):
        if block.get("precision"):
            return str(block["precision"])
    return DEFAULT_PRECISION


def ops_block_of(report: dict[str, Any]) -> dict[str, Any]:
    """The per-op profile: `benchmark.ops` ({..., "ops": [...]}), or a bare list of ops at top level;
    in the current ops schema and checked, whatever version wrote it (core/ops/block_versions.py)."""
    for block in ((report.get("benchmark") or {}).get("ops"), report.get("ops")):
        if isinstance(block, dict) and block.get("ops"):
            return read_block(block) or {}
        if isinstance(block, list) and block:
            return read_block({"schema_version": 1, "ops": block}) or {}
    return {}


def family_of(name: str) -> str:
    """LEMUR names a model `<family>-<md5>`: the family is the name without its hash."""
    return _HASH_SUFFIX.sub("", name) or name


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
    conversion: dict[str, Any] = field(default_factory=dict)
    ops: list[dict[str, Any]] = field(default_factory=list)
    ops_invalid: list[str] = field(default_factory=list)  # why the ops block failed its checks
    source_file: str | None = None
    # The rounds (schema 3): each round's median; the headline median across them, its interval and
    # the stability verdict. A report of an earlier schema is one round, its median the samples'.
    round_medians_ns: list[float] = field(default_factory=list)
    headline_median_ns: float | None = None
    interval_ns: tuple[float, float] | None = None
    stable: bool | None = None
    instability: list[str] = field(default_factory=list)
    runtime: str = "litert"  # the unit's runtime (reports before runtimes existed are LiteRT's)
    base_model: str = ""  # the model the unit measures, whatever its runtime and precision (model.base_name)
    energy: EnergyFigure | None = None  # None: the run did not ask for energy
    energy_block: dict[str, Any] | None = None  # the raw block (its samples: compare's bootstrap)

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


def row_from_report(report: dict[str, Any], source_file: str | None = None) -> ResultRow:
    model = report.get("model") or {}
    bench = report.get("benchmark") or {}
    device = report.get("device") or {}
    error = report.get("error") or {}
    name = str(report.get("model_name") or model.get("name") or "?")
    valid = bool(report.get("valid"))
    return ResultRow(
        model=name,
        family=family_of(name),
        task=model.get("task"),
        device=str(device.get("serial") or report.get("device_type") or "?"),
        device_label=str(device.get("model") or report.get("device_type") or device.get("serial") or "?"),
        backend=str(bench.get("backend_used") or (bench.get("settings") or {}).get("backend") or "?"),
        precision=precision_of(report),
        status="done" if valid else "failed",
        params=model.get("params") or (report.get("conversion") or {}).get("params"),
        flops=model.get("flops") or ops_block_of(report).get("flops"),
        artifact_bytes=(report.get("conversion") or {}).get("artifact_bytes"),
        stats=dict(bench.get("stats") or {}) if valid else {},
        samples_ns=[float(s) for s in bench.get("samples_ns") or []] if valid else [],
        init_ns=bench.get("init_ns"),
        first_inference_ns=bench.get("first_inference_ns"),
        error_stage=None if valid else error.get("stage"),
        error_message=None if valid else (error.get("message") or report.get("error_message")),
        conversion={k: v for k, v in (report.get("conversion") or {}).items() if v is not None},
        ops=list(ops_block_of(report).get("ops") or []),
        ops_invalid=list(ops_block_of(report).get("invalid_reasons") or []),
        source_file=source_file,
        **_rounds_fields(bench if valid else {}),
        runtime=runtime_of(report),
        base_model=str(model.get("base_name") or name),
        energy=energy_of(report) if valid else None,
        energy_block=energy_block(report) if valid else None,
    )


def _rounds_fields(bench: dict[str, Any]) -> dict[str, Any]:
    rounds = [r for r in bench.get("rounds") or [] if r.get("median_ns") is not None]
    interval = bench.get("interval") or {}
    stability = bench.get("stability") or {}
    verdict = stability.get("verdict")
    return {"round_medians_ns": [float(r["median_ns"]) for r in rounds],
            "headline_median_ns": bench.get("median_ns"),
            "interval_ns": (float(interval["low_ns"]), float(interval["high_ns"]))
            if interval.get("low_ns") is not None else None,
            "stable": None if verdict is None else verdict == "stable",
            "instability": list(stability.get("reasons") or [])}


@dataclass
class RunResults:
    run_dir: Path
    rows: list[ResultRow]
    reports: list[dict[str, Any]]
    statuses: dict[str, str]  # model -> status in the store (covers models without a report)
    errors: dict[str, dict[str, Any]]  # model -> the store's last error, for models without a report
    config: dict[str, Any] | None

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


def load_run(run_dir: str | Path) -> RunResults:
    """A run's reports as rows, plus the store's view when the run has a state file.

    A folder with only reports/ (copied off a machine, say) is a run too: the statuses then come
    from the reports alone.
    """
    from nnlite_tui.core.run_dir import STATE_FILE

    path = Path(run_dir)
    has_state = (path / STATE_FILE).exists()
    if not (path / "reports").is_dir() and not has_state:
        raise ValueError(f"{path}: no reports/ folder and no {STATE_FILE}; not a run directory")
    reports = load_reports(path)
    files = sorted(p.name for p in (path / "reports").glob("*.json"))
    for report, name in zip(reports, files):
        if not isinstance(report, dict) or "model_name" not in report:
            raise ValueError(f"{path / 'reports' / name}: not an nnlite report (no model_name)")
    rows = [row_from_report(r, f) for r, f in zip(reports, files)]
    _label_twins(rows)
    statuses = {row.model: row.status for row in rows}
    errors: dict[str, dict[str, Any]] = {}
    config = None
    if has_state:
        from nnlite_tui.core.store.files import StoreError, load_snapshot

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
    return RunResults(run_dir=path, rows=rows, reports=reports, statuses=statuses, errors=errors, config=config)
