"""The compute check judged again in the runner, on the artifact's FLOPs as a clean process read them.

The job's own process counted both sides of the compute check (compute_check.py), after the model's
code ran in it: a model could patch the graph reader to hide a converter that folded its work away.
The artifact's side is read again by a process that never imported model code (pool.Worker.recheck);
PyTorch's side stays the model's word (the threat model's "out of scope"). A verdict that changes is
the clean reading's: a `less-work` artifact fails at `validate`, as it would have in the worker.
"""

from __future__ import annotations

from nnlite_tui.core.convert.compute_check import THRESHOLD, ComputeCheckRecord, judge
from nnlite_tui.core.convert.messages import ArtifactCheck
from nnlite_tui.core.convert.record import ConversionRecord, subset

LESS_WORK = "nnlite_tui.core.convert.compute_check.LessWork"  # the error_type the worker gives it


def rejudged(result: ConversionRecord, check: ComputeCheckRecord, read: ArtifactCheck) -> ConversionRecord:
    """`result` with its compute check judged on `read` (the clean process's) as the artifact's side."""
    if read.flops == check.get("artifact_flops") and read.flops_by_op == check.get("artifact_by_op", {}):
        return result  # the job's process counted what the clean reading counts
    model_flops = result.get("model_flops")
    why = (check.get("unmeasured_because") if model_flops is None else None) or read.flops_unmeasured
    judged = judge(model_flops, read.flops, model_by_op=check.get("model_by_op"),
                   artifact_by_op=read.flops_by_op, set_apart=check.get("set_apart"), unmeasured_because=why,
                   threshold=float(check.get("threshold") or THRESHOLD))
    recounted: ComputeCheckRecord = {**judged.to_dict(),
                                     "recounted": "the artifact's graph, read outside the model's process"}
    fields: ConversionRecord = {"compute_check": recounted, "flops": read.flops, "flops_by_op": dict(read.flops_by_op)}
    if judged.verdict != "less-work":
        return {**result, **fields}
    return {"ok": False, "stage": "validate", "error_type": LESS_WORK, "cause": "less-work",
            "error_message": judged.cause, "model_flops": model_flops, **fields,
            **subset(result, ("runtime", "task", "weights", "seconds", "phases"))}
