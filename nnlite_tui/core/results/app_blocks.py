"""The blocks of the report the Android app writes (android-app/PROTOCOL.md), as types: the app-facing
schema (app_schema.py) is generated from these and app_report.py, so the model and the app cannot drift.

Closed blocks (`extra="forbid"`) are the ones the app's schema closes; the per-op block and its rows
stay open. A field that the app may leave out but never writes as null has a `None` default that is
`Absent` (None in Python, no null in the schema).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonDict, SkipJsonSchema

from nnlite_tui.core.runtimes import AppRuntime

NonNegInt = Annotated[int, Field(ge=0)]
NonNegNum = Annotated[float, Field(ge=0)]
Name = Annotated[str, Field(min_length=1)]
# A key the app may leave out but never writes as null: None in Python, absent from the schema's types.
Absent = SkipJsonSchema[None]
UNIQUE: JsonDict = {"uniqueItems": True}
# Energy reasons that leave no power figure at all (noisy_idle still has them).
NO_POWER_REASONS = ("counter_read_failed", "charging", "charging_unknown", "no_counter", "too_few_samples",
                    "counter_constant", "no_voltage", "sign_undetermined")
EnergyReason = Literal["counter_read_failed", "charging", "charging_unknown", "no_counter", "too_few_samples",
                       "counter_constant", "no_voltage", "sign_undetermined", "noisy_idle"]


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Stats(Closed):
    count: int = Field(ge=1)
    mean_ns: float = Field(ge=0)
    median_ns: float = Field(ge=0)
    p90_ns: float = Field(ge=0)
    p99_ns: float = Field(ge=0)
    std_ns: float = Field(ge=0)
    min_ns: float = Field(ge=0)
    max_ns: float = Field(ge=0)


class MemorySnapshot(Closed):
    vm_rss_kb: int | None = Field(ge=0)
    vm_hwm_kb: int | None = Field(ge=0)
    native_heap_size_kb: int | None = Field(ge=0)
    native_heap_allocated_kb: int | None = Field(ge=0)


class ConditionsSnapshot(Closed):
    at_ms: int
    thermal_status: int | None = Field(ge=0, le=6)
    thermal_status_name: Literal["none", "light", "moderate", "severe", "critical", "emergency", "shutdown"] | None
    thermal_headroom: float | None = Field(ge=0)
    battery_temperature_c: float | None
    screen_interactive: bool | None
    foreground: bool | None
    power_save: bool | None


class OpRow(Open):
    index: int = Field(ge=0)
    type: Name
    avg_us: float | None = Field(ge=0)
    median_us: float | None = Field(ge=0)
    min_us: float | None = Field(ge=0)
    share: float | None = Field(ge=0)
    timing: Literal["measured", "below_resolution", "fused"] | Absent = Field(None)
    resolved_runs: int | None = Field(None, ge=0)
    events: Annotated[int, Field(ge=0)] | Absent = Field(None)
    upper_us: Annotated[float, Field(ge=0)] | Absent = Field(None)
    estimated_us: Annotated[float, Field(ge=0)] | Absent = Field(None)
    estimate: Name | Absent = Field(None)


class OpsBlock(Open):
    """Per-op profile after the timed runs (PROTOCOL.md section 9e), as nnlite_tui/core/runtimes/litert/ops_block.py
    writes it; an error instead of ops when profiling could not run. An op's avg/median/min are null unless it was
    measured (timing), and the host checks every block (nnlite_tui/core/ops/block_check.py)."""

    model_config = ConfigDict(json_schema_extra={
        "if": {"not": {"required": ["error"]}},
        "then": {"required": ["total_us", "ops_sum_us", "unattributed_us", "runs", "runs_kept"],
                 "properties": {"ops": {"minItems": 1}}}})

    schema_version: int = Field(ge=1)
    kernel_mode: Literal["xnnpack", "builtin"]
    error: str | Absent = Field(None)
    total_us: float | None = Field(None)
    ops_sum_us: float | Absent = Field(None)
    unattributed_us: float | None = Field(None)
    invoke_us: float | Absent = Field(None)
    profiler_us: float | None = Field(None)
    runs: Annotated[int, Field(ge=1)] | Absent = Field(None)
    runs_kept: Annotated[int, Field(ge=0)] | Absent = Field(None)
    ops: list[OpRow]
    valid: bool | Absent = Field(None)
    invalid_reasons: list[str] | Absent = Field(None)
    total_note: str | Absent = Field(None)
    rounding_bound_us: Annotated[float, Field(ge=0)] | Absent = Field(None)
    below_resolution_upper_us: Annotated[float, Field(ge=0)] | Absent = Field(None)
    resolution_us: Annotated[float, Field(gt=0)] | Absent = Field(None)


class Capabilities(Closed):
    """protocol 3, in every report (args and internal failures too): what this app build can do, so the host
    refuses a unit the installed app cannot run"""

    runtimes: dict[AppRuntime, Name] = Field(
        min_length=1, description="runtime name -> version of its library in this build")
    extras: list[Name] = Field(description="every intent extra this app accepts, sorted", json_schema_extra=UNIQUE)


class BatteryState(Closed):
    """the sticky ACTION_BATTERY_CHANGED broadcast; null where an extra is absent"""

    at_ms: int
    level_percent: float | None = Field(ge=0, le=100)
    temperature_c: float | None
    voltage_mv: int | None
    plugged: int | None = Field(ge=0, description=(
        "EXTRA_PLUGGED: 0 on battery, else BATTERY_PLUGGED_* bits (1 AC, 2 USB, 4 wireless, 8 dock)"))
    status: int | None = Field(description=(
        "EXTRA_STATUS: BATTERY_STATUS_* (1 unknown, 2 charging, 3 discharging, 4 not charging, 5 full)"))
    charging: bool | None = Field(description="plugged != 0 or status == 2; null when neither was read")


class EnergySamples(Closed):
    t_ns: list[NonNegInt]
    current_ua: list[int | None]
    charge_uah: list[int | None]
    voltage_uv: list[int | None]


class EnergyWindow(Closed):
    seconds: float = Field(ge=0)
    readings: int = Field(ge=0)
    rate_hz: float | None = Field(ge=0)
    current_updates: int = Field(ge=0)
    charge_updates: int = Field(ge=0)
    mean_current_ua: float | None = Field(
        description="time-weighted mean of CURRENT_NOW as read, with the device's sign")
    charge_rate_ua: float | None = Field(
        description="CHARGE_COUNTER's change per hour between its first and last update (negative: discharge)")
    mean_voltage_uv: float | None
    voltage_from: Literal["readings", "battery broadcast"] | None
    inferences: Annotated[int, Field(ge=1)] | Absent = Field(None, description="load window only")
    samples: EnergySamples = Field(description=(
        "every reading, in order; t_ns from the window's first reading (exact: every formula of section 9f uses "
        "only differences of times, so the block's figures can be recomputed from it bit for bit); null where a "
        "counter was not read"))


class CounterSources(Closed):
    current_now: str | None
    charge_counter: str | None
    voltage: str | None


class EnergyBlock(Closed):
    """protocol 3, section 9f: present in a valid report when energy was asked for; energy per inference only
    when valid"""

    model_config = ConfigDict(json_schema_extra={"allOf": [
        {"if": {"properties": {"valid": {"const": True}}},
         "then": {"properties": {
             "reason": {"const": None}, "reason_codes": {"maxItems": 0},
             "counter": {"enum": ["current_now", "charge_counter"]}, "charging": {"const": False},
             **{k: {"type": "number"} for k in ("power_idle_mw", "power_load_mw", "idle_noise_mw", "power_delta_mw",
                                                "energy_per_inference_mj")}}},
         "else": {"properties": {"reason": {"type": "string", "minLength": 1}, "reason_codes": {"minItems": 1},
                                 "power_delta_mw": {"const": None}, "energy_per_inference_mj": {"const": None}}}},
        {"if": {"properties": {"reason_codes": {"contains": {"enum": list(NO_POWER_REASONS)}}}},
         "then": {"properties": {k: {"const": None} for k in ("power_idle_mw", "power_load_mw", "idle_noise_mw")}}},
        {"if": {"properties": {"charging": {"not": {"const": False}}}},
         "then": {"properties": {"sign_convention": {"const": None}}}},
    ]})

    valid: bool
    reason: str | None
    reason_codes: list[EnergyReason] = Field(json_schema_extra=UNIQUE)
    source: Literal["device", "simulated"]
    counter_sources: CounterSources
    counter: Literal["current_now", "charge_counter"] | None
    sign_convention: Literal["discharge_negative", "discharge_positive"] | None
    window_seconds: float = Field(ge=1, le=600)
    settle_seconds: float = Field(ge=0)
    sample_period_ms: float = Field(gt=0)
    power_idle_mw: float | None
    power_load_mw: float | None
    idle_noise_mw: float | None = Field(ge=0)
    power_delta_mw: float | None = Field(gt=0)
    energy_per_inference_mj: float | None = Field(gt=0)
    charging: bool | None
    battery_before: BatteryState
    battery_after: BatteryState
    idle: EnergyWindow
    load: EnergyWindow = Field(json_schema_extra={"required": ["inferences"]})


# The blocks the app's schema names in $defs (each used in more than one place or checked by name).
SHARED_BLOCKS: tuple[type[BaseModel], ...] = (Stats, MemorySnapshot, ConditionsSnapshot, OpsBlock, Capabilities,
                                              BatteryState, EnergyWindow, EnergyBlock)
