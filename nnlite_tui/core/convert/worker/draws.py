"""A model's random draws, as the runtimes can run them and as their expected values.

litert-torch lowers `aten.rand` and `aten.randn` to LiteRT's RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL
(and `bernoulli(Tensor)` and `multinomial` through its own decompositions); ExecuTorch's portable
kernels have `rand.out` and `randn.out`. Neither takes `randn_like`, `normal_`, `bernoulli(p=float)`,
`uniform_`, `randint` or dropout in training mode as torch.export leaves them. Each of those is, by
the definition of its distribution, a transform of a uniform or a standard normal draw of the same
shape: `as_rand_randn()` says so, and `run_decompositions` applies it to the exported program before
a runtime lowers it. The artifact then draws on the device, on every run, from the same distributions
as PyTorch (with its own generator, so not the same numbers).

`at_mean()` replaces every draw by its expected value instead (rand 0.5, randn 0, normal its mean,
bernoulli its p, dropout the identity, randint (low + high - 1) / 2): the model without its sampling,
a deterministic program that is checked against PyTorch eager run with the same replacement
(fixed_draws.py) at the usual tolerance.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

Table = dict[Any, Callable]


def _float(dtype) -> Any:
    import torch

    return dtype if dtype is not None and dtype.is_floating_point else torch.float32


def as_rand_randn() -> Table:
    """{aten overload: its definition through aten.rand/aten.randn}, for run_decompositions."""
    import torch

    aten = torch.ops.aten

    def uniform(shape, dtype):
        return aten.rand.default(list(shape), dtype=_float(dtype))

    def normal(shape, dtype):
        return aten.randn.default(list(shape), dtype=_float(dtype))

    def rand_like(x, *, dtype=None, **_):
        return uniform(x.shape, dtype or x.dtype).to(dtype or x.dtype)

    def randn_like(x, *, dtype=None, **_):
        return normal(x.shape, dtype or x.dtype).to(dtype or x.dtype)

    def normal_functional(x, mean=0.0, std=1.0, *, generator=None):
        return (normal(x.shape, x.dtype) * std + mean).to(x.dtype)

    def normal_tensor_float(mean, std=1.0, *, generator=None):
        return normal(mean.shape, mean.dtype) * std + mean

    def normal_float_tensor(mean, std, *, generator=None):
        return normal(std.shape, std.dtype) * std + mean

    def normal_tensor_tensor(mean, std, *, generator=None):
        return normal(torch.broadcast_shapes(mean.shape, std.shape), mean.dtype) * std + mean

    def normal_float_float(mean, std, size, *, generator=None, dtype=None, **_):
        return normal(size, dtype) * std + mean

    def uniform_(x, low=0.0, high=1.0, *, generator=None):
        return (uniform(x.shape, x.dtype) * (high - low) + low).to(x.dtype)

    # bernoulli(p) is `u < p`; dropout keeps with bernoulli(1 - p) and scales by 1 / (1 - p), as eager does
    def bernoulli_p(x, p=0.5, *, generator=None):
        return (uniform(x.shape, x.dtype) < p).to(x.dtype)

    def bernoulli_self(x, *, generator=None):
        return (uniform(x.shape, x.dtype) < x).to(x.dtype)

    def bernoulli_tensor(x, p, *, generator=None):
        return (uniform(x.shape, x.dtype) < p).to(x.dtype)

    def dropout(x, p, train):
        if not train or p == 0:
            return x.clone()
        if p >= 1:
            return x * 0
        return x * (uniform(x.shape, x.dtype) < 1.0 - p).to(x.dtype) * (1.0 / (1.0 - p))

    def native_dropout(x, p, train):
        if train is False or p == 0:
            return x.clone(), torch.ones_like(x, dtype=torch.bool)
        keep = uniform(x.shape, x.dtype) < 1.0 - p
        return x * keep.to(x.dtype) * (1.0 / (1.0 - p)), keep

    def randint(low, high, size, *, dtype=None, **_):
        drawn = torch.floor(uniform(size, torch.float32) * (high - low)) + low
        return drawn.to(dtype if dtype is not None else torch.int64)

    def exponential(x, lambd=1.0, *, generator=None):
        return (-torch.log1p(-uniform(x.shape, x.dtype)) / lambd).to(x.dtype)

    return _keyed(rand_like, randn_like, normal_functional, normal_tensor_float, normal_float_tensor,
                  normal_tensor_tensor, normal_float_float, uniform_, bernoulli_p, bernoulli_self,
                  bernoulli_tensor, dropout, native_dropout, randint, exponential)


def at_mean() -> Table:
    """{aten overload, rand and randn too: its expected value}, for run_decompositions. The same
    values as fixed_draws.py gives eager PyTorch, op by op."""
    import torch

    aten = torch.ops.aten

    def full(shape, value, dtype):
        return torch.full(list(shape), value, dtype=_float(dtype)).to(dtype or torch.float32)

    def rand(size, *, dtype=None, **_):
        return full(size, 0.5, dtype)

    def randn(size, *, dtype=None, **_):
        return full(size, 0.0, dtype)

    def rand_like(x, *, dtype=None, **_):
        return full(x.shape, 0.5, dtype or x.dtype)

    def randn_like(x, *, dtype=None, **_):
        return full(x.shape, 0.0, dtype or x.dtype)

    def normal_functional(x, mean=0.0, std=1.0, *, generator=None):
        return full(x.shape, mean, x.dtype)

    def normal_tensor_float(mean, std=1.0, *, generator=None):
        return mean.clone()

    def normal_float_tensor(mean, std, *, generator=None):
        return full(std.shape, mean, std.dtype)

    def normal_tensor_tensor(mean, std, *, generator=None):
        return mean.expand(torch.broadcast_shapes(mean.shape, std.shape)).clone()

    def normal_float_float(mean, std, size, *, generator=None, dtype=None, **_):
        return full(size, mean, dtype)

    def uniform_(x, low=0.0, high=1.0, *, generator=None):
        return full(x.shape, (low + high) / 2, x.dtype)

    def bernoulli_p(x, p=0.5, *, generator=None):
        return full(x.shape, p, x.dtype)

    def bernoulli_self(x, *, generator=None):
        return x.clone()

    def bernoulli_tensor(x, p, *, generator=None):
        return p.expand(x.shape).to(x.dtype).clone()

    def dropout(x, p, train):
        return x.clone()

    def native_dropout(x, p, train):
        return x.clone(), torch.ones_like(x, dtype=torch.bool)

    def randint(low, high, size, *, dtype=None, **_):
        return full(size, (low + high - 1) / 2, torch.float32).to(dtype if dtype is not None else torch.int64)

    def exponential(x, lambd=1.0, *, generator=None):
        return full(x.shape, 1.0 / lambd, x.dtype)

    return {**_keyed(rand_like, randn_like, normal_functional, normal_tensor_float, normal_float_tensor,
                     normal_tensor_tensor, normal_float_float, uniform_, bernoulli_p, bernoulli_self,
                     bernoulli_tensor, dropout, native_dropout, randint, exponential),
            aten.rand.default: rand, aten.randn.default: randn}


def _keyed(rand_like, randn_like, normal_functional, normal_tensor_float, normal_float_tensor, normal_tensor_tensor,
           normal_float_float, uniform_, bernoulli_p, bernoulli_self, bernoulli_tensor, dropout, native_dropout,
           randint, exponential) -> Table:
    """Each definition under every overload torch.export may leave it as."""
    import torch

    aten = torch.ops.aten
    return {
        aten.rand_like.default: rand_like, aten.randn_like.default: randn_like,
        aten.normal_functional.default: normal_functional, aten.normal.Tensor_float: normal_tensor_float,
        aten.normal.float_Tensor: normal_float_tensor, aten.normal.Tensor_Tensor: normal_tensor_tensor,
        aten.normal.float_float: normal_float_float, aten.uniform.default: uniform_,
        aten.bernoulli.p: bernoulli_p, aten.bernoulli.default: bernoulli_self, aten.bernoulli.Tensor: bernoulli_tensor,
        aten.dropout.default: dropout, aten.native_dropout.default: native_dropout,
        aten.randint.low: randint,
        aten.randint.default: lambda high, size, **kw: randint(0, high, size, **kw),
        aten.randint_like.default: lambda x, high, *, dtype=None, **_: randint(0, high, x.shape, dtype=dtype or x.dtype),
        aten.randint_like.low_dtype: lambda x, low, high, *, dtype=None, **_: randint(low, high, x.shape,
                                                                                    dtype=dtype or x.dtype),
        aten.exponential.default: exponential,
    }


def rewritten(program, table: Table):
    """The exported program with `table` applied and nothing else decomposed."""
    return program.run_decompositions(table)


@contextlib.contextmanager
def on_every_export(table: Table | None) -> Iterator[None]:
    """While inside, every torch.export.export returns its program rewritten by `table` (LiteRT's
    converter calls torch.export itself); nothing changes when `table` is None."""
    if table is None:
        yield
        return
    import torch

    original = torch.export.export

    def export(*args, **kwargs):
        return rewritten(original(*args, **kwargs), table)

    torch.export.export = export
    try:
        yield
    finally:
        torch.export.export = original


@contextlib.contextmanager
def factories_at_mean() -> Iterator[None]:
    """While inside, torch.rand/randn/randint and their *_like return their expected value as a real
    tensor, even while torch.export traces with fake ones: a draw that decides control flow
    (`if torch.rand(1).item() < p`) is then a constant the trace can branch on, where a fake draw is a
    data-dependent guard no export passes. The same values as at_mean() gives the program's draws."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    def real(shape, value, dtype):
        with _disable_current_modes():  # neither fake nor traced: a constant of the trace
            return torch.full(tuple(shape), value, dtype=_float(dtype)).to(dtype or torch.float32)

    def size_of(size):
        return size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size

    patched = {
        "rand": lambda *size, dtype=None, **_: real(size_of(size), 0.5, dtype),
        "randn": lambda *size, dtype=None, **_: real(size_of(size), 0.0, dtype),
        "rand_like": lambda x, *, dtype=None, **_: real(x.shape, 0.5, dtype or x.dtype),
        "randn_like": lambda x, *, dtype=None, **_: real(x.shape, 0.0, dtype or x.dtype),
        "randint": lambda *args, size=None, dtype=None, **_: _randint_at_mean(real, args, size, dtype),
    }
    originals = {name: getattr(torch, name) for name in patched}
    for name, fn in patched.items():
        setattr(torch, name, fn)
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(torch, name, fn)


def _randint_at_mean(real, args: tuple, size, dtype):
    """torch.randint(high, size) or (low, high, size), at (low + high - 1) / 2 (truncated for integers)."""
    import torch

    if size is None:
        *bounds, size = args
    else:
        bounds = list(args)
    low, high = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    return real(size, (low + high - 1) / 2, torch.float32).to(dtype if dtype is not None else torch.int64)
