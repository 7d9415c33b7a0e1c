"""The report the Android app (and the device simulator) writes per launch, as a type: what each key holds,
which keys every report has, and the cross-key rules of android-app/PROTOCOL.md (a valid report has
timings, a failed one has an error and no timings, each protocol version's keys, ExecuTorch's limits).
app_schema.py generates android-app/protocol/report.schema.json from it; the blocks are in app_blocks.py.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import JsonDict

from nnlite_tui.core.runtimes import APP_RUNTIMES, app_engine

from nnlite_tui.core.results.app_blocks import (
    Absent, Capabilities, Closed, ConditionsSnapshot, EnergyBlock, MemorySnapshot, Name, NonNegInt, OpsBlock, Stats,
)

PROTOCOL_VERSION = 3
BACKENDS = ("cpu", "xnnpack", "gpu", "nnapi")
ERROR_STAGES = ("args", "load", "allocate", "invoke", "internal")
Backend = Literal["cpu", "xnnpack", "gpu", "nnapi"]
ErrorStage = Literal["args", "load", "allocate", "invoke", "internal"]
Shapes = list[list[NonNegInt]]
# The keys of a valid report's timed runs: a failed report has none of them.
TIMED = ("init_ns", "first_inference_ns", "stats", "samples_ns", "timed_seconds", "input_shapes", "input_dtypes",
         "output_shapes")
# Added by protocol 2 (section 9c/9d); an earlier report has none of them.
PROTOCOL_2 = ("timing", "native_stats", "native_samples_ns", "warmup_runs", "warmup_mean_ns", "delegation", "memory")
PROTOCOL_3 = ("runtime", "runtime_version", "capabilities")


def none_of(keys: tuple[str, ...]) -> JsonDict:
    return {"not": {"anyOf": [{"required": [k]} for k in keys]}}


def _runtime_rule(name: str) -> JsonDict:
    """What a valid report of the runtime `name` holds beside every report's keys (its app engine's rule)."""
    engine = app_engine(name)
    return {"description": engine.report_rule_why,
            "if": {"properties": {"runtime": {"const": name}, "valid": {"const": True}}, "required": ["runtime"]},
            "then": engine.report_rule}


RULES: JsonDict = {
    "if": {"properties": {"valid": {"const": True}}},
    "then": {"required": list(TIMED), "properties": {
        **{k: {"const": None} for k in ("error_stage", "error_type", "error_message")},
        "run_id": {"type": "string"}, "model_path": {"type": "string"},
        "backend_requested": {"enum": list(BACKENDS)}, "backend_used": {"enum": list(BACKENDS)},
        "threads": {"type": "integer", "minimum": 1}, "warmup": {"type": "integer", "minimum": 0},
        "runs": {"type": "integer", "minimum": 1}, "min_seconds": {"type": "number", "minimum": 0},
        "seed": {"type": "integer", "minimum": 0}, "warmup_seconds": {"type": "number"},
        "require_full_delegation": {"type": "boolean"}, "runtime": {"enum": list(APP_RUNTIMES)}}},
    "else": {"properties": {"error_stage": {"enum": list(ERROR_STAGES)},
                            "error_type": {"type": "string", "minLength": 1}, "error_message": {"type": "string"}},
             **none_of(TIMED + PROTOCOL_2 + ("conditions", "input_fill", "ops", "ops_builtin", "energy"))},
    "allOf": [
        {"if": {"properties": {"protocol_version": {"enum": [2, 3]}}},
         "then": {"required": ["warmup_seconds", "require_full_delegation"]},
         "else": none_of(("warmup_seconds", "require_full_delegation") + PROTOCOL_2 + ("conditions", "input_fill"))},
        {"if": {"properties": {"protocol_version": {"enum": [2, 3]}, "valid": {"const": True}}},
         "then": {"required": list(PROTOCOL_2)}},
        {"if": {"properties": {"protocol_version": {"const": 3}}},
         "then": {"required": list(PROTOCOL_3)}, "else": none_of(PROTOCOL_3 + ("energy",))},
        *[_runtime_rule(name) for name in APP_RUNTIMES if app_engine(name).report_rule],
    ],
}


class InputFill(Closed):
    dtype: Name
    scale: float = Field(ge=0)
    zero_point: int
    elements: int = Field(ge=0)
    mean: float
    std: float = Field(ge=0)
    min: float | None = Field(None)
    max: float | None = Field(None)
    range: Annotated[list[int], Field(min_length=2, max_length=2)] | Absent = Field(None, description=(
        "the [low, high) the host told the app for this integer input (input_ranges)"))


class Timing(Closed):
    stats_of: Literal["wall"]
    wall_clock: Literal["Interpreter.run", "Interpreter.invoke", "Module.forward", "Method.execute"]
    native_clock: Literal["Interpreter.getLastNativeInferenceDurationNanoseconds", "InterpreterWrapper.Invoke"] | None


class AppliedDelegate(Closed):
    delegate: str
    delegated_nodes: int = Field(ge=0)
    total_nodes: int | None = Field(ge=0)
    partitions: int = Field(ge=0)


class Delegation(Closed):
    source: Literal["logcat", "interpreter graph", "method metadata", "none"]
    delegate: str | None
    delegated_nodes: int | None = Field(ge=0)
    total_nodes: int | None = Field(ge=0)
    partitions: int | None = Field(ge=0)
    full: bool | None
    applied: list[AppliedDelegate]
    error: str | None
    backends: list[Name] | Absent = Field(None, description=(
        "ExecuTorch: the delegates Module.getMethodMetadata(\"forward\").backends names (no node counts: "
        "delegated_nodes, total_nodes, partitions and full are null)"))


class Memory(Closed):
    source: Literal["device", "host"]
    before_load: MemorySnapshot
    after_load: MemorySnapshot
    after_runs: MemorySnapshot


class SustainedPerformance(Closed):
    supported: bool | None
    enabled: bool


class AppConditions(Closed):
    source: Literal["device", "simulated"]
    before: ConditionsSnapshot
    after: ConditionsSnapshot | None
    throttled: bool | None
    sustained_performance: SustainedPerformance


class Device(Closed):
    manufacturer: str
    model: str
    brand: str
    device: str
    product: str
    board: str
    hardware: str
    soc_manufacturer: str | None = Field(description="Build.SOC_MANUFACTURER, null below API 31")
    soc_model: str | None = Field(description="Build.SOC_MODEL, null below API 31")
    abis: list[str] = Field(min_length=1)
    sdk_int: int = Field(ge=1)
    release: str
    build_id: str
    fingerprint: str


class AppReport(Closed):
    """One report per app launch, written by org.nnlite.bench (or the device simulator) to report_path via
    <report_path>.tmp + rename. The benchmark keys are exactly those of nnlite_tui.core.bench.benchmark_result; the
    app adds protocol_version, app_version, simulated, started_at_ms, finished_at_ms, fallback_reason, capabilities
    and device. Durations are integer nanoseconds except stats (float ns) and timed_seconds (s). See
    android-app/PROTOCOL.md."""

    model_config = ConfigDict(json_schema_extra=RULES)

    protocol_version: Literal[1, 2, 3] = Field(description=(
        "3 from the current app; the host still reads 2 and 1 (older apps), whose reports lack every key the later "
        "protocols added"))
    app_version: str = Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+([-+].*)?$")
    simulated: bool = Field(description="true only in reports written by the device simulator")
    valid: bool
    error_stage: ErrorStage | None = Field(description="null when valid")
    error_type: str | None = Field(description=(
        "exception class name (e.g. java.lang.IllegalArgumentException), or BenchmarkError / "
        "org.nnlite.bench.core.ArgsException"))
    error_message: str | None = Field(description="first non-blank line of the error")
    run_id: str | None = Field(description=(
        "echo of the run_id extra; the host checks it. null only in an args report without run_id"))
    model_path: str | None = Field(description="device path of the .tflite (LiteRT) or .pte (ExecuTorch), as sent")
    backend_requested: str | None = Field(description="as sent (may be an unknown name in an args report)")
    backend_used: Backend | None = Field(description=(
        "the backend whose interpreter produced the timings (or the last one tried, on failure)"))
    runtime: str | None = Field(None, description=(
        "protocol 3: the runtime that ran (litert, executorch); an args report echoes what was sent, null when the "
        "extra did not parse"))
    runtime_version: str | None = Field(None, min_length=1, description=(
        "protocol 3: the version of that runtime's library in this app build; null in an args report whose runtime "
        "the build lacks"))
    threads: int | None
    warmup: int | None
    warmup_seconds: float | None = Field(None, ge=0, description=(
        "the setting used: warm-up continues until both `warmup` runs and this many seconds of warm-up work (capped "
        "by max_seconds); null only in an args report"))
    runs: int | None
    min_seconds: float | None
    seed: int | None
    require_full_delegation: bool | None = Field(None, description=(
        "the setting used: fail at load when the delegate took only part of the graph; null only in an args report"))
    fallback_reason: str | None = Field(description=(
        "why backend_used differs from backend_requested (or why the delegate did not really run); null if it "
        "does not"))
    started_at_ms: int = Field(ge=0, description="epoch ms when the app received the intent")
    finished_at_ms: int = Field(ge=0, description="epoch ms when the report was built")
    capabilities: Capabilities | Absent = Field(None)
    init_ns: Annotated[int, Field(ge=0)] | Absent = Field(None, description=(
        "interpreter creation + allocate_tensors of the attempt that was benchmarked"))
    first_inference_ns: Annotated[int, Field(ge=0)] | Absent = Field(None, description="the first invoke, before warm-up")
    stats: Stats | Absent = Field(None)
    samples_ns: Annotated[list[NonNegInt], Field(min_length=1)] | Absent = Field(None, description="every timed run, in order")
    timed_seconds: Annotated[float, Field(ge=0)] | Absent = Field(None, description="sum of samples_ns in seconds")
    input_shapes: Shapes | Absent = Field(None)
    input_dtypes: list[Name] | Absent = Field(None, description="numpy dtype names: float32, int8, ...")
    input_fill: list[InputFill] | Absent = Field(None, description=(
        "per input, what the benchmark fed: the dtype, the scale and zero point it read from the tensor (0 and 0 "
        "when not quantized), the element count, the mean, standard deviation, minimum and maximum of the values "
        "fed (integers for an integer tensor), and for an integer input with a range the [low, high) it was told; "
        "the host checks a quantized input against the model's parameters (nnlite_tui/core/bench/input_check.py) "
        "and a ranged one against its conversion's range (nnlite_tui/core/bench/range_check.py). Optional: an app "
        "that does not report it is not checked."))
    output_shapes: Shapes | Absent = Field(None)
    timing: Timing | Absent = Field(None, description=(
        "which timing `stats` (hence a report's median duration) is of, and what each clock surrounds; "
        "ExecuTorch's Java API has no per-inference timer, so its native_clock is null"))
    native_stats: Stats | None = Field(None)
    native_samples_ns: list[NonNegInt] | None = Field(None)
    warmup_runs: Annotated[int, Field(ge=0)] | Absent = Field(None)
    warmup_mean_ns: Annotated[float, Field(ge=0)] | None = Field(None)
    delegation: Delegation | Absent = Field(None)
    memory: Memory | Absent = Field(None)
    conditions: AppConditions | None = Field(None)
    device: Device
    ops: OpsBlock | Absent = Field(None)
    ops_builtin: OpsBlock | Absent = Field(None)
    energy: EnergyBlock | Absent = Field(None)


__all__ = ["AppReport", "PROTOCOL_VERSION"]
