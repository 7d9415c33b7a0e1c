"""Validation of a .pte against PyTorch eager in the conversion worker, and running a .pte on inputs.

The program runs in ExecuTorch's runtime (the XNNPACK delegate and the portable kernels the wheel
ships) on each check input; its outputs are compared with PyTorch's by the rules every runtime shares
(convert/worker/validation.py). Method.execute sets the inputs on every call: the memory planner lets
later activations reuse an input's buffer, so a program must never run twice on inputs set once.
"""

from __future__ import annotations

from typing import TypedDict

from nnlite_tui.core.convert.output_check import checked_runs
from nnlite_tui.core.convert.worker.distribution import Spread, compare
from nnlite_tui.core.convert.worker.validation import check_outputs


class ArtifactShapes(TypedDict):
    """The program's inputs and outputs as run (conversion result fields)."""

    artifact_input_shape: list[int]
    artifact_input_dtype: str
    input_shapes: list[list[int]]
    input_dtypes: list[str]
    output_shapes: list[list[int]]


def load_method(path: str):
    from executorch.runtime import Runtime

    return Runtime.get().load_program(path).load_method("forward")


def run_all(path: str, samples: list[tuple]) -> list[list]:
    """The .pte's outputs (torch tensors) for each input tuple (torch tensors as the program takes them)."""
    method = load_method(path)
    return [list(method.execute(list(sample))) for sample in samples]


def _described(first: tuple, outputs: list) -> ArtifactShapes:
    return {
        "artifact_input_shape": [int(d) for d in first[0].shape],
        "artifact_input_dtype": str(first[0].dtype).replace("torch.", ""),
        "input_shapes": [[int(d) for d in a.shape] for a in first],
        "input_dtypes": [str(a.dtype).replace("torch.", "") for a in first],
        "output_shapes": [[int(d) for d in o.shape] for o in outputs],
    }


def validate_spread(path: str, sample: tuple, reference: Spread) -> dict[str, object]:
    """The .pte's outputs over as many runs on `sample` as PyTorch's `reference` spread, tested against
    it (distribution.compare: DistributionMismatch when they differ), and the program's shapes."""
    method = load_method(path)
    spread = Spread()
    outputs: list = []
    for _ in range(reference.runs):
        outputs = [o.detach().numpy() for o in method.execute(list(sample))]  # inputs set on every call
        checked_runs([outputs], [reference.means])  # no output, NaN or Inf: OutputProblem says which
        spread.add(outputs)
    return {"figures": compare(spread, reference), **_described(sample, outputs)}


def validate(path: str, samples: list[tuple], references: list[list]) -> dict[str, object]:
    """samples: per check, the torch inputs as fed to the .pte; references: PyTorch's outputs."""
    outputs = run_all(path, samples)
    checked = check_outputs(([o.detach().numpy() for o in run] for run in outputs), references)
    return {**checked, **_described(samples[0], outputs[0])}
