"""Typed data between the stages, and the outcomes a step hands back to the Runner.

A step (convert_step, bench_step) never touches the run's store, queues or control: it returns
one of the outcomes below, and the Runner (pipeline.py) applies it in one place. What the
conversion hands the benchmarks travels as a ConversionResult inside a BenchJob.

One error shape from the worker to the report: StageError(stage, type, message), serialised
as {"stage", "type", "message"} in the store and in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.spec import ModelSpec

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class StageError:
    stage: str
    type: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "type": self.type, "message": self.message}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> StageError | None:
        """Read the stored shape, or a converter result's (stage, error_type, error_message)."""
        if not data:
            return None
        return cls(stage=str(data.get("stage")), type=data.get("type", data.get("error_type")),
                   message=data.get("message", data.get("error_message")))

    def text(self) -> str:
        return f"{self.stage}: {self.type}: {self.message}"


@dataclass(frozen=True)
class ConversionResult:
    """A model's conversion (fresh or cached) as the converter recorded it.

    `details` is the converter's record (shapes, max abs diff, validation, sha256, timings...):
    the report's conversion block is built from it, and the store keeps it as is.
    """

    model: str
    ok: bool
    cached: bool = False
    tflite_path: str | None = None
    error: StageError | None = None
    seconds: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_converter(cls, raw: Mapping[str, Any], seconds: float = 0.0) -> ConversionResult:
        ok = bool(raw.get("ok"))
        return cls(model=str(raw.get("model")), ok=ok, cached=bool(raw.get("cached")),
                   tflite_path=raw.get("tflite_path"), error=None if ok else StageError.from_dict(raw),
                   seconds=seconds, details=MappingProxyType(dict(raw)))

    @property
    def stage(self) -> str | None:
        return None if self.error is None else self.error.stage

    def record(self) -> dict[str, Any]:
        """The serialised form kept in the store."""
        return dict(self.details)


@dataclass(frozen=True)
class BenchJob:
    """What the conversion hands a device: the model and its converted file."""

    spec: ModelSpec
    conversion: ConversionResult

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class BenchResult:
    """One benchmark on one device: the device protocol's result block and the device around it."""

    serial: str
    block: Mapping[str, Any]  # the protocol's result: valid, stats, samples, settings used, log...
    device_info: Mapping[str, Any]
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    seconds: float
    cooldown: Mapping[str, Any] | None = None

    @property
    def valid(self) -> bool:
        return bool(self.block.get("valid"))

    @property
    def stats(self) -> Mapping[str, Any]:
        return self.block.get("stats") or _EMPTY

    @property
    def median_ms(self) -> float | None:
        stats = self.stats
        return stats["median_ns"] / 1e6 if self.valid and stats.get("median_ns") is not None else None

    @property
    def error(self) -> StageError | None:
        if self.valid:
            return None
        return StageError(stage=f"benchmark:{self.block.get('error_stage')}", type=self.block.get("error_type"),
                          message=self.block.get("error_message"))

    @property
    def flags(self) -> list[str]:
        """What qualifies this measurement: the device throttled during the timed runs."""
        return ["throttled"] if (self.block.get("conditions") or {}).get("throttled") else []

    def report_block(self) -> dict[str, Any]:
        """The benchmark block of the report: the protocol's result without its raw log."""
        block = {k: v for k, v in self.block.items() if k != "log"}
        if self.cooldown is not None:
            block["cooldown"] = dict(self.cooldown)
        return block


# ----- outcomes of a step -----
@dataclass(frozen=True)
class Converted:
    result: ConversionResult


@dataclass(frozen=True)
class Benchmarked:
    """The device measured (the result may still be invalid: a model the runtime rejects)."""

    result: BenchResult


@dataclass(frozen=True)
class Retry:
    """A transient fault: try again after `after_s`. `fault` is the device fault to recover from."""

    error: StageError
    after_s: float = 0.0
    fault: Exception | None = None
    conversion: ConversionResult | None = None


@dataclass(frozen=True)
class Failed:
    """A final failure. The report names the device in `device_info` (benchmark failures)."""

    error: StageError
    conversion: ConversionResult | None = None
    fault: Exception | None = None
    device_info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Skipped:
    """Not the model's to run: filtered out by a limit, or skipped by the operator."""

    error: StageError | None = None
    conversion: ConversionResult | None = None


@dataclass(frozen=True)
class Cancelled:
    """The step was cancelled (operator skip or stop-now); the Runner knows which."""


Outcome = Union[Converted, Benchmarked, Retry, Failed, Skipped, Cancelled]


def conversion_of(outcome: Outcome) -> ConversionResult | None:
    """The conversion an outcome of the conversion step carries, if any."""
    if isinstance(outcome, Converted):
        return outcome.result
    if isinstance(outcome, (Retry, Failed, Skipped)):
        return outcome.conversion
    return None


@dataclass(frozen=True)
class ModelResult:
    """A model's overall result once every target device has one."""

    status: str
    median_ms: float | None
    error: StageError | None
    flags: list[str] = field(default_factory=list)


def combine_device_results(targets: list[str], per_device: Mapping[str, Mapping[str, Any]],
                           latest: str) -> ModelResult | None:
    """The model's result from its devices' results, or None while a target is still open.

    A shared target ("*", --distribute) is one result: the latest. Otherwise any failure fails the
    model, else any done makes it done, else it was skipped; the first median and error stand for it.
    """
    if targets == ["*"]:
        finished = [per_device[latest]]
    else:
        finished = [per_device[t] for t in targets if t in per_device and per_device[t]["status"] in TERMINAL]
        if len(finished) < len(targets):
            return None
    statuses = {f["status"] for f in finished}
    status = "failed" if "failed" in statuses else ("done" if "done" in statuses else "skipped")
    medians = [f["median_ms"] for f in finished if f.get("median_ms") is not None]
    errors = [StageError.from_dict(f["error"]) for f in finished if f.get("error")]
    flags = sorted({flag for f in finished for flag in f.get("flags") or ()})
    return ModelResult(status, medians[0] if medians else None, errors[0] if errors else None, flags)
