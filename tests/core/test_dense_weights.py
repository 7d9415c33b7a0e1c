"""The dense-weights rule: which parameters are re-drawn, how, and what is left alone (no conversion)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from nnlite_tui.core.convert.worker.dense_weights import LISTED, apply_policy  # noqa: E402


class Block(nn.Module):
    """torchvision's BasicBlock with zero_init_residual=True: the last BatchNorm's scale starts at 0."""

    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        nn.init.zeros_(self.bn2.weight)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


def _zero_init_resnet():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3), *[Block(8) for _ in range(8)]).eval()


def test_zero_init_residual_blocks_redraw_exactly_their_zero_batchnorm_scales():
    model = _zero_init_resnet()
    zero = sorted(n for n, p in model.named_parameters() if not p.any())
    record = apply_policy(model, "dense")
    names = sorted(t.name for t in record.tensors)
    # 8 zero BN scales; the 16 zero BN biases are additive and stay
    assert names == sorted(f"{i}.bn2.weight" for i in range(1, 9))
    assert len(zero) == 24 and set(zero) - set(names) == {n for n in zero if n.endswith(".bias")}
    for name in names:
        p = model.get_parameter(name).detach()
        assert float(p.min()) >= 0.5 and float(p.max()) <= 1.5 and p.std() > 0
    assert {t.reason for t in record.tensors} == {"all-zero normalisation scale"}
    assert record.to_dict()["redrawn"] == 8


def test_the_draw_is_seeded_and_as_built_touches_nothing():
    a, b = _zero_init_resnet(), _zero_init_resnet()
    apply_policy(a, "dense")
    apply_policy(b, "dense")
    assert torch.equal(a[1].bn2.weight, b[1].bn2.weight) and not torch.equal(a[1].bn2.weight, a[2].bn2.weight)
    kept = _zero_init_resnet()
    record = apply_policy(kept, "as-built")
    assert len(record.tensors) == 8 and not kept[1].bn2.weight.any()
    assert record.to_dict()["would_redraw"] == 8


def test_copied_layers_get_distinct_weights_and_tied_weights_stay_tied():
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(16, 2, dim_feedforward=32, batch_first=True)
    dec = nn.TransformerDecoder(layer, num_layers=3)  # deep copies: equal weights at init
    w0 = dec.layers[0].linear1.weight.detach().clone()
    record = apply_policy(dec, "dense")
    dups = [t for t in record.tensors if t.reason.startswith("equal to an earlier parameter")]
    assert {t.name.split(".")[1] for t in dups} == {"1", "2"}
    assert torch.equal(dec.layers[0].linear1.weight, w0)  # the first is kept
    assert not torch.equal(dec.layers[1].linear1.weight, w0)
    # a permutation of its own values: the same distribution
    assert torch.equal(dec.layers[1].linear1.weight.flatten().sort().values, w0.flatten().sort().values)

    emb = nn.Embedding(10, 8)
    head = nn.Linear(8, 10, bias=False)
    head.weight = emb.weight  # weight tying: one tensor
    assert apply_policy(nn.ModuleList([emb, head]), "dense").tensors == ()


def test_zero_linear_weight_and_unknown_multiplier_are_redrawn_with_their_scale():
    model = nn.Sequential(nn.Linear(64, 8))
    nn.init.zeros_(model[0].weight)
    model.register_parameter("gate", nn.Parameter(torch.zeros(1)))
    record = {t.name: t for t in apply_policy(model, "dense").tensors}
    assert set(record) == {"0.weight", "gate"}
    assert float(model[0].weight.abs().max()) <= 1 / 8 and model[0].weight.any()  # U(-1/sqrt(64), 1/sqrt(64))
    assert 0.5 <= float(model.gate) <= 1.5


def test_the_record_lists_a_capped_number_of_names_and_the_whole_count():
    model = nn.ModuleList([nn.LayerNorm(4) for _ in range(LISTED + 5)])
    for m in model:
        nn.init.zeros_(m.weight)
    record = apply_policy(model, "dense").to_dict()
    assert record["redrawn"] == LISTED + 5 and len(record["tensors"]) == LISTED and record["not_listed"] == 5
