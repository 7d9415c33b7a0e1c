"""Which graph ops the XNNPACK partitioner took, and why it left the others on ExecuTorch's own kernels.

Counted on the lowered edge program (before to_executorch): each lowered module keeps its original
edge graph, so the ops inside a partition are countable. Quantize/dequantize nodes are left out of
both numbers, so that "delegated / total" compares across precisions. The partitioner logs why it
rejects a node at DEBUG (a WhyNoPartition object, reused per node: read it in the handler); ops with
no XNNPACK config at all log nothing, and say so.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypedDict

DELEGATE_CALL = "executorch_call_delegate"
PARTITION_LOGGER = "executorch.backends.xnnpack.partition"
_QUANT_OPS = ("quantize_per_tensor", "dequantize_per_tensor", "quantize_per_channel", "dequantize_per_channel",
              "choose_qparams")


class DelegationBlock(TypedDict):
    """Delegation as the conversion record keeps it."""

    delegated_ops: int
    total_ops: int
    partitions: int
    portable_ops: dict[str, int]
    not_delegated_because: dict[str, str]


@dataclass
class Delegation:
    delegated_ops: int
    total_ops: int
    partitions: int
    portable_ops: dict[str, int] = field(default_factory=dict)  # op -> count, outside every partition
    not_delegated_because: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> DelegationBlock:
        return {"delegated_ops": self.delegated_ops, "total_ops": self.total_ops, "partitions": self.partitions,
                "portable_ops": dict(self.portable_ops), "not_delegated_because": dict(self.not_delegated_because)}


def op_name(node) -> str:
    target = node.target
    name = getattr(target, "_name", None) or getattr(target, "__name__", None) or str(target)
    return str(name).replace("aten::", "aten.").replace("quantized_decomposed::", "quantized_decomposed.")


def _counted(node) -> bool:
    """A call that does work: not tuple indexing, the delegate call itself, or a quantize/dequantize."""
    if node.op != "call_function":
        return False
    name = op_name(node)
    return (getattr(node.target, "__name__", name) not in ("getitem", DELEGATE_CALL)
            and not any(q in name for q in _QUANT_OPS))


class WhyNot(logging.Handler):
    """The XNNPACK partitioner's reasons for leaving a node out."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.reasons: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        why = record.msg
        node, reason = getattr(why, "node", None), getattr(why, "reason", None)
        if node is not None and reason:
            self.reasons.setdefault(op_name(node), str(reason))


@contextlib.contextmanager
def partitioner_reasons() -> Iterator[dict[str, str]]:
    """Collect the partitioner's DEBUG reasons while lowering, without printing them."""
    log = logging.getLogger(PARTITION_LOGGER)
    handler, level, propagate = WhyNot(), log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        yield handler.reasons
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def _why(op: str, logged: dict[str, str]) -> str:
    from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS

    if op in logged:
        return logged[op]
    taken = {str(getattr(c, "target_name", "")) for c in ALL_PARTITIONER_CONFIGS}  # "mean.dim", "relu.default"
    bare = op.split(".", 1)[1] if op.startswith(("aten.", "dim_order_ops.")) else op
    if bare not in taken and f"{bare}.default" not in taken:
        return "XNNPACK has no partitioner config for this op"
    return "the XNNPACK partitioner's checks rejected it (no reason logged)"


def count(edge_program, reasons: dict[str, str]) -> Delegation:
    """Ops inside XNNPACK partitions and ops left outside, in the lowered edge program."""
    gm = edge_program.graph_module
    delegated, partitions = 0, 0
    portable: dict[str, int] = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr" and str(node.target).startswith("lowered_module_"):
            partitions += 1
            lowered = getattr(gm, node.target)
            delegated += sum(1 for n in lowered.original_module.graph.nodes if _counted(n))
        elif _counted(node):
            name = op_name(node)
            portable[name] = portable.get(name, 0) + 1
    return Delegation(delegated, delegated + sum(portable.values()), partitions, portable,
                      {op: _why(op, reasons) for op in portable})
