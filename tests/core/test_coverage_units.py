"""Torch-free parts of LEMUR coverage: trial choice on the fixture tree, failure causes, memory cap."""

from __future__ import annotations

from nnlite_tui.core.sources import lemur
from nnlite_tui.core.convert.causes import classify, lowering_op
from nnlite_tui.core.convert.memory_cap import CEILING_MB, FLOOR_MB, default_mem_cap_mb, over_cap_message
from nnlite_tui.core.sources.discover import discover
from tests.conftest import FIXTURES

TREE = FIXTURES / "coverage"


def _specs():
    return {s.name: s for s in discover([str(TREE)])}


def test_trials_at_chance_do_not_set_the_input_size():
    s = _specs()["cov-alexnet-small"]
    assert s.in_shape == (1, 3, 64, 64) and s.transform == "norm_64" and s.alt_in_shapes == ()
    choice = lemur.LemurTree(TREE).choose("cov-alexnet-small")
    assert choice.trial.values["uid"] == "ax64" and choice.candidates == 4


def test_most_common_successful_size_with_larger_ones_kept_for_a_retry():
    s = _specs()["cov-alexnet-retry"]
    assert s.in_shape == (1, 3, 32, 32) and s.alt_in_shapes == ((1, 3, 64, 64),)
    assert s.prm["lr"] == 0.01 and "rt32b" in s.origin  # the better of the two 32x32 trials


def test_task_shapes_for_captioning_and_text():
    specs = _specs()
    cap, lm = specs["cov-captioning"], specs["cov-text-lm"]
    assert (cap.task, cap.in_shape, cap.out_shape) == ("img-captioning", (1, 3, 64, 64), (1000,))
    assert (lm.task, lm.in_shape, lm.out_shape) == ("txt-generation", (1, 32), (1000,))
    seg = specs["cov-segmentation"]
    assert (seg.task, seg.in_shape, seg.out_shape) == ("img-segmentation", (1, 3, 64, 64), (91,))


def _failed(stage, message, error_type="RuntimeError"):
    return {"ok": False, "stage": stage, "error_type": error_type, "error_message": message}


def test_failure_causes():
    assert classify({"ok": True}) == "ok"
    assert classify(_failed("lower", "Lowering not found: aten.adaptive_max_pool2d.default")) == "lowering-missing"
    assert lowering_op("Lowering not found: aten._trilinear.default") == "aten._trilinear"
    assert classify(_failed("export", "Given input size: (32x1x1). Calculated output size: (32x0x0). "
                                      "Output size is too small")) == "output-too-small"
    assert classify(_failed("export", "Could not guard on data-dependent expression Eq(u0, 1)")) == "data-dependent"
    assert classify(_failed("validate", "Didn't find op for builtin opcode 'STABLEHLO_SORT'",
                            "ValueError")) == "runtime-op-missing"
    assert classify(_failed("out-of-memory", "worker used 5000 MB")) == "out-of-memory"
    assert classify(_failed("import", "No module named 'timm'", "ModuleNotFoundError")) == "import-error"


def test_memory_cap_follows_available_memory_within_floor_and_ceiling():
    gib = 2**30
    assert default_mem_cap_mb(22 * gib) == 11 * 1024
    assert default_mem_cap_mb(1 * gib) == FLOOR_MB
    assert default_mem_cap_mb(256 * gib) == CEILING_MB
    message = over_cap_message(5123.4, 4096)
    assert "used 5123 MB" in message and "cap of 4096 MB" in message and "--mem-cap-mb" in message
