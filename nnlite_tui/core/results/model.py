"""The report as types: one pydantic model per block, the whole report, and its schema version.

pydantic (v2) rather than msgspec or plain dataclasses: it is already in the environment (Ray needs
it), it validates a file into these types with errors that name the field, it generates the JSON
Schema that the app and the simulator are checked against (schema.py), and `extra="allow"` keeps
every key a block does not declare, so a report read and written again loses nothing (the blocks
name what the views read; a runtime's own keys ride along).

The LEMUR/NN-Lite keys stay at the top level, spelt as LEMUR imports them (LEMUR_KEYS). A report
of any earlier schema is upgraded to this one in one place, upgrade.py, before it becomes a Report.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonDict

from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

SCHEMA = "nnlite.report"
# 2: optional blocks `conditions` (thermal/power around the timed runs, protocol 2 apps) and
# `benchmark.ops` (per-op profile), `conversion.phases` (wall/CPU seconds per conversion phase,
# core/convert/phases.py); every version-1 key keeps its meaning.
# 3: `benchmark.rounds` (each round's median, start, seconds, conditions, nearest reference figure),
# `benchmark.median_ns` (the median across rounds, also LEMUR's `duration`), `benchmark.interval` (the
# between-round interval, bench/rounds.py), `benchmark.stability` (stable/unstable with reasons);
# `benchmark.stats` pools the rounds' samples; top-level `runtime` and `runtime_version`.
# 4: `model.flops` (PyTorch's multiply-accumulate FLOPs), `conversion.flops` (the artifact's),
# `conversion.compute_check` (both, their ratio and verdict), `conversion.weights` (re-drawn tensors).
SCHEMA_VERSION = 4
LEMUR_KEYS = (
    "model_name", "device_type", "os_version", "valid", "emulator", "error_message", "iterations", "duration",
    "unit", "cpu_duration", "cpu_min_duration", "cpu_max_duration", "cpu_std_dev", "total_ram_kb", "free_ram_kb",
    "available_ram_kb", "cached_kb", "in_dim_0", "in_dim_1", "in_dim_2", "in_dim_3", "device_analytics",
)
JSON = dict[str, Any]  # a block this model leaves open (a runtime's own details, the host's facts)
Shape = list[int | None]  # None: a dimension the artifact leaves dynamic
# A figure as measured: an int stays an int and a float a float (pydantic's smart union), so a report
# read and written again is the same text.
Num = int | float


class Block(BaseModel):
    """A report block: the keys the views read are declared, any other key is kept as it came."""

    model_config = ConfigDict(extra="allow", protected_namespaces=(), populate_by_name=True)

    def extra(self, key: str, default: Any = None) -> Any:
        """A key this block does not declare (a runtime's or a measurement's own)."""
        return (self.model_extra or {}).get(key, default)


class Stats(Block):
    count: int | None = None
    mean_ns: Num | None = None
    median_ns: Num | None = None
    p90_ns: Num | None = None
    p99_ns: Num | None = None
    std_ns: Num | None = None
    min_ns: Num | None = None
    max_ns: Num | None = None


class Interval(Block):
    """The between-round interval of the median (schema 3)."""

    low_ns: Num | None = None
    high_ns: Num | None = None
    confidence: Num | None = None
    method: str | None = None


class Stability(Block):
    rounds: int | None = None
    spread: Num | None = None
    verdict: str | None = None  # "stable" or "unstable"
    reasons: list[str] = Field(default_factory=list)


class Conditions(Block):
    """Thermal and power state around the timed runs (protocol 2 apps, the host)."""

    throttled: bool | None = None
    source: str | None = None


class Round(Block):
    """One round's figures (schema 3): a fresh benchmark process, its median and its state."""

    index: int | None = None  # 1-based
    started_at: Num | None = None
    seconds: Num | None = None
    median_ns: Num | None = None  # None: the round failed
    stats: Stats | None = None
    timed_seconds: Num | None = None
    conditions: Conditions | None = None
    reference: JSON | None = None  # the device's nearest reference figure {at, median_ns, age_s}
    tick_ns: Num | None = None
    init_ns: Num | None = None
    first_inference_ns: Num | None = None
    warmup_runs: int | None = None
    warmup_mean_ns: Num | None = None


class OpsBlock(Block):
    """A per-op profile; its rows and their checks belong to core/ops (block.py, block_versions.py)."""

    schema_version: int | None = None
    kernel_mode: str | None = None
    error: str | None = None
    flops: Num | None = None
    ops: list[JSON] = Field(default_factory=list)


