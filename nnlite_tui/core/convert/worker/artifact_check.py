"""The artifact judged by a process that never ran model code: its graph's work, and its outputs.

Forked from the worker (whose imports never ran a model) for pool.Worker.recheck, in the sandbox
like every job: the artifact is as hostile as the model that wrote it, so loading it here can crash
or hang this process only. It reads the artifact's MAC FLOPs (the compute check's artifact side)
and, given PyTorch's side as data (convert/check_inputs.py), runs the artifact on the check inputs
and compares with the rules every runtime shares (validation.py). A stochastic model's outputs vary
from run to run: only their number, shapes and finiteness are compared.
"""

from __future__ import annotations

from nnlite_tui.core.convert import check_inputs
from nnlite_tui.core.convert.output_check import OutputProblem
from nnlite_tui.core.convert.record import OutputsCheckRecord
from nnlite_tui.core.convert.worker.validation import check_outputs, same_shapes
from nnlite_tui.core.runtimes.base import Runtime


def check_artifact(runtime: Runtime, artifact: str, checks_path: str | None) -> dict[str, object]:
    """The figures as they are sent, to be checked by the runner (messages.ArtifactCheck)."""
    result: dict[str, object] = dict(runtime.graph_work(artifact))
    if checks_path is not None:
        result["outputs"] = _outputs(runtime, artifact, checks_path)
    return result


def _outputs(runtime: Runtime, artifact: str, checks_path: str) -> OutputsCheckRecord:
    try:
        with open(checks_path, "rb") as f:
            given = check_inputs.read(f)
    except check_inputs.Unreadable as exc:
        return {"problem": f"the check inputs the job's process wrote are unreadable: {exc}"}
    try:
        runs = runtime.run_artifact(artifact, given.samples)
    except Exception as exc:  # noqa: BLE001  the artifact cannot run on its own inputs: that is the verdict
        return {"problem": f"the artifact does not run on the check inputs: {type(exc).__name__}: {str(exc)[:300]}"}
    try:
        if given.stochastic:
            same_shapes(runs, given.references)
            return {"compared": "shapes"}
        checked = check_outputs(runs, given.references)
    except (OutputProblem, ValueError) as exc:
        return {"problem": str(exc)[:500]}
    return {"max_abs_diff": checked["max_abs_diff"], "validation": checked["validation"], "compared": "values"}

