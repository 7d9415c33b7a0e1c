"""Draws written for the runtimes (convert/worker/draws.py), the model at the draws' mean
(fixed_draws.py) and the distribution check (distribution.py), in PyTorch alone: no converter."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from nnlite_tui.core.convert.worker import draws  # noqa: E402
from nnlite_tui.core.convert.worker.distribution import DistributionMismatch, Spread, compare  # noqa: E402
from nnlite_tui.core.convert.worker.fixed_draws import NoMean, at_mean_mode  # noqa: E402


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


# Each draw as models write it, and its expected value given x (independent of the code under test).
CASES = {
    "randn_like": (lambda x: x + torch.randn_like(x), lambda x: x),
    "rand": (lambda x: x * torch.rand(x.shape), lambda x: x * 0.5),
    "normal_": (lambda x: x + torch.empty(x.size()).normal_(2.0, 1.0), lambda x: x + 2.0),
    "normal-tensor": (lambda x: torch.normal(x, 0.5), lambda x: x),
    "bernoulli_": (lambda x: x * x.new_empty(x.shape).bernoulli_(0.7), lambda x: x * 0.7),
    "dropout-training": (lambda x: F.dropout(x, 0.5, training=True), lambda x: x),
    "randint": (lambda x: x + torch.randint(0, 2, x.shape, dtype=torch.float), lambda x: x + 0.5),
    "uniform_": (lambda x: x + torch.empty(x.shape).uniform_(-1.0, 2.0), lambda x: x + 0.5),
}
_G = torch.Generator().manual_seed(0)
# Seeded, and every |x| >= 0.5: an element near 0 times a draw barely varies, and whether the spread
# test then counts it as sampled depended on the unseeded draw of X.
X = torch.randn(1, 4, 8, generator=_G).sign() * (0.5 + torch.rand(1, 4, 8, generator=_G))


@pytest.mark.parametrize("name", list(CASES))
def test_eager_at_the_mean_gives_each_draws_expected_value(name):
    fn, expected = CASES[name]
    with torch.no_grad(), at_mean_mode():
        got = fn(X)
    assert torch.allclose(got, expected(X), atol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_the_exported_program_at_the_mean_equals_eager_at_the_mean(name):
    fn, expected = CASES[name]
    program = draws.rewritten(torch.export.export(Fn(fn), (X,), strict=False), draws.at_mean())
    assert not any("rand" in str(n.target) or "normal" in str(n.target) or "bernoulli" in str(n.target)
                   for n in program.graph.nodes if n.op == "call_function")
    assert torch.allclose(program.module()(X), expected(X), atol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
def test_draws_through_rand_and_randn_keep_pytorchs_distribution(name):
    fn, _ = CASES[name]
    program = draws.rewritten(torch.export.export(Fn(fn), (X,), strict=False), draws.as_rand_randn())
    left = {str(n.target) for n in program.graph.nodes if n.op == "call_function"
            and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())}
    assert left <= {"aten.rand.default", "aten.randn.default"}, left
    module = Fn(fn)
    rewritten, eager = Spread(), Spread()
    torch.manual_seed(0)
    for _ in range(200):
        rewritten.add([program.module()(X).numpy()])
        eager.add([module(X).numpy()])
    figures = compare(rewritten, eager)
    assert figures["sampled_elements"] == X.numel()


def test_a_draw_decided_branch_exports_at_the_mean():
    def branch(x):
        return x * 3 if torch.rand(1).item() < 0.25 else x

    with pytest.raises(Exception, match="data-dependent"):
        torch.export.export(Fn(branch), (X,), strict=False)
    with draws.factories_at_mean():
        program = torch.export.export(Fn(branch), (X,), strict=False)
    assert torch.equal(program.module()(X), X)  # 0.5 < 0.25 is false, as in eager at the mean
    with at_mean_mode():
        assert torch.equal(Fn(branch)(X), X)


def test_a_draw_without_a_mean_says_so():
    with pytest.raises(NoMean, match="multinomial"), at_mean_mode():
        torch.multinomial(torch.ones(1, 4), 1)


def _spread(samples: np.ndarray) -> Spread:
    spread = Spread()
    for row in samples:
        spread.add([row])
    return spread


def test_the_same_distribution_passes_and_a_shifted_or_rescaled_one_fails():
    rng = np.random.default_rng(0)
    mean, std = np.linspace(-2, 2, 50), np.full(50, 0.5)
    pytorch = _spread(rng.normal(mean, std, size=(64, 50)))
    figures = compare(_spread(rng.normal(mean, std, size=(64, 50))), pytorch)
    assert figures["mean_t_max"] <= figures["mean_t_limit"]
    assert figures["var_ratio_limits"][0] <= figures["var_ratio_min"] <= figures["var_ratio_max"]
    with pytest.raises(DistributionMismatch, match="mean"):
        compare(_spread(rng.normal(mean + 0.5, std, size=(64, 50))), pytorch)  # a wrong deterministic part
    with pytest.raises(DistributionMismatch, match="variance"):
        compare(_spread(rng.normal(mean, std * 3, size=(64, 50))), pytorch)  # a wrong spread
    with pytest.raises(DistributionMismatch, match="variance"):
        compare(_spread(np.tile(mean, (64, 1))), pytorch)  # an artifact that does not draw


def test_elements_that_do_not_vary_are_held_to_the_exact_tolerance():
    fixed = np.tile(np.linspace(1, 2, 10), (64, 1))
    assert compare(_spread(fixed + 1e-5), _spread(fixed))["sampled_elements"] == 0
    with pytest.raises(DistributionMismatch, match="mean"):
        compare(_spread(fixed + 0.01), _spread(fixed))
