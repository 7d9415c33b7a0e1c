"""Typed data between the stages, and the outcomes a step hands back to the Runner.

A step (convert_step, bench_step) never touches the run's store, queues or control: it returns
one of the outcomes below, and the Runner (pipeline.py) applies it in one place. What the
conversion hands the benchmarks travels as a ConversionResult inside a BenchJob.

One error shape from the worker to the report: StageError(stage, type, message), serialised
as {"stage", "type", "message"} in the store and in the report.
"""

from __future__ import annotations

import re

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypedDict, Union

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME
from nnlite_tui.core.spec import ModelSpec

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class StageErrorDict(TypedDict):
    """A StageError as the store and the report keep it."""
    stage: str
    type: str | None
    message: str | None


@dataclass(frozen=True)
class StageError:
    stage: str
    type: str | None = None
    message: str | None = None

    def to_dict(self) -> StageErrorDict:
        return {"stage": self.stage, "type": self.type, "message": self.message}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> StageError | None:
        """Read the stored shape, or a converter result's (stage, error_type, error_message)."""
        if not data:
            return None
        return cls(stage=str(data.get("stage")), type=data.get("type", data.get("error_type")),
                   message=data.get("message", data.get("error_message")))

    def text(self) -> str:
        return error_text(self.stage, self.type, self.message)


def without_module_path(line: str) -> str:
    """An error line as error_text writes it, also when an earlier release wrote the type qualified
    (an events.jsonl it left: "export: nnlite_tui.core...SamplesAtInference: ...")."""
    return _QUALIFIED.sub(r"\1\2", line, count=1)


_QUALIFIED = re.compile(r"^([^:]+: )(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*: )")


def error_text(stage: object, error_type: object, message: object) -> str:
    """"stage: Type: message", the type without its module path (a worker's own exceptions are stored
    qualified, and "export: nnlite_tui.core.convert.worker.errors.SamplesAtInference" leaves the
    console's error column no room for the message)."""
    return f"{stage}: {str(error_type).rsplit('.', 1)[-1]}: {message}"


# Conversion-record keys of releases before runtimes existed (LiteRT only), and their names now:
# cache entries, stores and reports of those releases are read through conversion_record().
_LEGACY_CONVERSION_KEYS = {"tflite_path": "artifact_path", "tflite_bytes": "artifact_bytes",
                           "tflite_sha256": "artifact_sha256", "tflite_input_shape": "artifact_input_shape",
                           "tflite_input_dtype": "artifact_input_dtype"}
_LEGACY_QUANTIZATION_KEYS = {"fp32_tflite_bytes": "fp32_artifact_bytes", "fp32_tflite_sha256": "fp32_artifact_sha256"}


def conversion_record(raw: Mapping[str, object]) -> dict[str, object]:
    """A conversion record (a worker result, a cache entry, a report's conversion block) with the
    key names of this release; a record of an older release gets them renamed and `runtime: litert`."""
    record = {_LEGACY_CONVERSION_KEYS.get(k, k): v for k, v in raw.items()}
    if any(k in raw for k in _LEGACY_CONVERSION_KEYS):
        record.setdefault("runtime", DEFAULT_RUNTIME)
    quantization = record.get("quantization")
    if isinstance(quantization, Mapping):
        record["quantization"] = {_LEGACY_QUANTIZATION_KEYS.get(k, k): v for k, v in quantization.items()}
    return record


@dataclass(frozen=True)
class Artifact:
    """A converted model as a device takes it: the file, and the runtime that runs it."""

    path: str
    runtime: str = DEFAULT_RUNTIME
    # Per input, in the artifact's order: [low, high) of an integer input's valid values (token ids
    # inside their embedding table), None for any other; () when the conversion recorded none.
    input_ranges: tuple[tuple[int, int] | None, ...] = ()

    @property
    def suffix(self) -> str:
        return Path(self.path).suffix


def input_ranges(signature: Any) -> tuple[tuple[int, int] | None, ...]:
    """The ranges of a conversion's `input_signature` (entries with `range: [low, high]`)."""
    out: list[tuple[int, int] | None] = []
    for entry in signature or ():
        bounds = entry.get("range") if isinstance(entry, Mapping) else None
        out.append((int(bounds[0]), int(bounds[1])) if bounds else None)
    return tuple(out) if any(r is not None for r in out) else ()


@dataclass(frozen=True)
class ConversionResult:
    """A model's conversion (fresh or cached) as the converter recorded it.

    `details` is the converter's record (shapes, max abs diff, validation, sha256, timings...):
    the report's conversion block is built from it, and the store keeps it as is.
    """

    model: str
    ok: bool
    cached: bool = False
    artifact_path: str | None = None
    error: StageError | None = None
    seconds: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_converter(cls, raw: Mapping[str, Any], seconds: float = 0.0) -> ConversionResult:
        record = conversion_record(raw)
        ok, path = bool(record.get("ok")), record.get("artifact_path")
        return cls(model=str(record.get("model")), ok=ok, cached=bool(record.get("cached")),
                   artifact_path=None if path is None else str(path),
                   error=None if ok else StageError.from_dict(record), seconds=seconds,
                   details=MappingProxyType(record))

    @property
    def stage(self) -> str | None:
        return None if self.error is None else self.error.stage

    @property
    def runtime(self) -> str:
        return str(self.details.get("runtime") or DEFAULT_RUNTIME)

    @property
    def artifact(self) -> Artifact | None:
        if not self.artifact_path:
            return None
        return Artifact(self.artifact_path, self.runtime, input_ranges(self.details.get("input_signature")))

    def record(self) -> dict[str, object]:
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
    def median_ns(self) -> float | None:
        """The headline median: across rounds when the block has rounds, else of the timed runs."""
        if not self.valid:
            return None
        value = self.block.get("median_ns", self.stats.get("median_ns"))
        return None if value is None else float(value)

    @property
    def median_ms(self) -> float | None:
        median = self.median_ns
        return None if median is None else median / 1e6

    def to_dict(self) -> dict[str, object]:
        return {"serial": self.serial, "block": dict(self.block), "device_info": dict(self.device_info),
                "before": None if self.before is None else dict(self.before),
                "after": None if self.after is None else dict(self.after), "seconds": self.seconds,
                "cooldown": None if self.cooldown is None else dict(self.cooldown)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BenchResult:
        return cls(serial=str(data["serial"]), block=data["block"], device_info=data.get("device_info") or {},
                   before=data.get("before"), after=data.get("after"), seconds=float(data.get("seconds") or 0.0),
                   cooldown=data.get("cooldown"))

    @property
    def error(self) -> StageError | None:
        if self.valid:
            return None
        return StageError(stage=f"benchmark:{self.block.get('error_stage')}", type=self.block.get("error_type"),
                          message=self.block.get("error_message"))

    @property
    def flags(self) -> list[str]:
        """What qualifies this measurement: the device throttled while timing; the rounds disagreed."""
        flags = ["throttled"] if (self.block.get("conditions") or {}).get("throttled") else []
        if (self.block.get("stability") or {}).get("verdict") == "unstable":
            flags.append("unstable")
        return flags

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
