"""A model samples only when a call really draws: tagged ops with a zero probability do not."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from nnlite_tui.core.convert.worker.sampling import drawing_calls  # noqa: E402


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


X = torch.randn(1, 2, 8, 16)
MHA = nn.MultiheadAttention(16, 2, dropout=0.1, batch_first=True).eval()
LSTM = nn.LSTM(16, 16, num_layers=2, dropout=0.3, batch_first=True).eval()


@pytest.mark.parametrize("model", [
    Fn(lambda x: F.scaled_dot_product_attention(x, x, x)),  # tagged nondeterministic_seeded, dropout_p=0
    nn.Sequential(nn.Dropout(0.5)).eval(),
    Fn(lambda x: MHA(x[0], x[0], x[0])[0]),
    Fn(lambda x: LSTM(x[0])[0]),
], ids=["sdpa-eval", "dropout-eval", "mha-dropout-eval", "lstm-dropout-eval"])
def test_tagged_ops_that_do_not_draw_are_not_sampling(model):
    assert drawing_calls(model, (X,)) == []


@pytest.mark.parametrize(("model", "op"), [
    (Fn(lambda x: x + torch.randn_like(x)), "aten.randn_like"),
    (Fn(lambda x: x * torch.normal(torch.ones_like(x), 0.1)), "aten.normal"),
    (Fn(lambda x: F.dropout(x, 0.2, training=True)), "aten.bernoulli"),
    (Fn(lambda x: F.scaled_dot_product_attention(x, x, x, dropout_p=0.1)), "aten."),
    (Fn(lambda x: x * 2 + 0 * torch.rand(1)), "aten.rand"),
], ids=["randn_like", "normal", "dropout-training", "sdpa-dropout", "rand"])
def test_calls_that_draw_are_sampling(model, op):
    found = drawing_calls(model, (X,))
    assert found and found[0].op.startswith(op)
