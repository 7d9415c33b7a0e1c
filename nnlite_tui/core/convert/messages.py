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
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, ValidationError, field_validator

from nnlite_tui.core.convert.wire import ProtocolError

Text = Annotated[str, StringConstraints(strict=True, max_length=20_000)]
Name = Annotated[str, StringConstraints(strict=True, max_length=200)]
Count = Annotated[int, Field(strict=True, ge=0, le=10**18)]
Seconds = Annotated[float, Field(ge=0, le=10**7)]
Shape = list[Annotated[int, Field(strict=True, ge=-1, le=2**40)]]
Record = dict[Name, Any]  # nested JSON data; the frame's size bounds it

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
    """The worker's own word that the job's process ended (its exit status), after it reaped it."""
    done: Literal[True]
    status: Annotated[int, Field(strict=True, ge=-128, le=255)]


class GraphWork(_Message):
    """The artifact's MAC FLOPs as the graph reader found them (Runtime.graph_work), in a clean process."""
    flops: Count | None
    flops_by_op: dict[Name, Count]
    flops_unmeasured: Text | None = None


class ProbeAnswer(BaseModel):
    """One line of the size probe (convert/cost_probe.py), which builds models: only what ranking reads."""
    model_config = ConfigDict(extra="ignore", frozen=True)
    name: Text
    params: Count | None = None
    modules: Count | None = None


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
    phases: dict[Name, Any] | None = None
    timings: dict[Name, Any] | None = None
    params: Count | None = None
    layout: Name | None = None
    input_shape: Shape | None = None
    input_shapes: list[Shape] | Text | None = None
    input_dtypes: list[Name] | Text | None = None
    input_signature: list[Any] | Record | None = None
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
    rewrites: list[Any] | Record | None = None
    delegation: Record | None = None
    max_abs_diff: float | None = None
    validation: Record | None = None
    measured_graph: Record | None = None
    precision: Name | None = None
    accuracy: Record | None = None
    quantization: Record | None = None
    sandbox_record: list[dict[Name, Text | None]] | None = None  # what the model attempted (attempt_record.py)

    @field_validator("max_abs_diff")
    @classmethod
    def _no_negative(cls, value: float | None) -> float | None:
        if value is not None and not math.isnan(value) and value < 0:
            raise ValueError("a difference is never negative")
        return value


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


def ready(message: dict[str, Any]) -> Ready:
    try:
        return Ready.model_validate(message)
    except ValidationError as exc:
        raise _refused("the worker's ready message", exc) from None


def done(message: dict[str, Any]) -> Done:
    try:
        return Done.model_validate(message)
    except ValidationError as exc:
        raise _refused("the worker's job-ended message", exc) from None


def result(message: dict[str, Any]) -> dict[str, Any]:
    """A worker's job result as a plain dict of the fields it sent (checked); ProtocolError if refused."""
    taken = sorted(RUNNER_KEYS & message.keys())
    if taken:
        raise ProtocolError(f"the result sets {', '.join(taken)[:200]}, which only the runner measures")
    try:
        checked = WorkerResult.model_validate(message)
    except ValidationError as exc:
        raise _refused("the job's result", exc) from None
    return checked.model_dump(exclude_unset=True, by_alias=True)


def graph_work(message: dict[str, Any]) -> dict[str, Any]:
    try:
        return GraphWork.model_validate(message).model_dump()
    except ValidationError as exc:
        raise _refused("the graph reader's result", exc) from None


def probe_answer(message: Any) -> ProbeAnswer:
    try:
        return ProbeAnswer.model_validate(message)
    except ValidationError as exc:
        raise _refused("the size probe's answer", exc) from None


def actor_result(message: dict[str, Any]) -> dict[str, Any]:
    try:
        checked = ActorResult.model_validate(message)
    except ValidationError as exc:
        raise _refused("the conversion actor's result", exc) from None
    return checked.model_dump(exclude_unset=True, by_alias=True)


def violation(message: str) -> dict[str, Any]:
    """The failure of a job whose worker broke the protocol: the model's, deterministic, never retried."""
    return {"ok": False, "stage": "sandbox", "error_type": "ProtocolViolation", "cause": "protocol",
            "error_message": f"the conversion worker sent what the runner does not accept: {message}"}
