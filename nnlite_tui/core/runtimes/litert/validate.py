"""Validation of a converted .tflite against PyTorch eager, run in the conversion worker.

The .tflite runs in LiteRT's interpreter on each check input; its outputs are compared with
PyTorch's by the rules every runtime shares (convert/worker/validation.py). A model with several
inputs (image + tokens) is fed through the interpreter's signature runner by input name.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from nnlite_tui.core.convert.output_check import checked_runs
from nnlite_tui.core.convert.worker.distribution import Spread, compare
from nnlite_tui.core.convert.worker.validation import check_outputs


class ArtifactShapes(TypedDict):
    """The .tflite's input and outputs as its interpreter describes them (conversion result fields)."""

    artifact_input_shape: list[int]
    artifact_input_dtype: str
    output_shapes: list[list[int]]


def _run_single(interpreter, sample: list) -> list:
    inputs = interpreter.get_input_details()
    interpreter.set_tensor(inputs[0]["index"], sample[0].astype(inputs[0]["dtype"]))
    interpreter.invoke()
    return [interpreter.get_tensor(o["index"]) for o in interpreter.get_output_details()]


def _by_number(name: str) -> tuple[int, str]:
    found = re.search(r"(\d+)$", name)
    return (int(found.group(1)) if found else 0, name)


def _run_signature(interpreter, sample: list) -> list:
    runner = interpreter.get_signature_runner()
    details = runner.get_input_details()
    names = sorted(details, key=_by_number)
    if len(names) != len(sample):
        raise ValueError(f"the .tflite has {len(names)} inputs, the model takes {len(sample)}")
    feed = {name: value.astype(details[name]["dtype"]) for name, value in zip(names, sample)}
    out = runner(**feed)
    return [out[k] for k in sorted(out, key=_by_number)]


def _interpreter(path: str):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=1)
    interpreter.allocate_tensors()
    return interpreter


def _described(interpreter: Any) -> ArtifactShapes:
    inputs = interpreter.get_input_details()
    return {
        "artifact_input_shape": [int(d) for d in inputs[0]["shape"]],
        "artifact_input_dtype": inputs[0]["dtype"].__name__,
        "output_shapes": [[int(d) for d in o["shape"]] for o in interpreter.get_output_details()],
    }


def run_all(path: str, samples: list[list]) -> list[list]:
    """The .tflite's outputs (numpy) for each check's inputs (numpy, as the .tflite takes them)."""
    interpreter = _interpreter(path)
    run = _run_single if len(samples[0]) == 1 else _run_signature
    return [run(interpreter, sample) for sample in samples]


def validate(path: str, samples: list[list], references: list[list]) -> dict[str, object]:
    """samples: per check, the numpy inputs as fed to the .tflite; references: PyTorch's outputs. The
    validation's result fields (validation.check_outputs': max_abs_diff, validation) and the shapes."""
    interpreter = _interpreter(path)
    run = _run_single if len(samples[0]) == 1 else _run_signature
    checked = check_outputs((run(interpreter, sample) for sample in samples), references)
    return {**checked, **_described(interpreter)}


def validate_spread(path: str, sample: list, reference: Spread) -> dict[str, object]:
    """The .tflite's outputs over as many runs on `sample` as PyTorch's `reference` spread, tested
    against it (distribution.compare: DistributionMismatch when they differ), and the artifact's shapes."""
    interpreter = _interpreter(path)
    run = _run_single if len(sample) == 1 else _run_signature
    spread = Spread()
    for _ in range(reference.runs):
        outputs = run(interpreter, sample)
        checked_runs([outputs], [reference.means])  # no output, NaN or Inf: OutputProblem says which
        spread.add(outputs)
    return {"figures": compare(spread, reference), **_described(interpreter)}