class EnergyBlock(Block):
    """Energy per inference (android-app/PROTOCOL.md 9f, core/devices/host_energy.py)."""

    valid: bool | None = None
    energy_per_inference_mj: Num | None = None
    power_load_mw: Num | None = None
    power_idle_mw: Num | None = None
    power_delta_mw: Num | None = None
    source: str | None = None
    counter: str | None = None
    reason: str | None = None
    window_seconds: Num | None = None


# A measurement a unit takes once, in its first round, beside the timed runs (the profiled pass's
# blocks, the energy windows: each tens of seconds, so three rounds would triple them and keep one).
# Declared on the field; the round combination (bench/rounds.py) keeps the first round's.
ONCE_PER_UNIT: JsonDict = {"measured": "once per unit, in its first round"}


class Benchmark(Block):
    """The benchmark: the device's result (bench/protocol.py, the app, the simulator) and the rounds."""

    backend_requested: str | None = None
    backend_used: str | None = None
    runtime_version: str | None = None
    valid: bool | None = None
    error_stage: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    init_ns: Num | None = None
    first_inference_ns: Num | None = None
    stats: Stats | None = None
    samples_ns: list[Num] | None = None
    input_shapes: list[Shape] | None = None
    output_shapes: list[Shape] | None = None
    conditions: Conditions | None = None
    median_ns: Num | None = None
    interval: Interval | None = None
    stability: Stability | None = None
    rounds: list[Round] | None = None
    ops: OpsBlock | None = Field(default=None, json_schema_extra=ONCE_PER_UNIT)
    ops_builtin: OpsBlock | None = Field(default=None, json_schema_extra=ONCE_PER_UNIT)
    energy: EnergyBlock | None = Field(default=None, json_schema_extra=ONCE_PER_UNIT)
    settings: JSON | None = None

    @classmethod
    def measured_once(cls) -> tuple[str, ...]:
        """The keys of the measurements a unit takes once (ONCE_PER_UNIT), in declaration order."""
        return tuple(name for name, f in cls.model_fields.items() if f.json_schema_extra == ONCE_PER_UNIT)

    @property
    def backend(self) -> str | None:
        """The backend that ran, else the one asked for."""
        return self.backend_used or (self.settings or {}).get("backend") or self.backend_requested

    @property
    def headline_median_ns(self) -> float | None:
        """The median across rounds (schema 3), else the samples' median."""
        return self.median_ns if self.median_ns is not None else (self.stats.median_ns if self.stats else None)

    def ops_blocks(self) -> dict[str, OpsBlock]:
        """Every per-op profile: `ops`, `ops_builtin` and any other `ops_<kernels>` block."""
        found = {k: v for k, v in (("ops", self.ops), ("ops_builtin", self.ops_builtin)) if v is not None}
        for key, value in (self.model_extra or {}).items():
            if key.startswith("ops_") and isinstance(value, dict):
                found[key] = OpsBlock.model_validate(value)
        return found


class SamplingBlock(Block):
    """How a model that draws random numbers at inference was converted and validated
    (core/convert/worker/stochastic.py)."""

    draws: list[str] = Field(default_factory=list)  # the calls of its eager forward that drew
    artifact_draws: bool | None = None  # false: the artifact has its draws fixed at their expected value
    export: str | None = None  # "as-traced", "rand-randn" or "at-mean"
    # The artifact's outputs over repeated runs against PyTorch's (core/convert/worker/distribution.py):
    # runs, alpha, elements, sampled_elements, tolerance, mean_t_max / mean_t_limit,
    # var_ratio_min / var_ratio_max / var_ratio_limits, std_mean_pytorch, std_mean_artifact.
    distribution: JSON | None = None
    # The model with every draw at its expected value, converted and compared with PyTorch under the
    # same replacement: {max_abs_diff, tolerance}, or {unchecked: why}.
    at_mean: JSON | None = None


class ValidationBlock(Block):
    """How the artifact was checked against PyTorch (core/convert/worker/validation.py)."""

    inputs: int | None = None
    strength: str | None = None  # "strong", "weak: ...", "single-input", "accuracy", "distribution only"
    input_sensitivity: Num | None = None
    # absent or "exact": outputs compared input by input within the tolerance (`max_abs_diff`);
    # "distribution": the outputs vary from run to run, in PyTorch too, and were tested over repeated
    # runs (`sampling.distribution`), their deterministic part at the draws' mean (`sampling.at_mean`)
    method: str | None = None
    sampling: SamplingBlock | None = None


