"""One conversion job in the worker: prepare the model, let its runtime export and validate it, and
check that the artifact does the model's work (compute_check.py): one that does markedly less fails
at `validate` (cause less-work), the figures in its result.

On "output size too small" the conversion is tried once more at the next input size the model's
own trials used (spec.alt_in_shapes). Failures surface as StageError (or Filtered) for main.py
to turn into a result.
"""

from __future__ import annotations

import os
import sys
import time
from typing import cast

from nnlite_tui.core.convert import check_inputs
from nnlite_tui.core.convert.causes import classify
from nnlite_tui.core.convert.compute_check import ComputeCheck, LessWork, judge
from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.convert.record import ConversionRecord, SizeRetry
from nnlite_tui.core.convert.worker import detection_cut
from nnlite_tui.core.convert.worker.errors import StageError, error_fields, first_line
from nnlite_tui.core.convert.worker.model import Prepared, prepare
from nnlite_tui.core.runtimes.base import Runtime
from nnlite_tui.core.spec import ModelSpec, sha256_file


def check_compute(prepared: Prepared, fields: ConversionRecord) -> ComputeCheck:
    """PyTorch's MAC work against the artifact's; LessWork (a validate failure) below the threshold."""
    work = prepared.work
    check = judge(work.flops if work is not None else None, fields.get("flops"),
                  model_by_op=work.by_op if work is not None else None, artifact_by_op=fields.get("flops_by_op"),
                  set_apart=work.set_apart if work is not None else None,
                  unmeasured_because=prepared.work_unmeasured or fields.get("flops_unmeasured"),
                  weights_note=prepared.weights.note() if prepared.weights.tensors else None)
    if check.verdict == "less-work":
        raise StageError("validate", LessWork(check, prepared.weights.to_dict()))
    return check


def hand_over_checks(prepared: Prepared, out_path: str) -> None:
    """PyTorch's side of the validation, as data beside the artifact: the runner has the artifact run on
    these inputs and compared by a process that never ran model code (worker/artifact_check.py)."""
    samples = [[a.detach().cpu().numpy() for a in prepared.fed(c)] for c in prepared.checks]
    references = [[r.detach().cpu().numpy() for r in ref] for ref in prepared.references]
    # outputs that vary from run to run (stochastic.py) are compared there by number, shape and finiteness
    varies = prepared.sampled is not None and prepared.sampled.varies
    check_inputs.write(out_path + check_inputs.SUFFIX, samples, references, stochastic=varies)


def convert_at(spec: ModelSpec, out_path: str, runtime: Runtime, nhwc: bool, max_params: int | None,
               clock: PhaseClock, weights: str = "dense", strict_weights: bool = False) -> ConversionRecord:
    t0 = time.perf_counter()
    try:
        prepared = prepare(spec, nhwc, max_params, clock, weights, strict_weights)
        build_s = time.perf_counter() - t0
        # the record's fields as the runtime's export gives them (the runner checks them: messages.py)
        fields = cast(ConversionRecord, runtime.export(prepared, out_path, clock))
    except StageError as whole:  # a detector's post-processing: measure the network before it, recorded
        prepared, fields = detection_cut.convert_cut(whole, spec, out_path, runtime, nhwc, max_params, clock,
                                                     weights, strict_weights)
        # the whole model's attempt and the cut's build: all but the cut's own export steps
        build_s = max(0.0, time.perf_counter() - t0 - sum((fields.get("timings") or {}).values()))
    fields["compute_check"] = check_compute(prepared, fields).to_dict()
    with clock.phase("hash"):
        digest = sha256_file(out_path)
    hand_over_checks(prepared, out_path)
    return {
        "ok": True,
        "stage": "done",
        "runtime": runtime.name,
        "artifact_path": out_path,
        "artifact_bytes": os.path.getsize(out_path),
        "artifact_sha256": digest,
        **prepared.common_fields(),
        **fields,
        "timings": {"build_s": build_s, **(fields.get("timings") or {})},
    }


def convert_one(spec: ModelSpec, out_path: str, runtime: Runtime, nhwc: bool = True,
                max_params: int | None = None, clock: PhaseClock | None = None,
                weights: str = "dense", strict_weights: bool = False) -> ConversionRecord:
    """Convert at the spec's input size; on "output size too small", once more at the next recorded size."""
    clock = clock or PhaseClock()
    try:
        return convert_at(spec, out_path, runtime, nhwc, max_params, clock, weights, strict_weights)
    except StageError as err:
        too_small = classify(error_fields(err.stage, err.exc)) == "output-too-small"
        if not (too_small and spec.alt_in_shapes):
            raise
        retry = ModelSpec.from_dict({**spec.to_dict(), "in_shape": list(spec.alt_in_shapes[0]), "alt_in_shapes": []})
        note: SizeRetry = {"from": list(spec.in_shape), "to": list(retry.in_shape), "reason": first_line(str(err.exc))}
        # The log's phases start again from build: say why (fd 2 is the job's log).
        print(f"[nnlite] input {tuple(spec.in_shape)} too small for the model ({note['reason'][:120]}); "
              f"again at {tuple(retry.in_shape)}", file=sys.stderr, flush=True)
        try:
            result = convert_at(retry, out_path, runtime, nhwc, max_params, clock, weights, strict_weights)
        except StageError as again:
            again.retried = note
            raise
        result["input_size_retry"] = note
        return result
