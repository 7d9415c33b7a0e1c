"""PyTorch -> .pte with the XNNPACK partitioner, inside the conversion worker: export, lower, serialize,
validate.

export: torch.export of the model behind the NHWC wrapper (non-strict, then strict, as LiteRT's path);
lower: to_edge_transform_and_lower with XnnpackPartitioner (edge dialect, decompositions, partitioning,
XNNPACK's serialization of each partition); serialize: to_executorch (memory planning) and the .pte
bytes; validate: the .pte in ExecuTorch's runtime against PyTorch eager on the same seeded inputs and
by the same rule as every runtime (convert/worker/validation.py).

The channels-last image is fed as `permute(0, 2, 3, 1).clone(memory_format=contiguous_format)`, never
`.contiguous()`: with one channel the permuted tensor is already "contiguous" with strides
(HW, W, 1, HW), torch.export keeps those strides in the program, and XNNPACK then fails every run
("Propagating input shapes failed"). The wrapper's permute goes into the XNNPACK partition; unlike
LiteRT, XNNPACK does not fold it against its own layout change, so the delegate runs one transpose
more than with NCHW input (a fraction of a percent of a run, bench/README.md).
"""

from __future__ import annotations

import os
import time
from typing import Any

from nnlite_tui.core.convert.phases import PhaseClock
from nnlite_tui.core.convert.worker import draws, stochastic
from nnlite_tui.core.convert.worker.errors import SamplesAtInference, StageError, first_line
from nnlite_tui.core.convert.worker.export_fixes import exact_rewrites
from nnlite_tui.core.convert.worker.model import Prepared, blame_sampling, guarded
from nnlite_tui.core.runtimes.executorch.delegation import count, partitioner_reasons
from nnlite_tui.core.runtimes.executorch.validate import validate, validate_spread
from nnlite_tui.core.runtimes.executorch.work import mac_work


def channels_last(prepared: Prepared, args: tuple) -> tuple:
    """A check's inputs as the .pte takes them: the image NHWC with plain NHWC strides."""
    import torch

    if prepared.image_index is None:
        return tuple(args)
    return tuple(a.permute(0, 2, 3, 1).clone(memory_format=torch.contiguous_format) if i == prepared.image_index
                 else a for i, a in enumerate(args))


def torch_export(target, sample: tuple):
    """torch.export non-strict first, then strict (each traces different Python), under the exact
    rewrites every runtime's export uses; the first error is the one reported."""
    import torch

    first: Exception | None = None
    for strict in (False, True):
        try:
            with exact_rewrites():
                return torch.export.export(target, sample, strict=strict), strict
        except Exception as exc:  # noqa: BLE001  whatever either tracer raises; the first is reported
            first = first or exc
    assert first is not None  # both attempts raised
    raise first


def _export_sampling(prepared: Prepared, sample: tuple):
    """(exported, strict, attempt): the first of the sampling record's attempts (stochastic.py) whose
    export and lowering succeed, lowered; a model that does not draw is exported as traced."""
    record = prepared.sampled
    attempts = record.attempts() if record is not None else [stochastic.AS_TRACED]
    first: StageError | None = None
    for attempt in attempts:
        try:
            with stochastic.while_tracing(attempt):
                exported, strict = guarded("export", torch_export, prepared.target, sample)
            table = stochastic.table(attempt)
            if table is not None:
                exported = guarded("export", draws.rewritten, exported, table)
            return exported, strict, attempt, guarded("lower", lower, exported)
        except StageError as err:
            if record is None:
                raise
            first = first or err
    assert first is not None and record is not None
    why = SamplesAtInference(stochastic.unconvertible(record, first.stage, first_line(str(first.exc))))
    raise StageError(first.stage, why) from first.exc


def _validate_sampling(prepared: Prepared, out_path: str, attempt: str, samples: list[tuple]) -> dict[str, object]:
    """The program of a model that draws, validated as stochastic.py says."""
    assert prepared.sampled is not None

    def convert_at_mean(path: str) -> None:
        with stochastic.while_tracing(stochastic.AT_MEAN):
            exported, _ = guarded("export", torch_export, prepared.target, samples[0])
        rewritten = guarded("export", draws.rewritten, exported, stochastic.table(stochastic.AT_MEAN))
        edge, _ = guarded("lower", lower, rewritten)
        guarded("serialize", write_program, edge, path)

    return stochastic.validate_artifact(
        prepared.sampled, attempt, out_path, prepared.references,
        exact=lambda path, references: validate(path, samples, references),
        spread=lambda path, reference: validate_spread(path, samples[0], reference),
        convert_at_mean=convert_at_mean)


