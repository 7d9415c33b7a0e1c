"""The compute check: its verdict on two counts, and PyTorch's count against FLOPs worked out by hand.

No conversion here (tests/core/test_fidelity_convert.py converts for real); a multiply-add is 2 FLOPs.
"""

from __future__ import annotations

import importlib.util

import pytest

from nnlite_tui.core.convert.compute_check import THRESHOLD, judge
from nnlite_tui.core.report.document import build_report
from nnlite_tui.core.outcomes import ConversionResult
from nnlite_tui.core.spec import ModelSpec
from tests.conftest import FIXTURES


def _fixture(name: str):
    spec = importlib.util.spec_from_file_location(f"fidelity_{name}", FIXTURES / "fidelity" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_graph_that_lost_work_is_less_work_and_the_cause_names_both_figures():
    check = judge(3_628_000_000, 276_000_000, weights_note="8 tensors were re-drawn")
    assert check.verdict == "less-work"
    assert check.ratio == pytest.approx(276 / 3628)
    assert "7.6% of PyTorch's work" in check.cause
    assert "0.276 GFLOP" in check.cause and "3.628 GFLOP" in check.cause and "8 tensors were re-drawn" in check.cause


def test_the_threshold_is_the_boundary():
    assert judge(1000, int(1000 * THRESHOLD)).verdict == "ok"
    assert judge(1000, int(1000 * THRESHOLD) - 1).verdict == "less-work"
    more = judge(1000, 2000)
    assert more.verdict == "more-work" and more.ratio == 2.0


def test_an_uncounted_side_is_absent_never_zero():
    unknown = judge(None, 5000, unmeasured_because="RuntimeError: the forward raised")
    assert unknown.verdict == "unmeasured" and unknown.ratio is None
    record = unknown.to_dict()
    assert "model_flops" not in record and "ratio" not in record
    assert record["unmeasured_because"] == "RuntimeError: the forward raised"
    nothing = judge(0, 0)  # measured: no multiply-accumulate at all; the ratio is then undefined
    assert nothing.verdict == "unmeasured" and nothing.ratio is None and nothing.model_flops == 0


def test_the_report_carries_both_counts_and_the_verdict():
    spec = ModelSpec(name="m", kind="factory", file=None, sha256="0" * 64, module="m", factory="make")
    check = judge(2000, 2000).to_dict()
    conversion = ConversionResult.from_converter({"model": "m", "ok": True, "model_flops": 2000, "flops": 2000,
                                                  "compute_check": check, "weights": {"policy": "dense", "redrawn": 0}})
    report = build_report(spec=spec, conversion=conversion, bench=None, device={}, settings={}, run_id="r")
    assert report["model"]["flops"] == 2000 and report["conversion"]["flops"] == 2000
    assert report["conversion"]["compute_check"]["ratio"] == 1.0
    assert report["conversion"]["weights"] == {"policy": "dense", "redrawn": 0}


torch = pytest.importorskip("torch")
nn = torch.nn

from nnlite_tui.core.convert.worker.flop_count import count_model_work  # noqa: E402


def test_convolutions_and_linear_count_as_worked_out_by_hand():
    fixture = _fixture("zero_gate")
    model, x = fixture.make()
    work = count_model_work(model, (x,))
    # as built, PyTorch still computes the gated branch (then multiplies it by 0)
    assert work.flops == fixture.STEM + 2 * fixture.BRANCH_CONV + fixture.HEAD
    assert work.by_op == {"aten.convolution": fixture.STEM + 2 * fixture.BRANCH_CONV, "aten.addmm": fixture.HEAD}


def test_the_encoder_layer_fast_path_is_counted_as_its_projections_and_attention():
    # eval + no grad + batch_first: PyTorch runs one fused kernel, which FlopCounterMode cannot see
    d, heads, ff, seq = 16, 2, 32, 8
    layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, batch_first=True).eval()
    x = torch.randn(1, seq, d)
    projections = 2 * seq * d * (3 * d) + 2 * seq * d * d
    attention = 2 * (2 * heads * seq * seq * (d // heads))  # q @ k^T, then p @ v
    feed_forward = 2 * seq * d * ff + 2 * seq * ff * d
    assert count_model_work(layer, (x,)).flops == projections + attention + feed_forward


def test_an_lstm_sets_apart_the_product_with_its_zero_initial_state():
    steps, n_in, hidden = 12, 4, 8
    lstm = nn.LSTM(n_in, hidden, batch_first=True).eval()
    work = count_model_work(lstm, (torch.randn(1, steps, n_in),))
    gates = 4 * hidden
    # h0 = 0 is no input: its product with W_hh is folded at conversion time, as with trained weights
    assert work.flops == steps * 2 * n_in * gates + (steps - 1) * 2 * hidden * gates
    assert work.set_apart["independent"] == 2 * hidden * gates


def test_a_product_whose_result_is_unused_is_set_apart_as_dead():
    class Dead(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(8, 4), nn.Linear(8, 16)

        def forward(self, x):
            self.unused(x)
            return self.used(x)

    work = count_model_work(Dead().eval(), (torch.randn(2, 8),))
    assert work.flops == 2 * 2 * 8 * 4 and work.set_apart["dead"] == 2 * 2 * 8 * 16
