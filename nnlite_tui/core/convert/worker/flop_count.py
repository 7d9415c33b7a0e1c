"""PyTorch's side of the compute check: the multiply-accumulate FLOPs of one eval forward.

The formulas are torch.utils.flop_counter's own registry (what FlopCounterMode counts: mm, addmm,
bmm, baddbmm, convolution (grouped, transposed), the attention kernels), a multiply-add counted as 2,
never elementwise ops, pooling, normalisation or softmax. Three things FlopCounterMode misses on CPU
are put right, each measured (docs of issue 28's research):

- the CPU SDPA kernel `_scaled_dot_product_flash_attention_for_cpu` (what F.scaled_dot_product_attention
  runs here) is not in its registry: added with torch's own `sdpa_flop_count` (and mv, dot);
- nn.MultiheadAttention's / TransformerEncoderLayer's eval fast path and oneDNN's LSTM are one fused
  op each, without a formula: the count runs with the fast path and oneDNN off, so the same
  arithmetic runs as the linear/matmul/sdpa ops that have one.

Work the converter is entitled to remove is set apart, not compared: a product none of whose operands
derives from the inputs (an RNN's zero initial state through W_hh: folded at conversion time, as with
trained weights), a product repeated on the same weight and equal activations (common-subexpression
elimination), and a product whose result never reaches an output (dead code).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelWork:
    """The MAC FLOPs of one eval forward: compared (`flops`, per ATen op) and set apart (by reason)."""

    flops: int
    by_op: dict[str, int] = field(default_factory=dict)
    set_apart: dict[str, int] = field(default_factory=dict)  # "independent", "repeated", "dead"


def _sdpa_cpu(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    from torch.utils.flop_counter import sdpa_flop_count

    return sdpa_flop_count(query_shape, key_shape, value_shape)


def _mv(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    return 2 * a_shape[0] * a_shape[1]


def _dot(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    return 2 * a_shape[0]


def _registry() -> dict:
    import torch
    from torch.utils.flop_counter import flop_registry, shape_wrapper

    registry = dict(flop_registry)
    registry[torch.ops.aten._scaled_dot_product_flash_attention_for_cpu] = shape_wrapper(_sdpa_cpu)
    registry[torch.ops.aten.mv] = shape_wrapper(_mv)
    registry[torch.ops.aten.dot] = shape_wrapper(_dot)
    return registry


def _fingerprint(a, weight_ptrs: set[int]):
    """A key for one operand: a weight by where it lives, an activation by shape, dtype and three sums
    (the same product on the same values, e.g. a loop-invariant projection in every decoding step, is
    one op after the converter's common-subexpression elimination)."""
    import torch

    if not isinstance(a, torch.Tensor):
        return a if isinstance(a, (int, float, bool, str, type(None))) else str(a)
    ptr = a.untyped_storage().data_ptr()
    if ptr in weight_ptrs:
        return ("weight", ptr, a.storage_offset(), tuple(a.shape), tuple(a.stride()))
    if not a.numel() or not (a.is_floating_point() or a.is_complex()):
        return (tuple(a.shape), str(a.dtype), int(a.sum()) if a.numel() else 0)
    flat = a.detach().reshape(-1).double()
    return (tuple(a.shape), str(a.dtype), float(flat.sum()), float((flat * flat).sum()),
            float(flat[:: max(1, flat.numel() // 97)].sum()))


def _counting_mode(registry: dict, weight_ptrs: set[int], inputs: tuple):
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class Count(TorchDispatchMode):
        """Logs every ATen call (operand and result serials, and its MAC FLOPs with their bucket)."""

        def __init__(self):
            super().__init__()
            self.seen: set = set()
            self.log: list[tuple[list[int], list[int], tuple[str, str, int] | None]] = []
            self.serials: dict[int, tuple[weakref.ref, int]] = {}
            self.derived: dict[int, weakref.ref] = {}  # by id, with a weak reference: tensors compare elementwise
            for t in inputs:
                if isinstance(t, torch.Tensor):
                    self._mark(t)

        def serial(self, t) -> int:
            got = self.serials.get(id(t))
            if got is not None and got[0]() is t:
                return got[1]
            n = len(self.serials) + len(self.log) + 1
            self.serials[id(t)] = (weakref.ref(t), n)
            return n

        def _mark(self, t) -> None:
            for x in (t, t._base):
                if x is not None:
                    self.derived[id(x)] = weakref.ref(x)

        def _is_derived(self, t) -> bool:
            return any(x is not None and (r := self.derived.get(id(x))) is not None and r() is x
                       for x in (t, t._base))

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
            # an in-place op writes its mutated arguments: they (and their bases) now hold its result
            written = [t for a, t in zip(func._schema.arguments, args)
                       if a.is_write and isinstance(t, torch.Tensor)] if func._schema.is_mutable else []
            dependent = any(self._is_derived(t) for t in tensors)
            if dependent:
                for t in outs + written:
                    self._mark(t)
            entry = None
            formula = registry.get(func.overloadpacket)
            if formula is not None:
                flops = int(formula(*args, **kwargs, out_val=out))
                key = (str(func), tuple(_fingerprint(a, weight_ptrs) for a in tree_leaves((args, kwargs))))
                if not dependent:
                    entry = ("independent", "", flops)
                elif key in self.seen:
                    entry = ("repeated", "", flops)
                else:
                    self.seen.add(key)
                    entry = ("counted", str(func.overloadpacket), flops)
            targets = outs + written + [t._base for t in written if t._base is not None]
            self.log.append(([self.serial(t) for t in tensors], [self.serial(t) for t in targets], entry))
            return out

        def work(self, result) -> ModelWork:
            """Counted FLOPs of the calls whose results reach the outputs (walking the log back)."""
            live = set()
            for t in tree_leaves(result):
                if isinstance(t, torch.Tensor):
                    live.add(self.serial(t))
                    if t._base is not None:
                        live.add(self.serial(t._base))
            by_op: dict[str, int] = {}
            apart = {"independent": 0, "repeated": 0, "dead": 0}
            for ins, outs, entry in reversed(self.log):
                alive = any(o in live for o in outs)
                if alive:
                    live.update(ins)
                if entry is None:
                    continue
                bucket, name, flops = entry
                if not alive:
                    apart["dead"] += flops
                elif bucket == "counted":
                    by_op[name] = by_op.get(name, 0) + flops
                else:
                    apart[bucket] += flops
            return ModelWork(sum(by_op.values()), by_op, apart)

    return Count()


def count_model_work(model: Any, args: tuple) -> ModelWork:
    """The MAC work of `model(*args)` in eval mode without grad; raises what the forward raises."""
    import torch

    weight_ptrs = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers()]}
    fastpath = torch.backends.mha.get_fastpath_enabled()
    # The fused CPU kernels have no formula; without them the same forward runs as ops that have one.
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False), \
                _counting_mode(_registry(), weight_ptrs, args) as counter:
            result = model(*args)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    return counter.work(result)
