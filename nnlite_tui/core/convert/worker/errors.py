"""Conversion failures in the worker: the stage that failed, and the plain reason when the cause is known.

A result keeps the original first line in `error_detail` when `error_message` is replaced by a reason
(torchvision's compiled operators, a download refused offline, sampling at inference, a task whose
model is not one static graph).
"""

from __future__ import annotations

import traceback

from nnlite_tui.core.convert.worker import construct, offline, torchvision_compat
from nnlite_tui.core.sources import task_inputs
from nnlite_tui.core.convert.causes import SAMPLES, classify, sampling_op
from nnlite_tui.core.convert.compute_check import LessWork
from nnlite_tui.core.convert.record import ConversionRecord, SizeRetry
from nnlite_tui.core.spec import ModelSpec


class StageError(Exception):
    def __init__(self, stage: str, exc: BaseException):
        self.stage = stage
        self.exc = exc
        self.retried: SizeRetry | None = None  # the input size tried first (job.py convert_one)
        super().__init__(f"{stage}: {exc}")


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:500]
    return ""


def error_fields(stage: str, exc: BaseException) -> ConversionRecord:
    etype = type(exc)
    name = etype.__name__ if etype.__module__ == "builtins" else f"{etype.__module__}.{etype.__name__}"
    message = first_line(str(exc)) or etype.__name__
    if isinstance(exc, SyntaxError) and exc.filename:
        message = f"{exc.filename}:{exc.lineno}: {exc.msg}"
    return {
        "ok": False,
        "stage": stage,
        "error_type": name,
        "error_message": message,
        "traceback_tail": "".join(traceback.format_exception(exc)[-6:])[-3000:],
    }


class SamplesAtInference(RuntimeError):
    """Two eager runs on the same input differ: the model draws random numbers when it runs."""


def _guard(exc: BaseException, spec: ModelSpec,
           converter_frames: tuple[str, ...]) -> tuple[str, dict[str, object]] | None:
    """("the guard on data is `code` at file:line, reached from ...", the frames) for a data-dependent error."""
    found, model = construct.blame(exc, spec.file, converter_frames)
    text = construct.describe(found, model)
    if text is None:
        return None
    frames: dict[str, object] = {"construct": found.to_dict() if found else None,
                                 "model_frame": model.to_dict() if model else None}
    return f"the guard on data is {text}", frames


def explained(err: StageError, spec: ModelSpec, converter_frames: tuple[str, ...]) -> ConversionRecord:
    """The error fields, with the plain reason when the cause is known (and the original kept);
    `converter_frames`: where the unit's converter's frames are (its runtime's declaration)."""
    stage, exc = err.stage, err.exc
    fields = error_fields(stage, exc)
    better = torchvision_compat.explain(exc) or (offline.explain(exc) if stage != "validate" else None)
    message = fields.get("error_message") or ""
    if better is None and stage == "lower" and (op := sampling_op(message)):
        better = SamplesAtInference(f"{SAMPLES} ({op}); a converted model cannot reproduce PyTorch's random draws")
    if better is not None:
        fields.update({"error_detail": message, "error_message": first_line(str(better)),
                       "error_type": f"{type(better).__module__}.{type(better).__name__}"})
    if isinstance(exc, LessWork):  # the figures behind the verdict, as a valid result carries them
        fields.update({"compute_check": exc.check.to_dict(), "model_flops": exc.check.model_flops,
                       "flops": exc.check.artifact_flops, "weights": exc.weights})
    fields["task"] = task = task_inputs.task_of(spec)
    fields["cause"] = cause = classify(fields)
    reason = task_inputs.export_reason(task, cause) if stage in ("export", "lower") else None
    guard = _guard(exc, spec, converter_frames) if cause == "data-dependent" else None
    if guard:
        fields["construct"] = guard[1]
    if reason or guard:
        # the task's reason, then the construct that guards on data (the source line), then the error
        said = "; ".join(part for part in (reason, guard[0] if guard else None) if part)
        message = fields.get("error_message") or ""
        fields.update({"error_detail": message, "error_message": f"{said}: {message}"[:500]})
        # A graph whose shapes depend on the data is an export-level property, even when only the
        # lowering (jax needs static shapes) notices it.
        cause = classify(fields)  # judged at the stage that noticed it
        fields.update({"stage": "export", "detected_at": stage, "cause": cause})
    retried = err.retried
    if retried:
        fields["input_size_retry"] = retried
        fields["error_message"] = (f"{fields.get('error_message') or ''} (at input {retried['to']}, retried once "
                                   f"after '{retried['reason'][:120]}' at {retried['from']})")
    return fields
