"""The validation judged again in the runner, on the artifact's outputs as a clean process computed them.

The job's process ran the artifact on the check inputs and compared it with PyTorch after the model's
code ran in it: a model could patch the interpreter or numpy to pass an artifact that computes
something else. A process that never imported model code runs the artifact again on the same inputs
and compares (worker/artifact_check.py); its figures replace the job's. PyTorch's side (the inputs and
the eager outputs) stays the model's word (the threat model's "out of scope").
"""

from __future__ import annotations

from typing import cast

from nnlite_tui.core.convert.causes import classify
from nnlite_tui.core.convert.messages import OutputsCheck
from nnlite_tui.core.convert.record import ConversionRecord, ValidationRecord, subset

KEPT = ("runtime", "task", "weights", "seconds", "phases", "compute_check", "flops", "flops_by_op", "model_flops")
RECHECKED = "the artifact run on the check inputs outside the model's process"


def rejudged(result: ConversionRecord, outputs: OutputsCheck | None) -> ConversionRecord:
    """`result` with its validation from `outputs` (the clean process's, checked)."""
    if not result.get("ok"):
        return result  # failed already (the compute check, judged again first)
    if outputs is None:
        return {"ok": False, "stage": "validate", "error_type": "ArtifactCheckFailed", "cause": "artifact-check-failed",
                "error_message": "the artifact check returned no comparison of outputs", **subset(result, KEPT)}
    if outputs.problem:
        failed: ConversionRecord = {"ok": False, "stage": "validate", "error_type": "OutputMismatch",
                                    "error_message": f"{outputs.problem} ({RECHECKED})", **subset(result, KEPT)}
        cause = classify(failed)  # a mismatch by the shared rules, else the check itself could not be made
        return {**failed, "cause": cause if cause != "validate-error" else "artifact-check-failed"}
    # the clean process's strength figures over the job's; the job's method and sampling record stay
    clean = outputs.validation.model_dump(exclude_none=True) if outputs.validation is not None else {}
    validation: ValidationRecord = {**(result.get("validation") or {}), **cast(ValidationRecord, clean)}
    validation["rechecked"] = RECHECKED + (": shapes only, the model samples" if outputs.compared == "shapes" else "")
    changed: ConversionRecord = {"validation": validation}
    if outputs.compared == "values":
        changed["max_abs_diff"] = outputs.max_abs_diff
    return {**result, **changed}
