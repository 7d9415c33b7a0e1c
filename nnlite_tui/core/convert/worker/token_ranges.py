"""The valid range of each integer (token id) input, read from the model itself.

An id indexes an embedding table: outside [0, num_embeddings) PyTorch raises and LiteRT's
EMBEDDING_LOOKUP fails the run ("index out of bounds"). The vocabulary a task assumes (prm, out_shape,
a default) need not be the table's size, so one eager forward with every integer input at 0 (a valid
id for any table) watches which embedding each input feeds: the input's tensor, or a view of it
(`captions[:, :-1]`), handed to `F.embedding`. The input's range is [0, the smallest such table).
An input that feeds no embedding (a mask, a length, ids looked up some other way) gets no range here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenRange:
    """Valid values of one integer input: [low, high), and where the bound came from."""

    low: int
    high: int
    source: str  # "embedding" (the table the input feeds), "task" (the task's vocabulary)

    def to_dict(self) -> dict:
        return {"range": [self.low, self.high], "range_from": self.source}


def _storage(t) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, AttributeError):  # a tensor without storage (meta, sparse)
        return None


def _integer(t) -> bool:
    import torch

    return (isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex()
            and t.dtype != torch.bool)


def embedding_sizes(model, args: tuple) -> dict[int, int]:
    """{index of an integer input: the smallest embedding table it feeds} from one forward at id 0."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    ints = [i for i, a in enumerate(args) if _integer(a) and a.numel() > 0]
    probe = tuple(torch.zeros_like(a) if i in ints else a for i, a in enumerate(args))
    owners = {_storage(probe[i]): i for i in ints}
    sizes: dict[int, int] = {}

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, fargs=(), kwargs=None):
            kwargs = kwargs or {}
            if func is F.embedding and fargs:
                weight = fargs[1] if len(fargs) > 1 else kwargs.get("weight")
                index = owners.get(_storage(fargs[0]))
                if index is not None and weight is not None:
                    sizes[index] = min(sizes.get(index, int(weight.shape[0])), int(weight.shape[0]))
            return func(*fargs, **kwargs)

    if not owners:
        return {}
    try:
        with torch.no_grad(), Watch():
            model(*probe)
    except Exception:  # noqa: BLE001  a model that rejects all-zero ids: the task's vocabulary stands
        return {}
    return sizes


def ranged_checks(spec, model, checks: list) -> list:
    """The check inputs with each integer input's range; a LEMUR model's token ids drawn again inside
    its embedding's table when the task's vocabulary was larger (they would fail PyTorch itself)."""
    from dataclasses import replace

    from nnlite_tui.core.sources import task_inputs

    sizes = embedding_sizes(model, checks[0].args)
    lemur = spec.kind != "factory"  # its integer inputs are the task's token ids
    task_vocab = task_inputs.vocab_size(spec)
    if lemur and sizes and min(sizes.values()) != task_vocab:
        checks = [task_inputs.build(spec, model, seed, vocab=min(sizes.values())) for seed in range(len(checks))]
    ranges: list[TokenRange | None] = []
    for i, arg in enumerate(checks[0].args):
        if i in sizes:
            ranges.append(TokenRange(0, sizes[i], "embedding"))
        elif lemur and _integer(arg):
            ranges.append(TokenRange(0, task_vocab, "task"))
        else:
            ranges.append(None)
    return [replace(c, ranges=tuple(ranges)) for c in checks]