class Conversion(Block):
    ok: bool | None = None
    stage: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    cause: str | None = None
    cached: bool | None = None
    converter: str | None = None
    converter_version: str | None = None
    layout: str | None = None
    input_shape: Shape | None = None
    output_shapes: list[Shape] | None = None
    max_abs_diff: Num | None = None  # a model whose outputs vary: its deterministic part's (validation.method)
    validation: ValidationBlock | None = None
    artifact_sha256: str | None = None
    artifact_bytes: int | None = None
    params: int | None = None
    seconds: Num | None = None
    precision: str | None = None
    runtime: str | None = None
    flops: Num | None = None


class ModelBlock(Block):
    """The model a unit measures: where it came from, its shapes and counts, its precision and runtime."""

    name: str | None = None
    kind: str | None = None
    source: str | None = None
    sha256: str | None = None
    in_shape: Shape | None = None
    out_shape: Shape | None = None
    prm: JSON | None = None
    task: str | None = None
    dataset: str | None = None
    params: int | None = None
    flops: Num | None = None
    weights: str | None = None
    precision: str | None = None
    runtime: str | None = None
    base_name: str | None = None


class Accuracy(Block):
    """A derived precision's cost against PyTorch fp32 (core/convert/worker/accuracy.py)."""

    verdict: str | None = None
    top1_agreement: Num | None = None
    max_abs_err_rel: Num | None = None
    mean_abs_err_rel: Num | None = None
    cosine: Num | None = None


class DeviceBlock(Block):
    serial: str | None = None
    kind: str | None = None
    model: str | None = None
    manufacturer: str | None = None
    os_version: str | None = None
    abi: str | None = None
    soc: str | None = None
    emulator: bool | None = None


class DeviceAnalytics(Block):
    """LEMUR's `device_analytics`: the device's state when the benchmark started."""

    timestamp: Num | None = None
    memory_info: JSON | None = None
    cpu_info: JSON | None = None
    thermal_before_c: JSON | None = None
    thermal_after_c: JSON | None = None
    battery: JSON | None = None


class ErrorBlock(Block):
    stage: str | None = None
    type: str | None = None
    message: str | None = None


class Report(Block):
    """One unit on one device and backend. The first keys are LEMUR's (durations in ns)."""

    model_name: str
    device_type: str | None = None
    os_version: str | None = None
    valid: bool = False
    emulator: bool | None = None
    error_message: str | None = None
    iterations: int | None = None
    duration: int | None = None
    unit: str | None = "ns"
    cpu_duration: int | None = None
    cpu_min_duration: int | None = None
    cpu_max_duration: int | None = None
    cpu_std_dev: int | None = None
    total_ram_kb: int | None = None
    free_ram_kb: int | None = None
    available_ram_kb: int | None = None
    cached_kb: int | None = None
    in_dim_0: int | None = None
    in_dim_1: int | None = None
    in_dim_2: int | None = None
    in_dim_3: int | None = None
    device_analytics: DeviceAnalytics | None = None
    # Beside LEMUR's keys: this report's own.
    runtime: str | None = None
    runtime_version: str | None = None
    schema_name: str = Field(default=SCHEMA, alias="schema")
    schema_version: int = SCHEMA_VERSION
    run_id: str | None = None
    created_at: Num | None = None
    attempts: int | None = None
    error: ErrorBlock | None = None
    model: ModelBlock = Field(default_factory=ModelBlock)
    accuracy: Accuracy | None = None
    conversion: Conversion = Field(default_factory=Conversion)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    device: DeviceBlock = Field(default_factory=DeviceBlock)
    conditions: Conditions | None = None
    state_before: JSON | None = None
    state_after: JSON | None = None
    isolation: JSON | None = None
    host: JSON | None = None
    tool: JSON | None = None
    # Set by upgrade.py on a report an earlier release wrote; never written to a file.
    upgraded_from: int | None = Field(default=None, exclude=True)

    def to_json(self) -> JSON:
        """The report as its file holds it: the keys it was given, in the contract's spelling."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    @property
    def precision(self) -> str:
        return self.model.precision or "fp32"

    @property
    def runtime_name(self) -> str:
        """The unit's runtime (upgrade.py fills it in for reports before runtimes existed)."""
        return self.runtime or self.model.runtime or DEFAULT_RUNTIME

    @property
    def base_model(self) -> str:
        """The model the unit measures, whatever its runtime and precision."""
        return self.model.base_name or self.model_name

    @property
    def serial(self) -> str:
        return self.device.serial or self.device_type or "?"

    @property
    def params(self) -> int | None:
        return self.model.params if self.model.params else self.conversion.params

    @property
    def output_shapes(self) -> list[Shape] | Shape | None:
        return self.conversion.output_shapes or self.benchmark.output_shapes or self.model.out_shape
