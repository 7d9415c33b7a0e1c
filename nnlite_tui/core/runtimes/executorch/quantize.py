"""Full int8 for ExecuTorch, inside the conversion worker: PT2E with the XNNPACK quantizer, lowered to
XNNPACK, judged against PyTorch fp32 like LiteRT's int8 (convert/worker/accuracy.py).

Symmetric per-channel int8 weights and static int8 activations (XNNPACKQuantizer), calibrated on the
same inputs as LiteRT's int8 (convert/worker/calibration.py). The quantized graph keeps
quantize/dequantize pairs around each quantized op; the partitioner folds them into XNNPACK's int8
operators, and what it cannot take runs in float on ExecuTorch's own kernels, as in fp32. The program
keeps a float input and output (the quantize node is inside it), so the benchmark feeds it as fp32.

The other precisions (fp16, dynamic-range int8) are not made for ExecuTorch here: their units are
skipped before any worker is asked (convert/derive.py, runtimes.base.Runtime.precisions).

Stages: export (the fp32 export must work first), calibrate, quantize, lower, serialize, validate.
"""

from __future__ import annotations

import time

from nnlite_tui.core.convert.worker.calibration import calibration_samples
from nnlite_tui.core.convert.worker.derivation import derived_result, model_to_derive, run_derivation
from nnlite_tui.core.convert.worker.errors import StageError
from nnlite_tui.core.convert.worker.model import as_exported, guarded
from nnlite_tui.core.convert.worker.derive_job import DeriveJob
from nnlite_tui.core.versions import dist_version

ROUTE = "pt2e-xnnpack"
RECIPE = "XNNPACKQuantizer: symmetric, per-channel int8 weights, static int8 activations"


def _fed(args: tuple, nhwc: bool) -> tuple:
    import torch

    return tuple(a.permute(0, 2, 3, 1).clone(memory_format=torch.contiguous_format) if nhwc and i == 0 else a
                 for i, a in enumerate(args))


def _prepare(target, sample: tuple):
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    from nnlite_tui.core.convert.worker.export_fixes import exact_rewrites

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    with exact_rewrites():  # as the fp32 export
        exported = torch.export.export(target, sample)
    return prepare_pt2e(exported.module(), quantizer)


def _calibrate(prepared, calibration: list[tuple]) -> None:
    import torch

    with torch.no_grad():
        for sample in calibration:
            prepared(*sample)


def _convert(prepared, sample: tuple):
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    return torch.export.export(convert_pt2e(prepared), sample)


def derive(job: dict[str, object]) -> dict[str, object]:
    """One derivation job (derive_job.py: {spec, fp32_path, out_path, layout, calibration}): the model is
    built and exported exactly as for fp32, then quantized. The result's fields, JSON the runner checks
    (convert.messages.result)."""
    import torch

    from nnlite_tui.core.convert.worker.accuracy import accuracy_block, measure
    from nnlite_tui.core.runtimes.executorch.delegation import count
    from nnlite_tui.core.runtimes.executorch.export import backends_of, lower, write_program
    from nnlite_tui.core.runtimes.executorch.validate import run_all

    asked = DeriveJob.of(job)
    spec, out_path, nhwc = asked.spec, asked.out_path, asked.nhwc
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    derivand = model_to_derive(job, spec, StageError)
    model, example_args, checks, references = derivand.model, derivand.example_args, derivand.checks, \
        derivand.references
    target = as_exported(model, 0 if nhwc else None)
    fed = [_fed(args, nhwc) for args in checks]
    timings["reference_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        samples, calibration = calibration_samples(tuple(example_args[0].shape), asked.calibration_samples,
                                                   asked.calibration_dir)
    except (ValueError, OSError) as exc:
        raise StageError("calibrate", exc) from exc
    prepared = guarded("quantize", _prepare, target, fed[0])
    guarded("calibrate", _calibrate, prepared, [_fed((torch.from_numpy(s),), nhwc) for s in samples])
    program = guarded("quantize", _convert, prepared, fed[0])
    timings["quantize_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    edge, reasons = guarded("lower", lower, program)
    lowered = edge.exported_program()
    delegation, backends = count(lowered, reasons), backends_of(lowered)
    timings["lower_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    guarded("serialize", write_program, edge, out_path)
    timings["serialize_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    outputs = guarded("validate", run_all, out_path, fed)
    cost = guarded("validate", measure, references, [[o.detach().numpy() for o in run] for run in outputs])
    timings["validate_s"] = time.perf_counter() - t0
    first = fed[0][0]
    return {
        **derived_result(runtime="executorch", out_path=out_path, job=job, derivand=derivand, cost=cost,
                         timings=timings, converter=ROUTE, converter_version=dist_version("executorch"),
                         precision=spec.precision, recipe=RECIPE,
                         accuracy=accuracy_block(spec.precision, f"{ROUTE}: {RECIPE}", calibration, cost),
                         quantization={"input_quantization": None,
                                       "output_dtypes": [str(o.dtype).replace("torch.", "") for o in outputs[0]]}),
        "delegation": {**delegation.to_dict(), "backends": backends},
        "artifact_input_shape": [int(d) for d in first.shape],
        "artifact_input_dtype": str(first.dtype).replace("torch.", ""),
        "output_shapes": [[int(d) for d in o.shape] for o in outputs[0]],
    }


def handle_derive(job: dict[str, object]) -> dict[str, object]:
    """The worker's entry for a derivation job: a result dict, never an exception for the model's faults."""
    return run_derivation(job, derive, f"executorch {DeriveJob.of(job).spec.precision}")
