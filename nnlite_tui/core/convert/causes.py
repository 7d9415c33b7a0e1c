"""Why a conversion failed, as a short cause name: for reports grouped by cause and for the coverage bench.

Works on the worker's result dict alone (stage, error_type, error_message), so it needs no torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

SAMPLES = "the model samples random numbers at inference"
# What the sandbox (convert/sandbox) tells a model it may not do; the verdict's messages end with these.
NO_NETWORK = "model code runs without network"
WRITE_SCRATCH = "model code may write only in its scratch directory"
VIEW = "model code sees only the system, the Python environment and the model sources"
LEFT_PROCESSES = "processes a model starts must end with it"
PROCESS_CAP = "processes and threads at once; the sandbox allows"
SCRATCH_FULL = "model code may write only this much in its scratch"
_SAMPLING_OPS = re.compile(r"aten\.(normal|uniform|bernoulli|rand|randn|randint|multinomial|poisson|exponential)")
_LOWERING = re.compile(r"Lowering not found: (\S+)|Operator torch\._ops\.(\S+) is not in Core ATen opset")

# (cause, stage or None for any, pattern on error_type + message)
_RULES: list[tuple[str, str | None, re.Pattern]] = [
    ("torchvision-ops", None, re.compile(r"torchvision's compiled operators")),
    ("lemur-package", "import", re.compile(r"imports LEMUR's package")),
    ("downloads-weights", None, re.compile(r"downloads weights at construction")),
    ("network", None, re.compile(re.escape(NO_NETWORK))),
    ("writes-outside-scratch", None, re.compile(re.escape(WRITE_SCRATCH))),
    ("reads-outside-view", None, re.compile(re.escape(VIEW))),
    ("leaves-processes", None, re.compile(re.escape(LEFT_PROCESSES))),
    ("process-cap", None, re.compile(re.escape(PROCESS_CAP))),
    ("scratch-full", None, re.compile(re.escape(SCRATCH_FULL))),
    ("samples-at-inference", None, re.compile(re.escape(SAMPLES))),
    ("less-work", "validate", re.compile(r"LessWork: the converted graph does")),
    ("output-too-small", None, re.compile(r"Output size is too small|Kernel size can't be greater|"
                                          r"input image .* smaller than kernel|Padding size should be less")),
    ("data-dependent", None, re.compile(r"data-dependent|GuardOnDataDependent|ConcretizationTypeError|"
                                        r"NonConcreteBooleanIndexError|must be statically specified")),
    ("runtime-op-missing", "validate", re.compile(r"Didn't find op for builtin opcode")),
    ("output-mismatch", "validate", re.compile(r"output differs from PyTorch|output shape .* differs")),
    # LiteRT: no lowering for the op; ExecuTorch: the op is outside the Core ATen opset its edge dialect takes.
    ("lowering-missing", None, re.compile(r"Lowering not found|is not in Core ATen opset")),
    ("unsupported-input", None, re.compile(r"forward does not take")),
]


def classify(result: Mapping[str, object]) -> str:
    """"ok" for a success, else a cause name (falls back to the failing stage)."""
    if result.get("ok"):
        return "ok"
    stage = str(result.get("stage") or "unknown")
    if stage in ("out-of-memory", "timeout", "crash", "filtered", "cancelled", "unsupported"):
        return stage
    text = f"{result.get('error_type', '')}: {result.get('error_message', '')}"
    for cause, only_stage, pattern in _RULES:
        if (only_stage is None or only_stage == stage) and pattern.search(text):
            return cause
    return f"{stage}-error"


def lowering_op(message: str) -> str | None:
    """The aten op named by a "Lowering not found" message, without its overload."""
    found = _LOWERING.search(message or "")
    return (found.group(1) or found.group(2)).rsplit(".", 1)[0] if found else None


def sampling_op(message: str) -> str | None:
    found = _SAMPLING_OPS.search(message or "")
    return found.group(0) if found else None
