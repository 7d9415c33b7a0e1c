"""Does the model draw random numbers at inference? The calls of an eager forward that really draw.

torch tags every op that *may* draw `nondeterministic_seeded`: the real draws (rand, randn, normal,
bernoulli, multinomial, ...), but also the dropout ops, the RNN ops and every SDPA kernel, whatever
their probability. An eval-mode attention (`_scaled_dot_product_flash_attention_for_cpu` with
dropout_p=0, what nn.MultiheadAttention and nn.Transformer* run on CPU) draws nothing, and blaming a
later export failure on it hid the real error (a data-dependent guard in nn.TransformerDecoder).

A tagged call draws when
- it has a probability argument (`p`, `dropout_p`, `dropout`) above zero and, where it also has a
  `train`/`training` argument, that is true (F.dropout(x, 0.2, training=True) draws in eval too);
- it is rrelu_with_noise with training true;
- it is any other tagged op (the draws themselves: a draw whose value is unused is still a draw).
The other half of the rule stays in model.references: two runs on one input that differ.
"""

from __future__ import annotations

from dataclasses import dataclass

_PROB_ARGS = ("p", "dropout_p", "dropout")
_TRAIN_ARGS = ("train", "training")
# Their `p` is the probability of each draw's outcome, not of dropping: they always draw.
_ALWAYS = ("aten.bernoulli", "aten.bernoulli_", "aten.geometric", "aten.geometric_")


@dataclass(frozen=True)
class Draw:
    op: str  # the ATen op, without its overload
    why: str  # "dropout_p=0.1", "draws on every call"

    def __str__(self) -> str:
        return f"{self.op}: {self.why}"


def _bound(func, args, kwargs) -> dict:
    values = {}
    for i, a in enumerate(func._schema.arguments):
        if i < len(args):
            values[a.name] = args[i]
        elif a.name in kwargs:
            values[a.name] = kwargs[a.name]
        elif a.has_default_value():
            values[a.name] = a.default_value
    return values


def draws(func, args, kwargs) -> Draw | None:
    """A Draw when this call consumes random numbers, else None."""
    import torch

    if torch.Tag.nondeterministic_seeded not in func.tags:
        return None
    name = str(func.overloadpacket)
    values = _bound(func, args, kwargs or {})
    train = next((values[k] for k in _TRAIN_ARGS if k in values), None)
    if name.startswith("aten.rrelu_with_noise"):
        return Draw(name, "training=True") if train else None
    prob = next(((k, values[k]) for k in _PROB_ARGS if k in values and isinstance(values[k], (int, float))), None)
    if prob is not None and name not in _ALWAYS:
        if train is False or float(prob[1]) <= 0.0:
            return None
        return Draw(name, f"{prob[0]}={float(prob[1]):g}" + (", training=True" if train else ""))
    return Draw(name, "draws on every call")


def drawing_calls(model, args: tuple) -> list[Draw]:
    """The calls of one eager no-grad forward that draw; [] when the forward raises (the reference
    run, made before this, reports the model's own errors)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.found: list[Draw] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            d = draws(func, args, kwargs)
            if d is not None:
                self.found.append(d)
            return func(*args, **(kwargs or {}))

    try:
        with torch.no_grad(), Seen() as seen:
            model(*args)
    except Exception:  # noqa: BLE001  see the docstring: the reference run already reported it
        return []
    return seen.found