def lower(exported) -> tuple[Any, dict[str, str]]:
    """The XNNPACK-lowered edge program and the partitioner's reasons for what it left out."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    with partitioner_reasons() as reasons:
        edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    return edge, dict(reasons)


def release_caches() -> None:
    """After each job: two caches keep every program executorch 1.5.1 lowered, and with it the model's
    weights twice over, alive in the worker for the rest of its life (a 48 M-parameter model left +370 MB
    per conversion, until the memory cap killed the worker): executorch's lru_cache over graph nodes,
    and torch's fake-tensor dispatch cache, whose entries reach the lowered modules."""
    from executorch.exir.backend.utils import is_same_node
    from torch._subclasses.fake_tensor import FakeTensorMode

    is_same_node.cache_clear()
    FakeTensorMode.cache_clear()


def write_program(edge, out_path: str) -> None:
    program = edge.to_executorch()
    tmp = out_path + ".part"
    with open(tmp, "wb") as fh:
        program.write_to_file(fh)
    os.replace(tmp, out_path)


def backends_of(edge_program) -> list[str]:
    """The backend id of each lowered module, distinct, in order (what Android's getBackends names)."""
    gm = edge_program.graph_module
    found: list[str] = []
    for node in gm.graph.nodes:
        if node.op == "get_attr" and str(node.target).startswith("lowered_module_"):
            backend = str(getattr(getattr(gm, node.target), "backend_id", "?"))
            if backend not in found:
                found.append(backend)
    return found


def export(prepared: Prepared, out_path: str, clock: PhaseClock) -> dict[str, object]:
    """Convert `prepared` to `out_path` and validate it; the ExecuTorch-specific result fields."""
    import torch

    timings: dict[str, float] = {}
    samples = [channels_last(prepared, c.args) for c in prepared.checks]
    t0 = time.perf_counter()
    # export and lowering in one phase each for a model that does not draw; a model that draws may
    # try several exports (stochastic.py), each with its lowering, all timed as "export"
    with clock.phase("export"):
        if prepared.sampled is None:
            exported, strict = blame_sampling(prepared.sampling, guarded, "export", torch_export, prepared.target,
                                              samples[0])
            attempt, lowered_edge = stochastic.AS_TRACED, None
        else:
            exported, strict, attempt, lowered_edge = blame_sampling(prepared.sampling, _export_sampling, prepared,
                                                                     samples[0])
    timings["export_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with clock.phase("lower"):
        edge, reasons = lowered_edge or blame_sampling(prepared.sampling, guarded, "lower", lower, exported)
    timings["lower_s"] = time.perf_counter() - t0
    lowered = edge.exported_program()
    delegation, backends = count(lowered, reasons), backends_of(lowered)
    t0 = time.perf_counter()
    with clock.phase("serialize"):
        guarded("serialize", write_program, edge, out_path)
        del edge, lowered, exported  # the programs in memory: the rest reads the file
    timings["serialize_s"] = time.perf_counter() - t0
    work = mac_work(out_path)  # the program's own word on its work, for the compute check
    t0 = time.perf_counter()
    with clock.phase("validate"):
        if prepared.sampled is None:
            checked = blame_sampling(prepared.sampling, guarded, "validate", validate, out_path, samples,
                                     prepared.references)
        else:
            checked = guarded("validate", _validate_sampling, prepared, out_path, attempt, samples)
    timings["validate_s"] = time.perf_counter() - t0
    return {
        "export_mode": "strict" if strict else "non-strict",
        "timings": timings,
        "converter": "executorch",
        "converter_version": _version(),
        "torch_version": str(torch.__version__),
        "delegation": {**delegation.to_dict(), "backends": backends},
        **work,
        **checked,
    }


def _version() -> str:
    from nnlite_tui.core.versions import dist_version

    return dist_version("executorch")
