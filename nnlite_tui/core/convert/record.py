"""The conversion record: what a conversion job's result holds, from the worker to the cache and the report.

A record is JSON data (sent over the wire, stored as a cache entry's meta.json, kept in the run's
store): TypedDicts keep its keys exactly as they are written and read, and say what each holds. Every
key is optional (a failure carries few, a cached success many); which are set by whom is said in
convert/messages.py (WorkerResult checks a worker's, RUNNER_KEYS are the runner's own). The records
nested in it that no code here reads by key (a runtime's delegation, the weights policy's tensors...)
stay open JSON objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypedDict, cast

from nnlite_tui.core.convert.compute_check import ComputeCheckRecord
from nnlite_tui.core.spec import SpecDict

Phases = dict[str, dict[str, float]]  # {phase: {"s": wall, "cpu_s": cpu}} (phases.py)


# The input size a conversion was tried at first, and why it was retried at another (worker/job.py)
SizeRetry = TypedDict("SizeRetry", {"from": list[int], "to": list[int], "reason": str})


class MeasuredGraph(TypedDict):
    """What of the model an artifact is, when not the whole of it (worker/detection_cut.py record())."""
    part: str
    kind: str | None  # detection_cut.structure()
    modules: list[str]
    outputs: str
    excluded: list[str]
    postprocessing: str
    whole_model_error: str
    validated_against: str


class CalibrationSettings(TypedDict, total=False):
    """How int8 is calibrated (derive.py calibration_settings): a count of samples, or a directory's files."""
    samples: int | None
    dir: str | None
    files: list[list[str]]  # [name, sha256] per file


class ConversionJob(TypedDict, total=False):
    """A job the runner sends a conversion worker (converter.py, derive.py): convert a model, derive a
    precision from its fp32 artifact (`derive`), or check an artifact in a clean process (`check`)."""
    spec: SpecDict
    runtime: str | None
    out_path: str
    log_path: str | None
    threads: int
    # a conversion's
    nhwc: bool
    max_params: int | None
    weights: str | None
    strict_weights: bool
    # a derivation's
    derive: bool
    fp32_path: str
    layout: str | None
    calibration: CalibrationSettings | None
    measured_graph: MeasuredGraph | None
    # the artifact check's
    check: str


class AtMean(TypedDict, total=False):
    """The model with its draws at their expected value, compared with PyTorch's under the same
    replacement: {max_abs_diff, tolerance}, or {unchecked: why}."""
    max_abs_diff: float | None
    tolerance: float
    unchecked: str


class SamplingRecord(TypedDict, total=False):
    """How a model that draws at inference was converted and validated (worker/stochastic.py)."""
    draws: list[str]
    artifact_draws: bool
    export: str
    distribution: dict[str, object]  # worker/distribution.py compare()'s figures
    at_mean: AtMean


class ValidationRecord(TypedDict, total=False):
    """How much the artifact's comparison with PyTorch could tell (worker/validation.py strength())."""
    inputs: int
    strength: str
    input_sensitivity: float | None
    method: str  # "exact" or "distribution"
    sampling: SamplingRecord
    rechecked: str  # set by the runner that checked the artifact again


class OutputsCompared(TypedDict):
    """The artifact's outputs compared with PyTorch's (worker/validation.py check_outputs())."""
    max_abs_diff: float | None
    validation: ValidationRecord


class OutputsCheckRecord(TypedDict, total=False):
    """The artifact run on the check inputs in a clean process (worker/artifact_check.py)."""
    compared: str  # "values" or "shapes"
    max_abs_diff: float | None
    validation: ValidationRecord
    problem: str


class SandboxAttempt(TypedDict):
    """One thing model code attempted in the sandbox (worker/attempt_record.py)."""
    event: str  # "connect", "lookup", "command", "write", "read"
    target: str


class ConversionRecord(TypedDict, total=False):
    """One unit's conversion result (a fresh or a cached conversion, or a derived precision)."""
    # the outcome
    ok: bool
    stage: str  # "done", or the stage that failed
    runtime: str | None
    error_type: str | None
    error_message: str | None
    error_detail: str | None  # the original message when error_message says the reason instead
    traceback_tail: str | None
    cause: str | None  # causes.py
    detected_at: str | None
    task: str | None
    construct: dict[str, object] | None  # the construct that guards on data (worker/construct.py)
    input_size_retry: SizeRetry | None
    # the cost
    seconds: float | None
    phases: Phases | None
    timings: dict[str, float] | None
    worker_peak_rss_mb: float
    # the model and its artifact
    params: int | None
    layout: str | None
    input_shape: list[int] | None
    input_shapes: list[list[int]] | str | None
    input_dtypes: list[str] | str | None
    input_signature: Sequence[object] | Mapping[str, object] | None  # per input: its name, shape, dtype, range
    artifact_input_shape: list[int] | None
    artifact_input_dtype: str | None
    output_shapes: list[list[int]] | None
    weights: dict[str, object] | None  # worker/dense_weights.py WeightsRecord.to_dict()
    model_flops: int | None
    flops: int | None
    flops_by_op: dict[str, int] | None
    flops_unmeasured: str | None
    compute_check: ComputeCheckRecord | None
    export_mode: str | None
    converter: str | None
    converter_version: str | None
    torch_version: str | None
    rewrites: list[object] | dict[str, object] | None
    delegation: dict[str, object] | None
    max_abs_diff: float | None
    validation: ValidationRecord | None
    measured_graph: MeasuredGraph | None
    precision: str | None
    accuracy: dict[str, object] | None  # worker/accuracy.py accuracy_block()
    quantization: dict[str, object] | None
    sandbox_record: list[SandboxAttempt] | None  # the worker's, judged and dropped by sandbox/verdict.py
    # set by the runner (messages.RUNNER_KEYS) and the sandbox's verdict
    artifact_path: str | None
    artifact_bytes: int | None
    artifact_sha256: str | None
    model: str | None
    key: str | None
    cached: bool | None
    cached_phases: Phases | None
    sandbox: dict[str, object] | None  # where the model code ran (sandbox/availability.py)
    sandbox_network: dict[str, int] | None  # the network namespace's counters that moved
    sandbox_attempts: list[str] | None
    node: str | None
    actor_seconds: float | None
    # a derived precision's (derive.py)
    base_key: str | None
    fp32_cached: bool


def subset(record: ConversionRecord, keys: Iterable[str]) -> ConversionRecord:
    """The entries of `record` under `keys`, in the order of `keys` (a part of a record is a record)."""
    plain: Mapping[str, object] = record
    return cast(ConversionRecord, {k: plain[k] for k in keys if k in plain})
