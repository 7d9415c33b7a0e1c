"""Detectors whose post-processing cannot be one static graph are measured up to their raw head outputs
(convert/worker/detection_cut.py), and the record says so; a detector that exports whole stays whole."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from nnlite_tui.core.convert.worker import detection_cut  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

DETECTOR = FIXTURES / "detection" / "tiny_detector.py"


def _tiny():
    from nnlite_tui.core.convert.worker import torchvision_compat

    torchvision_compat.prepare()  # the fixture imports torchvision (its compiled operators may be absent)
    spec = importlib.util.spec_from_file_location("tiny_detector", DETECTOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cut_is_the_backbone_and_head_of_the_same_model():
    model, x = _tiny().make()
    raw = detection_cut.cut(model)
    want = model.head([model.backbone(x)])  # by hand: the head's dict in key order
    got = raw(x)
    assert [t.shape for t in got] == [(1, 128, 4), (1, 128, 3)]  # 32 -> 8x8 cells, 2 anchors each
    assert torch.equal(got[0], want["bbox_regression"]) and torch.equal(got[1], want["cls_logits"])
    assert detection_cut.record(model, "export: x")["excluded"] == ["postprocess", "box decoding",
                                                                    "score threshold", "top-k", "nms"]


def test_a_model_without_backbone_and_head_has_no_cut():
    plain = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3))
    assert detection_cut.structure(plain) is None and detection_cut.cut(plain) is None


class _Whole(torch.nn.Module):
    """Backbone and head, no post-processing: exports whole."""

    def __init__(self):
        super().__init__()
        self.backbone, self.head = torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.Conv2d(4, 6, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def make_whole():
    torch.manual_seed(0)
    return _Whole().eval(), torch.randn(1, 3, 16, 16)


def _convert(source: str, tmp_path, cut: bool = True):
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover

    spec = discover([source])[0]
    with pytest.MonkeyPatch.context() as mp:
        if not cut:
            def whole_only(whole, *args):
                raise whole
            mp.setattr(detection_cut, "convert_cut", whole_only)
        return convert_one(spec, str(tmp_path / "det.tflite"), get_runtime("litert"))


@pytest.mark.slow
def test_a_detector_with_nms_is_measured_without_its_post_processing_and_says_so(tmp_path):
    pytest.importorskip("litert_torch")
    from nnlite_tui.core.convert.worker.errors import StageError

    _tiny()
    with pytest.raises(StageError) as whole:  # the whole model: nms and a variable number of boxes
        _convert(f"{DETECTOR}:make", tmp_path, cut=False)
    assert whole.value.stage == "export"
    result = _convert(f"{DETECTOR}:make", tmp_path)
    assert result["ok"] and result["validation"]["strength"] == "strong" and result["max_abs_diff"] < 1e-5
    assert result["output_shapes"] == [[1, 128, 4], [1, 128, 3]]
    graph = result["measured_graph"]
    assert graph["part"] == "backbone+head" and graph["modules"] == ["backbone", "head"]
    assert {"postprocess", "nms"} <= set(graph["excluded"])
    assert graph["whole_model_error"].startswith("export: ")


@pytest.mark.slow
def test_a_detector_that_exports_whole_stays_whole(tmp_path):
    pytest.importorskip("litert_torch")
    result = _convert(f"{__file__}:make_whole", tmp_path)
    assert result["ok"] and "measured_graph" not in result
    assert result["output_shapes"] == [[1, 6, 7, 7]]


def test_a_two_stage_detector_is_cut_after_its_region_proposal_head():
    class Rpn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.head = _RpnHead()

    class TwoStage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = torch.nn.Conv2d(3, 4, 3, stride=2)
            self.rpn = Rpn()
            self.roi_heads = torch.nn.Identity()  # runs on NMS-selected proposals: left out

    model, x = TwoStage().eval(), torch.randn(1, 3, 9, 9)
    f, head = model.backbone(x), model.rpn.head
    got = detection_cut.cut(model)(x)
    assert torch.equal(got[0], head.objectness(f)) and torch.equal(got[1], head.deltas(f))
    noted = detection_cut.record(model, "export: x")
    assert noted["kind"] == "two-stage" and noted["outputs"] == "rpn.head(features)"
    assert {"nms", "roi_align"} <= set(noted["excluded"])


class _RpnHead(torch.nn.Module):
    """torchvision's RPNHead shape: a list of feature maps in, (objectness per level, deltas per level) out."""

    def __init__(self):
        super().__init__()
        self.objectness, self.deltas = torch.nn.Conv2d(4, 3, 1), torch.nn.Conv2d(4, 12, 1)

    def forward(self, features):
        return [self.objectness(f) for f in features], [self.deltas(f) for f in features]
