"""Validation of a converted .tflite against PyTorch eager, run in the conversion worker.

Every output of the .tflite must match PyTorch's within VALIDATE_RTOL (relative to the largest
reference value) on each sample; a model with several inputs (image + tokens) is fed through the
interpreter's signature runner by input name.
"""

from __future__ import annotations

import re
from typing import Any

# Relative agreement required between the .tflite and PyTorch eager outputs.
VALIDATE_RTOL = 1e-3


def flat_outputs(out) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flat_outputs(o)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flat_outputs(v)]
    return []


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


def validate(path: str, samples: list[list], references: list[list]) -> dict[str, Any]:
    """samples: per check, the numpy inputs as fed to the .tflite; references: PyTorch's outputs."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=1)
    interpreter.allocate_tensors()
    inputs = interpreter.get_input_details()
    run = _run_single if len(samples[0]) == 1 else _run_signature
    max_abs, scale = 0.0, 1.0
    for sample, reference in zip(samples, references):
        outputs = run(interpreter, sample)
        if len(outputs) != len(reference):
            raise ValueError(f"the .tflite has {len(outputs)} outputs, PyTorch gives {len(reference)}")
        for got, want in zip(outputs, reference):
            want = want.detach().numpy()
            if got.shape != want.shape:
                raise ValueError(f"output shape {list(got.shape)} differs from PyTorch {list(want.shape)}")
            if want.size:
                max_abs = max(max_abs, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
                scale = max(scale, float(np.max(np.abs(want))))
    if not np.isfinite(max_abs) or max_abs > VALIDATE_RTOL * scale:
        raise ValueError(f"output differs from PyTorch: max abs diff {max_abs:.3g} (tolerance {VALIDATE_RTOL * scale:.3g})")
    return {
        "max_abs_diff": max_abs,
        "tflite_input_shape": [int(d) for d in inputs[0]["shape"]],
        "tflite_input_dtype": inputs[0]["dtype"].__name__,
        "output_shapes": [[int(d) for d in o["shape"]] for o in interpreter.get_output_details()],
        "validation": strength(references, scale),
    }


def strength(references: list[list], scale: float) -> dict[str, Any]:
    """How much the check above can tell: nothing about the input side when the output ignores it.

    With random weights some models saturate, and their output is the same for any input; a
    .tflite that scrambled its input (a wrong layout) would then pass the comparison unseen.
    """
    if len(references) < 2:
        return {"inputs": len(references), "strength": "single-input", "input_sensitivity": None}
    pairs = zip(references[0], references[1])
    moved = max((float((a.double() - b.double()).abs().max()) for a, b in pairs if a.numel()), default=0.0)
    sensitivity = moved / scale
    return {"inputs": len(references), "input_sensitivity": sensitivity,
            "strength": "strong" if sensitivity > VALIDATE_RTOL else "weak: the output does not depend on the input"}
