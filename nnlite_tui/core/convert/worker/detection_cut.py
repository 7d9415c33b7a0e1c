"""Detection without post-processing: the network up to its raw head outputs, when the whole model cannot
be one static graph.

torchvision-style detectors (SSD/SSDLite, RetinaNet, FCOS, Faster R-CNN, LEMUR's copies of them, and
any model built the same way) run in eval: [transform] -> backbone (+FPN) -> head -> post-processing
(box decoding, score filtering, top-k, NMS; two-stage: proposals by NMS, then RoIAlign and the box
head). The post-processing is data-dependent (a variable number of boxes) and needs torchvision's
compiled nms / roi_align; what a phone runs on its accelerator is the part before it. The cut is the
same model object (same weights, same code) stopped there:

- one-stage (`.backbone` and `.head`): outputs = head(features);
- two-stage (`.backbone` and `.rpn`, e.g. Faster R-CNN): outputs = rpn.head(features), objectness and
  box deltas per FPN level; the RoI stage runs on proposals chosen by NMS and is left out with it.

`.transform` (normalise, resize, batch: static for a fixed input size) runs first when the model has
one. It is tried only after the whole model failed for a reason the cut removes (torchvision's
compiled operators, or a data-dependent graph); a detector that exports whole stays whole. The worker
validates the cut's artifact against PyTorch running the same cut, and the record says what was left
out (`measured_graph`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from nnlite_tui.core.convert.record import ConversionRecord, MeasuredGraph

if TYPE_CHECKING:
    from nnlite_tui.core.convert.worker.model import Prepared

CUT_CAUSES = ("torchvision-ops", "data-dependent")  # whole-model failures that post-processing explains
ONE_STAGE_EXCLUDED = ["box decoding", "score threshold", "top-k", "nms"]
TWO_STAGE_EXCLUDED = ["nms", "roi_align", "the box head on NMS-selected proposals"]


def structure(model) -> str | None:
    """"one-stage", "two-stage" or None: what cut() can make of the model."""
    import torch

    def module(name: str) -> bool:
        return isinstance(getattr(model, name, None), torch.nn.Module)

    if not module("backbone"):
        return None
    if module("head"):
        return "one-stage"
    if module("rpn") and isinstance(getattr(model.rpn, "head", None), torch.nn.Module):
        return "two-stage"
    return None


def _flat(out) -> tuple:
    import torch

    if isinstance(out, torch.Tensor):
        return (out,)
    if isinstance(out, dict):  # torchvision heads name their outputs: a fixed order
        return tuple(t for k in sorted(out) for t in _flat(out[k]))
    if isinstance(out, (list, tuple)):
        return tuple(t for o in out for t in _flat(o))
    return ()


def cut(model):
    """The model up to its head's raw outputs (an eval-mode module), or None without that structure."""
    import torch

    kind = structure(model)
    if kind is None:
        return None
    transform = getattr(model, "transform", None)
    head = model.rpn.head if kind == "two-stage" else model.head

    class BackboneHead(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.transform, self.backbone, self.head = transform, model.backbone, head

        def forward(self, images):
            if self.transform is not None:
                images = self.transform(list(images.unbind(0)))[0].tensors
            features = self.backbone(images)
            features = [features] if isinstance(features, torch.Tensor) else (
                list(features.values()) if isinstance(features, dict) else list(features))
            return _flat(self.head(features))

    BackboneHead.__module__, BackboneHead.__qualname__ = "nnlite", "BackboneHead"  # short tensor names
    return BackboneHead().eval()


def record(model, whole_error: str) -> MeasuredGraph:
    """`measured_graph`: what the artifact is of the model, and why not the whole of it."""
    kind = structure(model)
    head = "rpn.head" if kind == "two-stage" else "head"
    parts = (["transform"] if getattr(model, "transform", None) is not None else []) + ["backbone", head]
    return {"part": "backbone+head", "kind": kind, "modules": parts, "outputs": f"{head}(features)",
            "excluded": ["postprocess", *(TWO_STAGE_EXCLUDED if kind == "two-stage" else ONE_STAGE_EXCLUDED)],
            "postprocessing": "excluded (" + ", ".join(TWO_STAGE_EXCLUDED if kind == "two-stage"
                                                         else ONE_STAGE_EXCLUDED) + ")",
            "whole_model_error": whole_error,
            "validated_against": "PyTorch running the same cut"}


def _post_processing_failure(fields: ConversionRecord) -> bool:
    """A failure the cut removes: torchvision's compiled operators missing, a data-dependent graph, or no
    lowering for a torchvision operator (nms, roi_align)."""
    if fields.get("cause") in CUT_CAUSES:
        return True
    return fields.get("cause") == "lowering-missing" and "torchvision" in str(fields.get("error_message"))


def convert_cut(whole: Exception, spec, out_path: str, runtime, nhwc: bool, max_params: int | None, clock,
                weights: str = "dense", strict_weights: bool = False) -> tuple[Prepared, ConversionRecord]:
    """(Prepared, the runtime's fields with `measured_graph`) for the model's backbone+head cut, after the
    whole model failed with `whole` (a StageError); `whole` is raised again when the cut does not apply
    or fails too (the cut's own failure goes to the job's log)."""
    import sys

    from nnlite_tui.core.convert.worker.errors import StageError, explained, first_line
    from nnlite_tui.core.convert.worker.model import prepare

    frames = runtime.converter_frames
    if not isinstance(whole, StageError) or not _post_processing_failure(explained(whole, spec, frames)):
        raise whole
    noted: list[MeasuredGraph] = []

    def backbone_head(model):
        wrapped = cut(model)
        if wrapped is None:
            raise LookupError("no backbone and head to cut the model at")
        noted.append(record(model, f"{whole.stage}: {explained(whole, spec, frames).get('error_message')}"))
        return wrapped

    try:
        prepared = prepare(spec, nhwc, max_params, clock, weights, strict_weights, shape=backbone_head)
        # the record's fields as the runtime's export gives them (the runner checks them: messages.py)
        fields = cast(ConversionRecord, runtime.export(prepared, out_path, clock))
    except StageError as err:
        if not isinstance(err.exc, LookupError):
            print(f"[nnlite] the backbone+head cut failed too: {err.stage}: {first_line(str(err.exc))}",
                  file=sys.stderr, flush=True)
        raise whole from err
    graph = noted[0]
    print(f"[nnlite] whole model failed ({graph['whole_model_error'][:160]}); measured its backbone+head cut, "
          f"{graph['postprocessing']}", file=sys.stderr, flush=True)
    return prepared, {**fields, "measured_graph": graph}


def as_recorded(built: tuple, measured_graph: MeasuredGraph | None) -> tuple:
    """(model, example) from build_model, cut again when the fp32 conversion measured the cut (a derived
    precision quantizes and checks the same graph its fp32 artifact is of)."""
    model, example = built
    if not measured_graph:
        return built
    wrapped = cut(model)
    if wrapped is None:  # the same source built the structure for fp32; not finding it now is a bug
        raise LookupError("the fp32 conversion measured a backbone+head cut this model no longer has")
    return wrapped, example
