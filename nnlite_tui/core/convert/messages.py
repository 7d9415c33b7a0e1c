"""What a conversion worker may say, checked field by field before the runner uses any of it.

Every message from a worker (wire.py frames) is hostile data: a known key with a value of the right
type and within range, or the whole message is refused. Keys the runner sets itself (the artifact's
path, size and sha256, which it measures from the file it took; the model's name, the cache key,
where the job ran) are not the worker's to send. The nested records a result carries (compute
check, weights, validation, ...) are JSON data of bounded size, kept as data: nothing in them is
ever evaluated or imported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StringConstraints, ValidationError,
                      field_validator, model_validator)

from nnlite_tui.core.convert.record import ConversionRecord
from nnlite_tui.core.convert.wire import ProtocolError

Text = Annotated[str, StringConstraints(strict=True, max_length=20_000)]
Name = Annotated[str, StringConstraints(strict=True, max_length=200)]
Count = Annotated[int, Field(strict=True, ge=0, le=10**18)]
Seconds = Annotated[float, Field(strict=True, ge=0, le=10**7, allow_inf_nan=False)]
Shape = list[Annotated[int, Field(strict=True, ge=-1, le=2**40)]]
Fraction = Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)]
Error = Annotated[float, Field(strict=True, ge=0)]  # a difference: infinite when the outputs diverge, never NaN

# A free record's bounds: whatever the runner later does with it (the strict JSON writers recurse, the
# report and the console walk it) stays cheap and shallow. The frame's 4 MiB alone would let a
# thousand levels of nesting through, which stops the writer with a RecursionError.
RECORD_DEPTH = 16
RECORD_ITEMS = 100_000
BIG_INT = 2**63  # beyond it an int is no measured figure, and float() of it may overflow


def _bounded(value: Any) -> Any:
    """JSON data of bounded depth and size (str, bool, None, int within BIG_INT, float, list, dict with
    str keys); ValueError for anything else. Iterative, so that no depth of nesting can exhaust a stack."""
    items, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        items += 1
        if items > RECORD_ITEMS:
            raise ValueError(f"a record of more than {RECORD_ITEMS} values")
        if depth > RECORD_DEPTH:
            raise ValueError(f"a record nested deeper than {RECORD_DEPTH} levels")
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str) or len(key) > 200:
                    raise ValueError("a record key that is not a short string")
                stack.append((inner, depth + 1))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)
        elif isinstance(item, bool) or item is None or isinstance(item, float):
            continue
        elif isinstance(item, int):
            if abs(item) >= BIG_INT:
                raise ValueError("an integer too large to be a measured figure")
        elif isinstance(item, str):
            if len(item) > 20_000:
                raise ValueError("a string of more than 20,000 characters in a record")
        else:
            raise ValueError(f"a {type(item).__name__} in a record")
    return value


Record = Annotated[dict[Name, Any], AfterValidator(_bounded)]  # nested JSON data, bounded
Bounded = Annotated[Any, AfterValidator(_bounded)]

# Set by the runner from what it measured or decided itself, never taken from a worker.
RUNNER_KEYS = frozenset({"artifact_path", "artifact_bytes", "artifact_sha256", "model", "key", "cached",
                         "cached_phases", "sandbox", "worker_peak_rss_mb", "worker_start", "node", "actor_seconds"})


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


class Ready(_Message):
    ready: Literal[True]
    pid: Annotated[int, Field(strict=True, ge=1, le=2**22)]
    cpu_s: Seconds


class Done(_Message):
    """The worker's own word that the job's process ended (its exit status), after it reaped it, and
    the command lines of the processes the job left running, which the worker killed (leftovers.py)."""
    done: Literal[True]
    status: Annotated[int, Field(strict=True, ge=-128, le=255)]
    left: Annotated[list[Annotated[str, StringConstraints(strict=True, max_length=120)]], Field(max_length=20)] = []


class ProbeAnswer(BaseModel):
    """One line of the size probe (convert/cost_probe.py), which builds models: only what ranking reads."""
    model_config = ConfigDict(extra="ignore", frozen=True)
    name: Text
    params: Count | None = None
    modules: Count | None = None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Phase(_Strict):
    s: Seconds
    cpu_s: Seconds


class Sampling(_Strict):
    """How a model that draws at inference was converted and validated (worker/stochastic.py)."""
    draws: list[Text] = Field(max_length=20)
    artifact_draws: StrictBool
    export: Name
    distribution: Record | None = None  # worker/distribution.py compare()'s figures
    at_mean: Record | None = None  # {max_abs_diff, tolerance} or {unchecked: why}


class Validation(_Strict):
    """How much the compute check could tell (worker/validation.py strength()), and for a model that
    draws, by which method its artifact was validated."""
    inputs: Count
    strength: Name
    input_sensitivity: Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)] | None = None
    method: Literal["exact", "distribution"] | None = None
    sampling: Sampling | None = None
    rechecked: Text | None = None  # set by the runner that checked the artifact (a cluster actor's, say)


class OutputsCheck(_Message):
    """The artifact run on the check inputs and compared with PyTorch's outputs, in a clean process
    (worker/artifact_check.py): the figures, or the problem that fails the unit."""
    compared: Literal["values", "shapes"] | None = None
    max_abs_diff: Error | None = None
    validation: Validation | None = None
    problem: Text | None = None

    @model_validator(mode="after")
    def _one_verdict(self) -> OutputsCheck:
        if (self.problem is None) == (self.compared is None):
            raise ValueError("an outputs check has either a comparison or a problem")
        if self.compared == "values" and (self.max_abs_diff is None or self.validation is None):
            raise ValueError("a comparison of values without its difference and strength")
        return self


class ArtifactCheck(_Message):
    """The artifact's MAC FLOPs as the graph reader found them (Runtime.graph_work), and its outputs on
    the check inputs, from a process that never ran model code."""
    flops: Count | None
    flops_by_op: dict[Name, Count]
    flops_unmeasured: Text | None = None
    outputs: OutputsCheck | None = None


class Accuracy(_Strict):
    """A derived precision's accuracy block (worker/accuracy.py accuracy_block()): only its keys, its
    figures in their ranges. The verdict is judged again by the runner from the figures."""
    precision: Name
    route: Text
    calibration: Record | None = None
    top1_agreement: Fraction | None = None
    max_abs_err_rel: Error
    mean_abs_err_rel: Error
    cosine: Annotated[float, Field(strict=True, ge=-1, le=1, allow_inf_nan=False)]
    max_abs_err: Error
    samples: Annotated[int, Field(strict=True, ge=1, le=10**6)]
    tolerance: dict[Name, Annotated[float, Field(strict=True, allow_inf_nan=False)]] = Field(max_length=16)
    verdict: Literal["ok", "degraded"]
    beyond: list[Text] = Field(max_length=16)
    alternatives: list[Record] | None = Field(None, max_length=4)  # a route tried and not kept (quantize.py)


Phases = Annotated[dict[Name, Phase], Field(max_length=32)]
Timings = Annotated[dict[Name, Seconds], Field(max_length=32)]


class WorkerResult(_Message):
    """A job's result as the worker sends it (worker/main.py, the runtimes' export and derive)."""
    ok: StrictBool
    stage: Name
    runtime: Name | None = None
    error_type: Text | None = None
    error_message: Text | None = None
    error_detail: Text | None = None
    traceback_tail: Text | None = None
    cause: Name | None = None
    detected_at: Name | None = None
    task: Name | None = None
    construct_: Record | None = Field(None, alias="construct")  # `construct` is a pydantic method
    input_size_retry: Record | None = None
    seconds: Seconds | None = None
    phases: Phases | None = None
    timings: Timings | None = None
    params: Count | None = None
    layout: Name | None = None
    input_shape: Shape | None = None
    input_shapes: list[Shape] | Text | None = None
    input_dtypes: list[Name] | Text | None = None
    input_signature: Annotated[list[Any], AfterValidator(_bounded)] | Record | None = None
    artifact_input_shape: Shape | None = None
    artifact_input_dtype: Name | None = None
    output_shapes: list[Shape] | None = None
    weights: Record | None = None
    model_flops: Count | None = None
    flops: Count | None = None
    flops_by_op: dict[Name, Count] | None = None
    flops_unmeasured: Text | None = None
    compute_check: Record | None = None
    export_mode: Name | None = None
    converter: Name | None = None
    converter_version: Name | None = None
    torch_version: Name | None = None
    rewrites: Annotated[list[Any], AfterValidator(_bounded)] | Record | None = None
    delegation: Record | None = None
    max_abs_diff: Annotated[float, Field(strict=True)] | None = None
    validation: Validation | None = None
    measured_graph: Record | None = None
    precision: Name | None = None
    accuracy: Accuracy | None = None
    quantization: Record | None = None
    sandbox_record: list[dict[Name, Text | None]] | None = None  # what the model attempted (attempt_record.py)

    @field_validator("max_abs_diff")
    @classmethod
    def _no_negative(cls, value: float | None) -> float | None:
        if value is not None and not math.isnan(value) and value < 0:
            raise ValueError("a difference is never negative")
        return value

    @model_validator(mode="after")
    def _no_valid_nan(self) -> WorkerResult:
        # A NaN difference compares false with every tolerance: a result that says it passed with one
        # did not pass anything.
        if self.ok and self.max_abs_diff is not None and math.isnan(self.max_abs_diff):
            raise ValueError("a result that passed with a NaN difference (max_abs_diff)")
        return self


class ActorResult(WorkerResult):
    """A cluster conversion actor's result (cluster/convert_actor.py): a worker's, with the keys the
    actor's runner set. The actor runs no model code, but its node is another machine's word."""
    artifact_path: Text | None = None
    artifact_bytes: Count | None = None
    artifact_sha256: Annotated[str, StringConstraints(strict=True, pattern="^[0-9a-f]{64}$")] | None = None
    model: Text | None = None
    key: Name | None = None
    cached: StrictBool | None = None
    cached_phases: Record | None = None
    sandbox: Record | None = None
    worker_peak_rss_mb: Annotated[float, Field(ge=0)] | None = None
    sandbox_network: Record | None = None  # the sandbox's verdict (sandbox/verdict.py)
    sandbox_attempts: list[Text] | None = None
    node: Name | None = None
    actor_seconds: Seconds | None = None


def _refused(what: str, exc: ValidationError) -> ProtocolError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(message)"
    return ProtocolError(f"{what}: field {where[:80]}: {first['msg'][:120]}")


def ready(message: Mapping[str, object]) -> Ready:
    try:
        return Ready.model_validate(message)
    except ValidationError as exc:
        raise _refused("the worker's ready message", exc) from None


def done(message: Mapping[str, object]) -> Done:
    try:
        return Done.model_validate(message)
    except ValidationError as exc:
        raise _refused("the worker's job-ended message", exc) from None


def result(message: Mapping[str, object], derive: bool = False) -> ConversionRecord:
    """A worker's job result as a record of the fields it sent (checked); ProtocolError if refused.

    An accuracy block is taken only from a derivation job (`derive`), the one kind that measures it;
    its verdict is judged again here from its figures against the runner's own tolerances."""
    taken = sorted(RUNNER_KEYS & message.keys())
    if taken:
        raise ProtocolError(f"the result sets {', '.join(taken)[:200]}, which only the runner measures")
    if not derive and message.get("accuracy") is not None:
        raise ProtocolError("the result carries an accuracy, which only a derived precision's job measures")
    try:
        checked = WorkerResult.model_validate(message)
    except ValidationError as exc:
        raise _refused("the job's result", exc) from None
    # WorkerResult declares every key of a ConversionRecord a worker may send, with its type
    sent = cast(ConversionRecord, checked.model_dump(exclude_unset=True, by_alias=True))
    if checked.validation is not None and checked.validation.rechecked is not None:
        raise ProtocolError("the result says its artifact was rechecked, which only the runner does")
    if not derive and sent.get("ok") and not isinstance(sent.get("compute_check"), dict):
        # every conversion that passes carries it, and with it the clean process's check (pool.recheck)
        raise ProtocolError("a conversion that passed without its compute check")
    if checked.accuracy is not None:
        sent["accuracy"] = _rejudged(checked.accuracy)
    return sent


