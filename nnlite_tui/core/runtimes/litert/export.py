"""PyTorch -> .tflite with litert-torch, inside the conversion worker: export, lower, serialize, validate.

litert_torch.convert() runs torch.export and then the lowering in one call; PhaseTracker tells the
two apart (their exception types overlap), so a failure names the right stage and the phases are
timed separately. torch.export is tried non-strict first, then strict (each traces different Python).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.convert.worker import draws, stochastic
from nnlite_tui.core.convert.worker.errors import SamplesAtInference, StageError, first_line
from nnlite_tui.core.convert.worker.model import Prepared, blame_sampling, guarded
from nnlite_tui.core.convert.worker import lowering_rewrites
from nnlite_tui.core.convert.worker.export_fixes import exact_rewrites
from nnlite_tui.core.ops.graph import GraphError
from nnlite_tui.core.runtimes.base import GraphWork
from nnlite_tui.core.runtimes.litert.graph import MAC_OPS, read_graph
from nnlite_tui.core.runtimes.litert.token_tables import with_table_ranges
from nnlite_tui.core.runtimes.litert.validate import validate, validate_spread


class PhaseTracker:
    """Tells torch.export failures from lowering failures inside one litert_torch.convert() call.

    litert_torch.convert() runs torch.export and then the lowering; the exception types overlap
    (RuntimeError in both), so we note which phase was running when it raised.
    """

    def __init__(self) -> None:
        self.phase = "export"
        self.switched_at: tuple[float, float] | None = None  # (wall, cpu) when the lowering began
        self.on_lower: Callable[[], None] | None = None  # told when the lowering begins
        self.hooked = False
        try:
            from litert_torch._convert import core
        except ImportError:
            return
        original = getattr(core, "export_torch_signature", None)
        if original is None:
            return

        def tracked(*args, **kwargs):
            self.phase = "export"
            result = original(*args, **kwargs)
            self.phase = "lower"
            self.switched_at = (time.perf_counter(), time.process_time())
            if self.on_lower is not None:
                self.on_lower()
            return result

        core.export_torch_signature = tracked
        self.hooked = True


def _export(litert_torch, target, sample: tuple, tracker: PhaseTracker, attempt: str = stochastic.AS_TRACED):
    """torch.export non-strict first, then strict; lowering errors are final. `attempt`: how the
    program's random draws are written (stochastic.py; as traced for a model that does not draw)."""
    first: BaseException | None = None
    for strict in (False, True):
        tracker.phase = "export"
        tracker.switched_at = None
        try:
            with (exact_rewrites(), lowering_rewrites.installed(), stochastic.while_tracing(attempt),
                  draws.on_every_export(stochastic.table(attempt))):
                return litert_torch.convert(target, sample, strict_export=strict), strict
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            if tracker.phase != "export":
                raise StageError(tracker.phase, exc) from exc
            first = first or exc
    assert first is not None  # both attempts raised
    raise StageError("export", first) from first


def _export_sampling(litert_torch, prepared: Prepared, tracker: PhaseTracker):
    """(converted, strict, attempt): the first of the sampling record's attempts that converts
    (stochastic.py); a model that does not draw is exported as traced."""
    record = prepared.sampled
    if record is None:
        return (*_export(litert_torch, prepared.target, prepared.fed(prepared.checks[0]), tracker),
                stochastic.AS_TRACED)
    first: StageError | None = None
    for attempt in record.attempts():
        try:
            return (*_export(litert_torch, prepared.target, prepared.fed(prepared.checks[0]), tracker, attempt),
                    attempt)
        except StageError as err:
            first = first or err
    assert first is not None
    why = SamplesAtInference(stochastic.unconvertible(record, first.stage, first_line(str(first.exc))))
    raise StageError(first.stage, why) from first.exc


def _write(converted, out_path: str) -> None:
    tmp = out_path + ".part"
    converted.export(tmp)
    os.replace(tmp, out_path)


def _validate_sampling(litert_torch, prepared: Prepared, out_path: str, attempt: str, tracker: PhaseTracker,
                       samples: list[list]) -> dict[str, object]:
    """The artifact of a model that draws, validated as stochastic.py says."""
    assert prepared.sampled is not None

    def convert_at_mean(path: str) -> None:
        converted, _ = _export(litert_torch, prepared.target, prepared.fed(prepared.checks[0]), tracker,
                               stochastic.AT_MEAN)
        guarded("serialize", _write, converted, path)

    return stochastic.validate_artifact(
        prepared.sampled, attempt, out_path, prepared.references,
        exact=lambda path, references: validate(path, samples, references),
        spread=lambda path, reference: validate_spread(path, samples[0], reference),
        convert_at_mean=convert_at_mean)


def _split_convert(clock: PhaseClock, start: tuple[float, float], tracker: PhaseTracker) -> None:
    """litert_torch.convert() is torch.export then the lowering: one phase each, split where the
    tracker saw the export return (one "convert" phase when it could not hook in)."""
    switched = tracker.switched_at
    if switched is None or switched[0] < start[0]:
        clock.since("export" if tracker.hooked else "convert", start)
        return
    clock.add("export", switched[0] - start[0], switched[1] - start[1])
    clock.since("lower", switched)


def mac_work(path: str) -> GraphWork:
    """The artifact's multiply-accumulate FLOPs (`flops`, `flops_by_op`) for the compute check; None
    when its graph cannot be read (the check is then unmeasured)."""
    try:
        graph = read_graph(path)
    except GraphError as exc:
        return {"flops": None, "flops_by_op": {}, "flops_unmeasured": str(exc)}
    by_op: dict[str, int] = {}
    for op in graph.ops:
        if op.type in MAC_OPS:
            by_op[op.type] = by_op.get(op.type, 0) + op.flops
    return {"flops": sum(by_op.values()), "flops_by_op": by_op}


def export(prepared: Prepared, out_path: str, tracker: PhaseTracker, clock: PhaseClock) -> dict[str, object]:
    """Convert `prepared` to `out_path` and validate it; the LiteRT-specific result fields."""
    import litert_torch
    import torch

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    clock.started("export" if tracker.hooked else "convert")
    start = clock.now()
    tracker.on_lower = lambda: clock.started("lower")
    try:
        edge, strict, attempt = blame_sampling(prepared.sampling, _export_sampling, litert_torch, prepared, tracker)
    finally:
        tracker.on_lower = None
        _split_convert(clock, start, tracker)
    timings["convert_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with clock.phase("serialize"):
        guarded("serialize", _write, edge, out_path)
        del edge  # the converted model in memory (as large as the file): the rest reads the file
    timings["serialize_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    samples = [[a.numpy() for a in prepared.fed(c)] for c in prepared.checks]
    with clock.phase("validate"):
        if prepared.sampled is None:
            checked = blame_sampling(prepared.sampling, guarded, "validate", validate, out_path, samples,
                                     prepared.references)
        else:
            checked = guarded("validate", _validate_sampling, litert_torch, prepared, out_path, attempt, tracker,
                              samples)
    timings["validate_s"] = time.perf_counter() - t0
    # an integer input whose lookup PyTorch did not show gets its range from the graph's table
    signature = guarded("validate", with_table_ranges, prepared.common_fields()["input_signature"], out_path)
    return {
        **mac_work(out_path),
        "export_mode": "strict" if strict else "non-strict",
        "timings": timings,
        "converter": "litert-torch",
        "converter_version": str(litert_torch.__version__),
        "torch_version": str(torch.__version__),
        "rewrites": lowering_rewrites.applied(),
        "input_signature": signature,  # of the export that succeeded (each attempt starts afresh)
        **checked,
    }
