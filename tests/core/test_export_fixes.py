"""The export rewrites equal the original ops exactly (eager; the .tflite side is test_lemur_coverage)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from nnlite_tui.core.convert.worker.export_fixes import exact_rewrites  # noqa: E402


@pytest.mark.parametrize(("shape", "out"), [
    ((2, 3, 8, 8), (4, 4)),  # divisible: max_pool2d
    ((2, 3, 7, 7), (6, 6)),  # overlapping windows: sliced
    ((1, 4, 1, 1), (6, 6)),  # output larger than input (AlexNet mutations on small inputs)
    ((1, 2, 13, 3), (7, None)),
])
def test_adaptive_max_pool2d(shape, out):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    want = F.adaptive_max_pool2d(x, out)
    with exact_rewrites():
        got = F.adaptive_max_pool2d(x, out)
        _, indices = F.adaptive_max_pool2d(x, out, return_indices=True)  # kept as the original op
    assert torch.equal(got, want) and indices.shape == want.shape


def test_bilinear_and_high_rank_linear():
    g = torch.Generator().manual_seed(0)
    bil, lin = torch.nn.Bilinear(5, 4, 3), torch.nn.Linear(6, 2)
    a, b, x = torch.randn(2, 7, 5, generator=g), torch.randn(2, 7, 4, generator=g), torch.randn(2, 3, 4, 6, generator=g)
    want = bil(a, b), lin(x)
    with exact_rewrites():
        got = bil(a, b), lin(x)
    assert torch.allclose(got[0], want[0], atol=1e-6) and torch.equal(got[1], want[1])


def test_the_causal_mask_hint_is_returned_as_given_and_the_decoder_computes_the_same():
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(16, 2, 32, batch_first=True), 2).eval()
    tgt, memory = torch.randn(1, 6, 16, generator=g), torch.randn(1, 9, 16, generator=g)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    import torch.nn.modules.transformer as transformer

    with torch.no_grad():
        want = dec(tgt, memory, tgt_mask=mask)
        assert transformer._detect_is_causal_mask(mask) is True  # PyTorch compares the mask's values
        with exact_rewrites():
            assert transformer._detect_is_causal_mask(mask) is False  # the hint as given: none
            assert transformer._detect_is_causal_mask(mask, True) is True
            got = dec(tgt, memory, tgt_mask=mask)
    assert transformer._detect_is_causal_mask(mask) is True  # restored
    assert torch.allclose(got, want, atol=1e-6)
