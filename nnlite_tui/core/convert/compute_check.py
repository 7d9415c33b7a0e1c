"""The compute check: does the converted graph do the work PyTorch's eval forward does?

Both sides count multiply-accumulate FLOPs only (a multiply-add is 2): PyTorch's from its own
FlopCounterMode formulas (worker/flop_count.py), the artifact's from the runtime's graph reader (for
LiteRT: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, CONV_3D, FULLY_CONNECTED, BATCH_MATMUL; for
ExecuTorch: XNNPACK's graph in each partition and the kernels left outside, runtimes/executorch/work.py).

ratio = artifact / PyTorch. Measured on 130+ correctly converted models (sample models, LEMUR,
the torchvision zoo, captioning and detection cuts) the ratio is 0.894 at the lowest (cloned layers
as built) and 1.0000 with dense weights; a converter that folded zero-initialised work away gives
0.076 (zero-init-residual ResNet-18) or 0.086 (ReZero, zero layer scale). Below THRESHOLD the
artifact is not a report of the model. Above 1 / THRESHOLD it is flagged "more-work", not failed:
the artifact computes everything the model does (PyTorch's side may have missed an op).

Pure Python: the orchestrator, the report and tests read it without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

THRESHOLD = 0.8


class ComputeCheckRecord(TypedDict, total=False):
    """A ComputeCheck as a conversion record holds it: its fields, those that are None left out."""
    model_flops: int
    artifact_flops: int
    ratio: float
    verdict: str
    threshold: float
    cause: str
    model_by_op: dict[str, int]
    artifact_by_op: dict[str, int]
    set_apart: dict[str, int]
    unmeasured_because: str
    recounted: str  # set by the runner that counted the artifact's side again (compute_recheck.py)


@dataclass(frozen=True)
class ComputeCheck:
    model_flops: int | None  # PyTorch's MAC FLOPs; None when they could not be counted
    artifact_flops: int | None  # the converted graph's MAC FLOPs; None when its graph could not be read
    ratio: float | None  # artifact / model; None unless both were counted and the model's is > 0
    verdict: str  # "ok" | "less-work" | "more-work" | "unmeasured"
    threshold: float = THRESHOLD
    cause: str | None = None
    model_by_op: dict[str, int] = field(default_factory=dict)
    artifact_by_op: dict[str, int] = field(default_factory=dict)
    set_apart: dict[str, int] = field(default_factory=dict)  # PyTorch FLOPs the converter may fold
    unmeasured_because: str | None = None

    def to_dict(self) -> ComputeCheckRecord:
        record = ComputeCheckRecord()
        if self.model_flops is not None:
            record["model_flops"] = self.model_flops
        if self.artifact_flops is not None:
            record["artifact_flops"] = self.artifact_flops
        if self.ratio is not None:
            record["ratio"] = self.ratio
        record["verdict"], record["threshold"] = self.verdict, self.threshold
        if self.cause is not None:
            record["cause"] = self.cause
        record["model_by_op"], record["artifact_by_op"] = dict(self.model_by_op), dict(self.artifact_by_op)
        record["set_apart"] = dict(self.set_apart)
        if self.unmeasured_because is not None:
            record["unmeasured_because"] = self.unmeasured_because
        return record


class _Compared(TypedDict):
    """What every verdict records besides its figures: the threshold and the counts per op."""
    threshold: float
    model_by_op: dict[str, int]
    artifact_by_op: dict[str, int]
    set_apart: dict[str, int]


class LessWork(RuntimeError):
    """The converted graph does markedly less work than the model: it measures another graph."""

    def __init__(self, check: ComputeCheck, weights: dict[str, object] | None = None):
        self.check = check
        self.weights = weights  # the weights record (dense_weights.WeightsRecord.to_dict()), for the result
        super().__init__(check.cause)


def _gflop(flops: int) -> str:
    return f"{flops / 1e9:.4g} GFLOP"


def judge(model_flops: int | None, artifact_flops: int | None, *, threshold: float = THRESHOLD,
          model_by_op: dict[str, int] | None = None, artifact_by_op: dict[str, int] | None = None,
          set_apart: dict[str, int] | None = None, unmeasured_because: str | None = None,
          weights_note: str | None = None) -> ComputeCheck:
    """The verdict on two MAC FLOP counts; `weights_note` says what was done to the weights (cause text)."""
    extra: _Compared = {"threshold": threshold, "model_by_op": dict(model_by_op or {}),
                        "artifact_by_op": dict(artifact_by_op or {}), "set_apart": dict(set_apart or {})}
    if model_flops is None or artifact_flops is None:
        why = unmeasured_because or ("PyTorch's work could not be counted" if model_flops is None
                                     else "the converted graph could not be read")
        return ComputeCheck(model_flops, artifact_flops, None, "unmeasured", unmeasured_because=why, **extra)
    if model_flops <= 0:
        return ComputeCheck(model_flops, artifact_flops, None, "unmeasured",
                            unmeasured_because="the model's forward does no multiply-accumulate work", **extra)
    ratio = artifact_flops / model_flops
    figures = f"{_gflop(artifact_flops)} of PyTorch's {_gflop(model_flops)}, multiply-accumulate"
    if ratio < threshold:
        cause = (f"the converted graph does {ratio:.1%} of PyTorch's work ({figures}; threshold {threshold:.0%}): "
                 "the converter folded work away" + (f"; {weights_note}" if weights_note else ""))
        return ComputeCheck(model_flops, artifact_flops, ratio, "less-work", cause=cause, **extra)
    if ratio > 1.0 / threshold:
        cause = f"the converted graph does {ratio:.1%} of PyTorch's counted work ({figures})"
        return ComputeCheck(model_flops, artifact_flops, ratio, "more-work", cause=cause, **extra)
    return ComputeCheck(model_flops, artifact_flops, ratio, "ok", **extra)
