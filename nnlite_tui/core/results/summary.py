"""A unit's summary: the few figures a results view lists, small enough to hold 10,000 of in memory.

Built from a Report once (when the report is written, or when an index is rebuilt) and kept in the
run's index file (index.py), so a view of a large run never opens its reports to fill a table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple

from nnlite_tui.core.results.model import Report

# Bump when a field is added or changes meaning: index lines of another version are rebuilt.
SUMMARY_VERSION = 1
_HASH_SUFFIX = re.compile(r"[-_][0-9a-f]{16,}$")


def family_of(name: str) -> str:
    """LEMUR names a model `<family>-<md5>`: the family is the name without its hash."""
    return _HASH_SUFFIX.sub("", name) or name


def lemur_family(name: str) -> str:
    """A LEMUR family: the name without its md5 (`rag-<md5>`) or trial number (`ga-mut-327`)."""
    base = family_of(name)
    head, _, tail = base.rpartition("-")
    return head if head and tail.isdigit() else base


class UnitKey(NamedTuple):
    """What one report is of: a unit (model, runtime, precision) on one device and backend."""

    unit: str
    device: str  # the device's serial
    backend: str  # the backend asked for (the report's file name carries it)


@dataclass(frozen=True, slots=True)
class UnitSummary:
    unit: str  # the report's model_name: the unit's name, "<model>[@<runtime>][@<precision>]"
    model: str  # the model it measures (model.base_name)
    family: str
    task: str | None
    runtime: str
    runtime_version: str | None
    precision: str
    device: str  # serial: what tells two devices apart
    device_label: str  # what a person recognises: the device's model name
    backend: str  # the backend asked for (the key)
    backend_used: str | None
    valid: bool
    error_stage: str | None
    error_cause: str | None  # the conversion's cause code, when it failed there
    error_message: str | None
    median_ns: float | None  # across rounds (schema 3), else the samples' median
    mean_ns: float | None
    p90_ns: float | None
    iterations: int | None
    rounds: int | None  # a report before rounds: one round when it has figures
    interval_low_ns: float | None
    interval_high_ns: float | None
    stable: bool | None
    instability: tuple[str, ...]
    throttled: bool | None
    params: int | None
    flops: float | None
    artifact_bytes: int | None
    accuracy: str | None  # the derived precision's verdict: ok / degraded
    energy_mj: float | None  # energy per inference, when the run measured it and the figure is valid
    file: str  # the report's file name in reports/

    @property
    def key(self) -> UnitKey:
        return UnitKey(self.unit, self.device, self.backend)

    @property
    def status(self) -> str:
        return "done" if self.valid else "failed"

    @property
    def flags(self) -> tuple[str, ...]:
        """What a table marks beside the figures: throttled, unstable, degraded, fell back."""
        marks = [("throttled", bool(self.throttled)), ("unstable", self.stable is False),
                 ("degraded", self.accuracy == "degraded"),
                 ("fell back", bool(self.backend_used and self.backend_used != self.backend))]
        return tuple(name for name, on in marks if on)

    @property
    def median_ms(self) -> float | None:
        return None if self.median_ns is None else self.median_ns / 1e6

    def to_json(self) -> dict[str, object]:
        """The summary as the index file holds it (index.py)."""
        data: dict[str, object] = asdict(self)
        data["instability"] = list(self.instability)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> UnitSummary:
        """A summary from its index line (to_json wrote it, this release: index.py rebuilds other versions')."""
        values: dict[str, Any] = {f.name: data.get(f.name) for f in fields(cls)}
        values["instability"] = tuple(values["instability"] or ())
        return cls(**values)

    @classmethod
    def of(cls, report: Report, file: str) -> UnitSummary:
        bench = report.benchmark
        valid = report.valid
        stats = bench.stats if valid and bench.stats else None
        measured = [r for r in bench.rounds or [] if r.median_ns is not None]
        rounds = (len(measured) or (1 if stats else None)) if valid else None
        interval = bench.interval if valid else None
        stability = bench.stability if valid else None
        error = report.error
        conversion = report.conversion
        settings = bench.settings or {}
        conditions = report.conditions or bench.conditions
        energy = bench.energy
        # "<unit>__<serial>__<backend>.json": what a report that does not say its device or backend is of
        parts = file[: -len(".json")].split("__") if file.endswith(".json") else []
        named_serial, named_backend = (parts[1], parts[2]) if len(parts) == 3 else ("?", "?")
        return cls(
            unit=report.model_name, model=report.base_model, family=family_of(report.base_model),
            task=report.model.task, runtime=report.runtime_name, runtime_version=report.runtime_version,
            precision=report.precision, device=report.device.serial or report.device_type or named_serial,
            device_label=str(report.device.model or report.device_type or report.device.serial or named_serial),
            backend=str(settings.get("backend") or bench.backend_requested or bench.backend_used or named_backend),
            backend_used=bench.backend, valid=valid,
            error_stage=None if valid else (error.stage if error else conversion.stage if conversion.ok is False
                                            else None),
            error_cause=None if valid or conversion.ok is not False else conversion.cause,
            error_message=None if valid else ((error.message if error else None) or report.error_message),
            median_ns=bench.headline_median_ns if valid else None,
            mean_ns=stats.mean_ns if stats else None, p90_ns=stats.p90_ns if stats else None,
            iterations=stats.count if stats else None, rounds=rounds,
            interval_low_ns=interval.low_ns if interval else None,
            interval_high_ns=interval.high_ns if interval else None,
            stable=None if not stability or stability.verdict is None else stability.verdict == "stable",
            instability=tuple(stability.reasons) if stability else (),
            throttled=conditions.throttled if conditions else None,
            params=report.params, flops=report.model.flops, artifact_bytes=conversion.artifact_bytes,
            accuracy=report.accuracy.verdict if report.accuracy else None,
            energy_mj=energy.energy_per_inference_mj if valid and energy and energy.valid else None, file=file)
