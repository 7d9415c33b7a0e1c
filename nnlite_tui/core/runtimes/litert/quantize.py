"""Deriving a precision from a model's fp32 .tflite, inside the conversion worker process.

The recipe route (ai-edge-quantizer): fp16 weights by float casting, dynamic-range int8 weights,
full int8 (weights and activations) calibrated on representative inputs. The variant must load
in the LiteRT interpreter; then its outputs are compared with PyTorch fp32 on the accuracy inputs
(accuracy.py). A full-int8 model's int8 input is fed quantized with its scale and zero point.

Failure stages: "calibrate" (the calibration inputs do not fit the model), "quantize" (the
quantizer fails), "validate" (the interpreter cannot load or run the variant).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from nnlite_tui.core.convert.worker.calibration import calibration_samples
from nnlite_tui.core.convert.worker.derivation import derived_result, model_to_derive, run_derivation
from nnlite_tui.core.convert.worker.errors import StageError
from nnlite_tui.core.convert.worker.model import as_exported
from nnlite_tui.core.convert.worker.derive_job import DeriveJob
from nnlite_tui.core.runtimes.litert.compact import CompactFailed, Compaction
from nnlite_tui.core.versions import dist_version

if TYPE_CHECKING:
    import numpy as np

ROUTE = "ai-edge-quantizer"
RECIPES = {"fp16": "weight_only_f16 (FLOAT_CASTING)", "dynamic-int8": "dynamic_wi8_afp32",
           "int8": "static_wi8_ai8"}


class InputQuantization(TypedDict):
    scale: float
    zero_point: int


class ArtifactIO(TypedDict):
    """A derived .tflite's inputs and outputs, as the interpreter describes them."""

    artifact_input_shape: list[int]
    artifact_input_dtype: str
    input_quantization: InputQuantization | None
    output_dtypes: list[str]
    output_shapes: list[list[int]]


class DeriveError(Exception):
    def __init__(self, stage: str, exc: BaseException):
        self.stage, self.exc = stage, exc
        super().__init__(f"{stage}: {exc}")


def _recipe(precision: str):
    from ai_edge_quantizer import qtyping, recipe
    from ai_edge_quantizer.algorithm_manager import AlgorithmName
    from ai_edge_quantizer.recipe_manager import RecipeManager

    if precision == "dynamic-int8":
        return recipe.dynamic_wi8_afp32()
    if precision == "int8":
        return recipe.static_wi8_ai8()
    if precision == "fp16":
        manager = RecipeManager()
        op = qtyping.TFLOperationName
        # Every op whose weights float casting can store as fp16.
        for name in (op.FULLY_CONNECTED, op.CONV_2D, op.DEPTHWISE_CONV_2D, op.CONV_2D_TRANSPOSE,
                     op.EMBEDDING_LOOKUP):
            manager.add_weight_only_config(regex=".*", operation_name=name, num_bits=16,
                                           algorithm_key=AlgorithmName.FLOAT_CASTING)
        return manager.get_quantization_recipe()
    raise ValueError(f"no recipe for precision {precision!r}")


def _run(path: str, inputs_fed: list, *, threads: int = 1) -> tuple[list[list], ArtifactIO]:
    """Outputs (as floats) of the .tflite for each input, and its I/O description."""
    from ai_edge_litert.interpreter import Interpreter

    from nnlite_tui.core.bench.tensor_quant import from_model_output, quant_params, to_model_input

    interpreter = Interpreter(model_path=path, num_threads=threads)
    interpreter.allocate_tensors()
    detail_in = interpreter.get_input_details()[0]
    details_out = interpreter.get_output_details()
    outputs = []
    for sample in inputs_fed:
        interpreter.set_tensor(detail_in["index"], to_model_input(sample, detail_in))
        interpreter.invoke()
        outputs.append([from_model_output(interpreter.get_tensor(d["index"]), d) for d in details_out])
    params = quant_params(detail_in)
    io: ArtifactIO = {"artifact_input_shape": [int(d) for d in detail_in["shape"]],
          "artifact_input_dtype": detail_in["dtype"].__name__,
          "input_quantization": None if params is None else {"scale": params[0], "zero_point": params[1]},
          "output_dtypes": [d["dtype"].__name__ for d in details_out],
          "output_shapes": [[int(x) for x in d["shape"]] for d in details_out]}
    return outputs, io


