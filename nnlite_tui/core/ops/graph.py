"""A converted model's graph as the per-op views and the predictor see it, whatever the runtime:
its ops in execution order, their tensors, the parameters that set their cost, and the work each
does (FLOPs count a multiply-add as 2; bytes moved are every input, weights included, plus every
output, at the tensor's element size). Each runtime's graph reader fills it in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from math import prod
from typing import Any

# Element sizes by dtype name.
ELEMENT_BYTES = {"float32": 4, "float16": 2, "int32": 4, "uint8": 1, "int64": 8, "bool": 1, "int16": 2, "int8": 1,
                 "float64": 8, "uint32": 4}


@dataclass
class Tensor:
    shape: list[int]
    dtype: str
    constant: bool

    @property
    def bytes(self) -> int:
        size = ELEMENT_BYTES.get(self.dtype, 4)
        return prod(self.shape) * size if self.shape else size


@dataclass
class GraphOp:
    index: int
    type: str
    inputs: list[Tensor]
    outputs: list[Tensor]
    params: dict[str, Any] = field(default_factory=dict)
    flops: int = 0
    bytes_moved: int = 0

    def key(self) -> str:
        """Op type and everything that sets its cost: equal keys, equal work."""
        ins = ";".join("x".join(map(str, t.shape)) + ("c" if t.constant else "") + t.dtype for t in self.inputs)
        outs = ";".join("x".join(map(str, t.shape)) + t.dtype for t in self.outputs)
        params = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.type}|{ins}|{outs}|{params}"

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "type": self.type,
                "inputs": [asdict(t) for t in self.inputs], "outputs": [asdict(t) for t in self.outputs],
                "params": self.params, "flops": self.flops, "bytes_moved": self.bytes_moved}


@dataclass
class Graph:
    path: str
    ops: list[GraphOp]

    @property
    def flops(self) -> int:
        return sum(op.flops for op in self.ops)

    @property
    def bytes_moved(self) -> int:
        return sum(op.bytes_moved for op in self.ops)


class GraphError(ValueError):
    """The file is not a readable model artifact."""
