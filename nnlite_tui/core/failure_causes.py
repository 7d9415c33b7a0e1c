"""Why a conversion failed, as a short cause name: for reports grouped by cause and for the coverage bench.

Works on the worker's result dict alone (stage, error_type, error_message), so it needs no torch.
"""

from __future__ import annotations

import re
from typing import Any

SAMPLES = "the model samples random numbers at inference"
_SAMPLING_OPS = re.compile(r"aten\.(normal|uniform|bernoulli|rand|randn|randint|multinomial|poisson|exponential)")
_LOWERING = re.compile(r"Lowering not found: (\S+)")

# (cause, stage or None for any, pattern on error_type + message)
_RULES: list[tuple[str, str | None, re.Pattern]] = [
    ("torchvision-ops", None, re.compile(r"torchvision's compiled operators")),
    ("downloads-weights", None, re.compile(r"downloads weights at construction")),
    ("samples-at-inference", None, re.compile(re.escape(SAMPLES))),
    ("output-too-small", None, re.compile(r"Output size is too small|Kernel size can't be greater|"
                                          r"input image .* smaller than kernel|Padding size should be less")),
    ("data-dependent", None, re.compile(r"data-dependent|GuardOnDataDependent|ConcretizationTypeError|"
                                        r"NonConcreteBooleanIndexError|must be statically specified")),
    ("runtime-op-missing", "validate", re.compile(r"Didn't find op for builtin opcode")),
    ("output-mismatch", "validate", re.compile(r"output differs from PyTorch|output shape .* differs")),
    ("lowering-missing", None, re.compile(r"Lowering not found")),
    ("unsupported-input", None, re.compile(r"forward does not take")),
]


def classify(result: dict[str, Any]) -> str:
    """"ok" for a success, else a cause name (falls back to the failing stage)."""
    if result.get("ok"):
        return "ok"
    stage = str(result.get("stage") or "unknown")
    if stage in ("out-of-memory", "timeout", "crash", "filtered", "cancelled"):
        return stage
    text = f"{result.get('error_type', '')}: {result.get('error_message', '')}"
    for cause, only_stage, pattern in _RULES:
        if (only_stage is None or only_stage == stage) and pattern.search(text):
            return cause
    return f"{stage}-error"


def lowering_op(message: str) -> str | None:
    """The aten op named by a "Lowering not found" message, without its overload."""
    found = _LOWERING.search(message or "")
    return found.group(1).rsplit(".", 1)[0] if found else None


def sampling_op(message: str) -> str | None:
    found = _SAMPLING_OPS.search(message or "")
    return found.group(0) if found else None
