"""The model a derived precision quantizes, whatever the runtime (conversion worker): built exactly as
for fp32 (the same weights policy, the same detector cut), with the inputs its accuracy is judged on
and PyTorch's outputs for them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from nnlite_tui.core.convert.worker import detection_cut
from nnlite_tui.core.convert.worker.calibration import accuracy_inputs
from nnlite_tui.core.convert.worker.dense_weights import apply_policy
from nnlite_tui.core.convert.worker.errors import StageError, error_fields, first_line
from nnlite_tui.core.convert.worker.job_log import redirect_fds
from nnlite_tui.core.convert.worker.model import build_model, flat_outputs
from nnlite_tui.core.spec import ModelSpec, sha256_file


Job = TypeVar("Job", bound=Mapping[str, Any])  # a derivation job as the runtime holds it (record.ConversionJob)


@runtime_checkable
class Staged(Protocol):
    """A runtime's staged error: the stage that failed and the exception it failed with."""
    stage: str
    exc: BaseException


@dataclass(frozen=True)
class ToDerive:
    model: Any
    example_args: tuple
    checks: list[tuple]  # calibration.accuracy_inputs
    references: list[list[Any]]  # PyTorch's outputs on each check, as numpy arrays


def model_to_derive(job: Mapping[str, Any], spec: ModelSpec,
                    stage_error: Callable[[str, Exception], Exception]) -> ToDerive:
    """`stage_error(stage, exc)` is the runtime's own error for a model derivations do not take."""
    import torch

    model, example = build_model(spec)
    apply_policy(model, job.get("weights") or "dense")  # the weights the fp32 artifact was made with
    model, example = detection_cut.as_recorded((model, example), job.get("measured_graph"))
    example_args = example if isinstance(example, tuple) else (example,)
    if len(example_args) != 1:
        raise stage_error("quantize", ValueError(f"{len(example_args)} inputs: only single-input models get "
                                                 "derived precisions"))
    checks = accuracy_inputs(example_args)
    with torch.no_grad():
        references = [[t.detach().numpy() for t in flat_outputs(model(*args))] for args in checks]
    return ToDerive(model, example_args, checks, references)


def derived_result(*, runtime: str, out_path: str, job: Mapping[str, Any], derivand: ToDerive, cost: Any,
                   timings: dict[str, float], converter: str, converter_version: str, precision: str,
                   accuracy: Mapping[str, object], recipe: str,
                   quantization: Mapping[str, object]) -> dict[str, object]:
    """The result fields every runtime's derived artifact has (each runtime adds its own I/O facts):
    the artifact and its fp32 source, the model, the accuracy against PyTorch, the quantization route."""
    import torch

    fp32_bytes, size = os.path.getsize(job["fp32_path"]), os.path.getsize(out_path)
    return {
        "ok": True, "stage": "done", "runtime": runtime, "artifact_path": out_path, "artifact_bytes": size,
        "artifact_sha256": sha256_file(out_path), "params": int(sum(p.numel() for p in derivand.model.parameters())),
        "layout": job.get("layout"), "input_shape": [int(d) for d in derivand.example_args[0].shape],
        "max_abs_diff": cost.max_abs_err, "timings": timings, "converter": converter,
        "converter_version": converter_version, "torch_version": str(torch.__version__),
        "validation": {"inputs": len(derivand.checks), "strength": "accuracy", "input_sensitivity": None},
        "precision": precision, "accuracy": accuracy,
        "quantization": {"route": converter, "recipe": recipe, "fp32_artifact_bytes": fp32_bytes,
                         "size_ratio": round(size / fp32_bytes, 4) if fp32_bytes else None,
                         "fp32_artifact_sha256": sha256_file(job["fp32_path"]), **quantization},
    }


def run_derivation(job: Job, derive: Callable[[Job], Mapping[str, object]], label: str,
                   errors: tuple[type[Exception], ...] = (StageError,)) -> dict[str, object]:
    """A runtime's derivation job in the worker, logged to the job's log: a result dict, never an exception
    for the model's faults. `errors` are the runtime's staged errors (each with .stage and .exc); `label`
    names the derivation in the log (e.g. "int8", "executorch int8")."""
    import sys
    import time
    import traceback

    t0 = time.perf_counter()
    with redirect_fds(job.get("log_path")):
        print(f"[nnlite] deriving {label} from {job['fp32_path']}", file=sys.stderr)
        result: dict[str, object]
        try:
            result = dict(derive(job))
        except errors as err:
            assert isinstance(err, Staged)  # `errors` are staged errors (see above)
            print(f"[nnlite] {err.stage} failed: {first_line(str(err.exc))}", file=sys.stderr)
            traceback.print_exception(err.exc)
            result = dict(error_fields(err.stage, err.exc))
        except MemoryError as exc:
            result = dict(error_fields("out-of-memory", exc))
    result["seconds"] = time.perf_counter() - t0
    return result
