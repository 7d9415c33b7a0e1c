"""PyTorch eager with every random draw replaced by its expected value: the model without its sampling.

The reference for the artifact built with draws.at_mean(): the same replacement, op by op, on the
calls that really draw (sampling.draws). Eager PyTorch decomposes some draws before dispatch (dropout
in training mode arrives as `bernoulli_(1 - p)` and a multiply by 1 / (1 - p), `randint` as
`random_`), so the means are taken at whatever op arrives; expected values compose, so both sides
compute the same deterministic function. A draw without a mean here (multinomial, randperm, poisson,
...) raises NoMean: the deterministic part is then not checked, and the report says why.
"""

from __future__ import annotations

from typing import Any

from nnlite_tui.core.convert.worker.sampling import _bound, draws


class NoMean(Exception):
    """A draw whose expected value this module does not give."""


def _mean(name: str, values: dict[str, Any]) -> Any:
    """The expected value of one draw, from its bound arguments (a number or a tensor)."""
    op = name.removeprefix("aten.").rstrip("_")
    if op in ("rand", "rand_like", "uniform"):
        return (float(values.get("from", 0.0)) + float(values.get("to", 1.0))) / 2
    if op in ("randn", "randn_like"):
        return 0.0
    if op in ("normal", "normal_functional"):
        return values.get("mean", 0.0)
    if op == "bernoulli":
        p = values.get("p")
        return values["self"] if p is None else p
    if op in ("randint", "randint_like", "random"):
        low = values.get("low", values.get("from", 0))
        high = values.get("high", values.get("to"))
        if high is None:
            raise NoMean(f"{name} without an upper bound")
        return (float(low) + float(high) - 1) / 2
    if op == "exponential":
        return 1.0 / float(values.get("lambd", 1.0))
    raise NoMean(f"{name} has no expected value here")


def at_mean_mode():
    """A TorchDispatchMode under which every draw returns its expected value (NoMean if it has none)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class AtMean(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if draws(func, args, kwargs) is None:
                return out
            name = str(func.overloadpacket)
            values = _bound(func, args, kwargs)
            if name.startswith("aten.native_dropout"):
                return values["input"].clone(), torch.ones_like(out[1])
            mean = _mean(name, values)
            target = out if isinstance(out, torch.Tensor) else None
            if target is None:
                raise NoMean(f"{name} returns more than one tensor")
            value = mean.to(target.dtype) if isinstance(mean, torch.Tensor) else mean
            # a float mean into an integer tensor truncates, as draws.at_mean's .to(int) does
            target.copy_(torch.as_tensor(value, dtype=torch.float64 if not target.is_floating_point()
                                         else target.dtype).broadcast_to(target.shape))
            return target

    return AtMean()


def outputs_at_mean(model, checks: list, flatten) -> list[list]:
    """PyTorch's outputs on each check with every draw at its mean; NoMean if a draw has none."""
    import torch

    with torch.no_grad(), at_mean_mode():
        return [flatten(model(*c.args)) for c in checks]
