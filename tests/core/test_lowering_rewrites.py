"""The two LiteRT lowering rewrites (convert/worker/lowering_rewrites.py): equal to the original ops in
eager mode, and each one turns a converter failure into a validated .tflite (slow: real conversions of
the hand-made reproducers in tests/fixtures/rewrites, with and without the rewrite)."""

from __future__ import annotations

import contextlib

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from nnlite_tui.core.convert.worker import lowering_rewrites  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402


def test_linear_on_unit_rows_as_conv_equals_the_linear():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, 1, 12, generator=g)
    w, b = torch.randn(7, 12, generator=g), torch.randn(7, generator=g)
    want = F.linear(x, w), F.linear(x, w, b), F.linear(x[:, :, 0], w)
    with lowering_rewrites.installed():
        got = F.linear(x, w), F.linear(x, w, b), F.linear(x[:, :, 0], w)  # the rank-3 one is left alone
        record = lowering_rewrites.applied()
    assert all(torch.allclose(a, e, atol=1e-5) for a, e in zip(got, want))
    assert [(r["name"], r["count"]) for r in record] == [("linear-unit-rows-as-conv", 2)]
    assert F.linear is torch._C._nn.linear  # restored


class _Product(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x, y):
        return x * y.expand(*self.shape)


def test_an_expand_the_product_broadcasts_anyway_is_dropped_and_the_result_is_identical():
    x, y = torch.randn(1, 4, 3, 3), torch.randn(1, 4, 1, 1)
    program = torch.export.export(_Product((1, 4, 3, 3)), (x, y), strict=False)
    gm = program.module()
    assert lowering_rewrites.drop_broadcasting_expands(gm) == 1
    assert not any("expand" in str(n.target) for n in gm.graph.nodes)
    assert torch.equal(gm(x, y), x * y.expand(1, 4, 3, 3))


def test_an_expand_that_makes_the_shape_is_kept():
    # (1, 1) * (1, 1) expanded to (4, 4) is (4, 4); without the expand it would be (1, 1)
    x, y = torch.randn(1, 1), torch.randn(1, 1)
    gm = torch.export.export(_Product((4, 4)), (x, y), strict=False).module()
    assert lowering_rewrites.drop_broadcasting_expands(gm) == 0
    assert gm(x, y).shape == (4, 4)


def _convert(name: str, tmp_path, rewrites: bool):
    from nnlite_tui.core.convert.worker.job import convert_one
    from nnlite_tui.core.runtimes import get_runtime
    from nnlite_tui.core.sources.discover import discover

    spec = discover([f"{FIXTURES / 'rewrites' / name}.py:make"])[0]
    with pytest.MonkeyPatch.context() as mp:
        if not rewrites:
            mp.setattr(lowering_rewrites, "installed", contextlib.nullcontext)
        return convert_one(spec, str(tmp_path / f"{name}.tflite"), get_runtime("litert"))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "error", "rewrite"), [
    ("linear_unit_rows", "'tfl.batch_matmul' op found invalid output rank, expected 3 but got 4",
     "linear-unit-rows-as-conv"),
    ("se_expand", "'tfl.mul' op operands don't have broadcast-compatible shapes", "broadcasting-expand-dropped"),
])
def test_the_rewrite_turns_the_converter_error_into_a_validated_model(tmp_path, name, error, rewrite):
    from nnlite_tui.core.convert.worker.errors import StageError

    with pytest.raises(StageError) as failed:
        _convert(name, tmp_path, rewrites=False)
    assert failed.value.stage == "lower" and error in str(failed.value.exc)
    result = _convert(name, tmp_path, rewrites=True)
    assert result["ok"] and result["validation"]["strength"] == "strong"
    assert result["max_abs_diff"] < 1e-5
    assert [r["name"] for r in result["rewrites"]] == [rewrite]
