"""The benchmark protocol's result block as types: what bench/protocol.py writes, key for key as the
Android app (android-app/PROTOCOL.md) and the simulated app write it.

TypedDicts, not dataclasses: the block is JSON, written and read by key on three sides (Python, the
app's Kotlin core, the simulator), and the report reads it into results.model.Benchmark. Blocks the
protocol carries from elsewhere (the per-op profile of core/ops, the energy block) are typed where
they are made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

class InputDetail(TypedDict):
    """One input of a loaded model, as LiteRT's interpreter describes it (its other keys ride along)."""

    index: int
    shape: list[int]
    dtype: type  # a numpy scalar type (numpy.float32)
    quantization: tuple[float, int] | None  # (scale, zero_point); scale 0: not quantized


class SessionTiming(TypedDict):
    """What the wall and the native clock of a session measure (the native one: None when it has none)."""

    wall_clock: str
    native_clock: str | None


class ResultTiming(SessionTiming):
    stats_of: str  # which clock `stats` is of ("wall")


class _DelegationCommon(TypedDict):
    source: str  # where it was read ("interpreter graph", "method metadata")
    delegate: str | None
    delegated_nodes: int | None
    total_nodes: int | None
    partitions: int | None
    full: bool | None
    applied: list[str]
    error: str | None


class Delegation(_DelegationCommon, total=False):
    """Which delegate took how much of the graph (PROTOCOL.md `delegation`); None where unknown."""

    backends: list[str]  # the delegates a program names (ExecuTorch)


class FillRecord(TypedDict, total=False):
    """How one input was filled (`input_fill`): the parameters read, the values' moments and extremes."""

    dtype: str
    scale: float
    zero_point: int
    elements: int
    mean: float
    std: float
    min: float | None
    max: float | None
    range: list[int]  # [low, high) an integer input was told to stay inside


class MemoryFigures(TypedDict):
    """The benchmark process's memory (kB) at one moment (bench/memory.py); None where unavailable."""

    vm_rss_kb: int | None
    vm_hwm_kb: int | None
    native_heap_size_kb: int | None
    native_heap_allocated_kb: int | None


class HostMemory(TypedDict):
    source: str  # "host"
    before_load: MemoryFigures
    after_load: MemoryFigures
    after_runs: MemoryFigures


class Stats(TypedDict):
    """Statistics of timed samples (bench/stats.py, keyed as its STAT_KEYS)."""

    count: int
    mean_ns: float
    median_ns: float
    p90_ns: float
    p99_ns: float
    std_ns: float
    min_ns: float
    max_ns: float


class Measured(TypedDict):
    """What the timed loop measured on one loaded model (protocol.run_protocol)."""

    first_inference_ns: int
    stats: Stats
    samples_ns: list[int]
    timed_seconds: float
    input_shapes: list[list[int]]
    input_dtypes: list[str]
    input_fill: list[FillRecord]
    output_shapes: list[list[int]]
    timing: ResultTiming
    native_stats: Stats | None
    native_samples_ns: list[int] | None
    warmup_runs: int
    warmup_mean_ns: float | None
    delegation: Delegation


class AfterTimed(TypedDict, total=False):
    """Blocks measured on the still-loaded model after the timed runs (the energy windows)."""

    # A battery's (bench/energy_math.EnergyBlock, the simulated app) or the host's RAPL counters'
    # (devices/host_energy.py): two shapes, read by key into results.model.EnergyBlock.
    energy: Mapping[str, object]


class ProfiledBlocks(TypedDict, total=False):
    """The profiled pass's per-op blocks (Runtime.profile): `ops`, and `ops_builtin` beside the XNNPACK one.
    Each is core/ops' block (JSON, its rows and checks are core/ops' own: the report reads it into
    results.model.OpsBlock)."""

    ops: Mapping[str, object]
    ops_builtin: Mapping[str, object]


class BenchmarkBlock(TypedDict, total=False):
    """The protocol's result block for one model, valid or not (protocol.benchmark_result); the host's
    benchmark process adds its own facts (devices/host_bench.py)."""

    run_id: str
    model_path: str
    runtime: str
    runtime_version: str | None
    backend_requested: str
    backend_used: str
    fallback_reason: str | None
    threads: int
    warmup: int
    warmup_seconds: float
    runs: int
    min_seconds: float
    seed: int
    require_full_delegation: bool
    valid: bool
    error_stage: str | None
    error_type: str | None
    error_message: str | None
    init_ns: int
    first_inference_ns: int
    stats: Stats
    samples_ns: list[int]
    timed_seconds: float
    input_shapes: list[list[int]]
    input_dtypes: list[str]
    input_fill: list[FillRecord]
    output_shapes: list[list[int]]
    timing: ResultTiming
    native_stats: Stats | None
    native_samples_ns: list[int] | None
    warmup_runs: int
    warmup_mean_ns: float | None
    delegation: Delegation
    memory: HostMemory
    energy: Mapping[str, object]  # AfterTimed's
    ops: Mapping[str, object]
    ops_builtin: Mapping[str, object]
    cpu_affinity: list[int]  # the host's benchmark process: the cores it was pinned to
    huge_pages: Mapping[str, str | None]  # ...and its transparent huge pages settings