def derive(job: dict[str, object]) -> dict[str, object]:
    """One derivation job (derive_job.py: {spec, fp32_path, out_path, layout, calibration: {samples, dir}});
    the model is built exactly as for fp32. The result's fields, JSON the runner checks (convert.messages.result)."""

    from nnlite_tui.core.convert.worker.accuracy import accuracy_block, measure

    asked = DeriveJob.of(job)
    spec = asked.spec
    precision, out_path = spec.precision, asked.out_path
    nhwc = asked.nhwc
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    derivand = model_to_derive(job, spec, DeriveError)
    model, example_args, checks, references = derivand.model, derivand.example_args, derivand.checks, \
        derivand.references
    fed = [(a[0].permute(0, 2, 3, 1).contiguous() if nhwc else a[0]).numpy() for a in checks]
    timings["reference_s"] = time.perf_counter() - t0

    calibration = None
    t0 = time.perf_counter()
    try:
        from ai_edge_quantizer import quantizer

        q = quantizer.Quantizer(asked.fp32_path, _recipe(precision))
    except (ImportError, ValueError, RuntimeError) as exc:
        raise DeriveError("quantize", exc) from exc
    calibration_result = None
    if q.need_calibration:
        try:
            samples, calibration = calibration_samples(tuple(example_args[0].shape), asked.calibration_samples,
                                                       asked.calibration_dir)
            data = _signature_data(asked.fp32_path, samples, nhwc)
            calibration_result = q.calibrate(data, num_threads=1)
        except (ValueError, KeyError, RuntimeError, OSError) as exc:
            raise DeriveError("calibrate", exc) from exc
        timings["calibrate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        result = q.quantize(calibration_result, enable_progress_report=False)
        tmp = out_path + ".part"
        Path(tmp).unlink(missing_ok=True)
        result.export_model(tmp)
        os.replace(tmp, out_path)
    except Exception as exc:  # the quantizer raises plain ValueError/RuntimeError/KeyError from deep inside
        raise DeriveError("quantize", exc) from exc
    compaction = _compact(out_path)
    timings["quantize_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        outputs, io = _run(out_path, fed)
        cost = measure(references, outputs)
    except (ValueError, RuntimeError) as exc:
        raise DeriveError("validate", exc) from exc
    timings["validate_s"] = time.perf_counter() - t0
    block = accuracy_block(precision, f"{ROUTE}: {RECIPES[precision]}", calibration, cost)
    route, recipe_name = ROUTE, RECIPES[precision]
    if precision == "int8" and block["verdict"] == "degraded" and asked.pt2e:
        t0 = time.perf_counter()
        target = as_exported(model, 0) if nhwc else model
        calibration_fed = [s.transpose(0, 2, 3, 1).copy() if nhwc else s for s in samples]
        alternative, error = _try_pt2e(target, fed[0], calibration_fed, out_path + ".pt2e", references, fed,
                                       calibration)
        timings["pt2e_s"] = time.perf_counter() - t0
        if alternative is not None and _better(alternative[0], block):
            rejected = _summary(block)
            block, cost, io = alternative[:3]
            os.replace(out_path + ".pt2e", out_path)
            route, recipe_name = "pt2e", block["route"].split(": ", 1)[1]
            compaction = alternative[3]
            block["alternatives"] = [rejected]
        else:
            Path(out_path + ".pt2e").unlink(missing_ok=True)
            block["alternatives"] = [_summary(alternative[0]) if alternative else {"route": "pt2e", "error": error}]
    return {
        **derived_result(runtime="litert", out_path=out_path, job=job, derivand=derivand, cost=cost,
                         timings=timings, converter=route, converter_version=dist_version("ai-edge-quantizer"),
                         precision=precision, accuracy=block, recipe=recipe_name,
                         quantization={"input_quantization": io["input_quantization"],
                                       "output_dtypes": io["output_dtypes"], "compaction": compaction}),
        **{k: io[k] for k in ("artifact_input_shape", "artifact_input_dtype", "output_shapes")},
    }


def handle_derive(job: dict[str, object]) -> dict[str, object]:
    """The worker's entry for a derivation job: a result dict, never an exception for the model's faults."""
    return run_derivation(job, derive, DeriveJob.of(job).spec.precision, (DeriveError, StageError))


def _try_pt2e(target, sample_fed, calibration_fed: list, alt_path: str, references: list, fed: list,
              calibration: dict[str, object] | None):
    """((accuracy block, cost, io, compaction), None) for the PT2E route written to alt_path, or (None, why it
    failed) for the report. The caller decides which file stays."""
    import sys
    import traceback

    from nnlite_tui.core.convert.worker.accuracy import accuracy_block, measure
    from nnlite_tui.core.runtimes.litert.pt2e import RECIPE, convert_pt2e_int8

    try:
        convert_pt2e_int8(target, sample_fed, calibration_fed, alt_path)
        compaction = _compact(alt_path)
        outputs, io = _run(alt_path, fed)
        cost = measure(references, outputs)
    except Exception as exc:  # any failure of the second route leaves the first route's result standing
        print(f"[nnlite] pt2e route failed: {exc}", file=sys.stderr)
        traceback.print_exception(exc)
        Path(alt_path).unlink(missing_ok=True)
        return None, f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"[:300]
    block = accuracy_block("int8", f"pt2e: {RECIPE}", calibration, cost)
    return (block, cost, io, compaction), None


def _compact(path: str) -> Compaction | CompactFailed:
    """Share the file's identical zero-point vectors (tflite_compact.py); the file is fine without it."""
    from nnlite_tui.core.runtimes.litert.compact import compact

    try:
        return compact(path)
    except (ValueError, IndexError, OSError, ImportError, MemoryError) as exc:
        # An unreadable flatbuffer, or one too big to rebuild in this worker's memory cap (the rewrite
        # holds about three copies), stays as the quantizer wrote it: it is just as correct.
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def _better(candidate: Mapping[str, object], current: Mapping[str, object]) -> bool:
    """Within tolerance beats beyond it; otherwise the smaller relative error wins (accuracy blocks:
    convert/worker/accuracy.py)."""
    if (candidate["verdict"] == "ok") != (current["verdict"] == "ok"):
        return candidate["verdict"] == "ok"
    return _relative_error(candidate) < _relative_error(current)


def _relative_error(block: Mapping[str, object]) -> float:
    error = block["max_abs_err_rel"]
    assert isinstance(error, (int, float)), f"max_abs_err_rel {error!r}"  # accuracy_block writes a figure
    return error


def _summary(block: Mapping[str, object]) -> dict[str, object]:
    return {k: block.get(k) for k in ("route", "top1_agreement", "max_abs_err_rel", "mean_abs_err_rel", "cosine",
                                      "verdict")}


def _signature_data(fp32_path: str, samples: list, nhwc: bool) -> dict[str, list[dict[str, np.ndarray]]]:
    """Calibration inputs keyed as the quantizer wants them: {signature: [{input name: array}]}."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    signatures = Interpreter(model_path=fp32_path).get_signature_list()
    if not signatures:
        raise ValueError("the fp32 .tflite has no signature to calibrate")
    key, sig = next(iter(signatures.items()))
    if len(sig["inputs"]) != 1:
        raise ValueError(f"signature {key} has {len(sig['inputs'])} inputs; calibration feeds one")
    name = sig["inputs"][0]
    fed = [np.ascontiguousarray(s.transpose(0, 2, 3, 1)) if nhwc and s.ndim == 4 else s for s in samples]
    return {key: [{name: x} for x in fed]}