def _rejudged(block: Accuracy) -> dict[str, object]:
    from nnlite_tui.core.convert.worker.accuracy import TOLERANCES, AccuracyCost, verdict

    if block.precision not in TOLERANCES:
        raise ProtocolError(f"an accuracy for an unknown precision {block.precision[:40]!r}")
    cost = AccuracyCost(samples=block.samples, top1_agreement=block.top1_agreement,
                        max_abs_err_rel=block.max_abs_err_rel, mean_abs_err_rel=block.mean_abs_err_rel,
                        cosine=block.cosine, max_abs_err=block.max_abs_err)
    judged, beyond = verdict(block.precision, cost)
    return {**block.model_dump(exclude_unset=True), "tolerance": dict(TOLERANCES[block.precision]), "verdict": judged, "beyond": beyond}


def artifact_check(message: Mapping[str, object]) -> ArtifactCheck:
    try:
        return ArtifactCheck.model_validate(message)
    except ValidationError as exc:
        raise _refused("the artifact check's result", exc) from None


def probe_answer(message: Any) -> ProbeAnswer:
    try:
        return ProbeAnswer.model_validate(message)
    except ValidationError as exc:
        raise _refused("the size probe's answer", exc) from None


def actor_result(message: Mapping[str, object]) -> ConversionRecord:
    try:
        checked = ActorResult.model_validate(message)
    except ValidationError as exc:
        raise _refused("the conversion actor's result", exc) from None
    # ActorResult declares every key of a ConversionRecord an actor may send, with its type
    return cast(ConversionRecord, checked.model_dump(exclude_unset=True, by_alias=True))


def violation(message: str) -> ConversionRecord:
    """The failure of a job whose worker broke the protocol: the model's, deterministic, never retried."""
    return {"ok": False, "stage": "sandbox", "error_type": "ProtocolViolation", "cause": "protocol",
            "error_message": f"the conversion worker sent what the runner does not accept: {message}"}
