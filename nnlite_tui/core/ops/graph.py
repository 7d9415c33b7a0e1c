"""A converted model's graph as the per-op views and the predictor see it, whatever the runtime:
its ops in execution order, their tensors, the parameters that set their cost, and the work each
does (FLOPs count a multiply-add as 2; bytes moved are every input, weights included, plus every
output, at the tensor's element size). Each runtime's graph reader fills it in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import TypedDict

# Element sizes by dtype name.
ELEMENT_BYTES = {"float32": 4, "float16": 2, "int32": 4, "uint8": 1, "int64": 8, "bool": 1, "int16": 2, "int8": 1,
                 "float64": 8, "uint32": 4}


# A cost parameter of an op (kernel "3x3", stride "2x2", groups, channels); None: the artifact leaves it unset.
ParamValue = str | int | float | None


class TensorDict(TypedDict):
    shape: list[int]
    dtype: str
    constant: bool


class GraphOpDict(TypedDict):
    index: int
    type: str
    inputs: list[TensorDict]
    outputs: list[TensorDict]
    params: dict[str, ParamValue]
    flops: int
    bytes_moved: int


@dataclass
class Tensor:
    shape: list[int]
    dtype: str
    constant: bool

    def to_dict(self) -> TensorDict:
        return {"shape": self.shape, "dtype": self.dtype, "constant": self.constant}

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
    params: dict[str, ParamValue] = field(default_factory=dict)
    flops: int = 0
    bytes_moved: int = 0

    def key(self) -> str:
        """Op type and everything that sets its cost: equal keys, equal work."""
        ins = ";".join("x".join(map(str, t.shape)) + ("c" if t.constant else "") + t.dtype for t in self.inputs)
        outs = ";".join("x".join(map(str, t.shape)) + t.dtype for t in self.outputs)
        params = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.type}|{ins}|{outs}|{params}"

    def to_dict(self) -> GraphOpDict:
        return {"index": self.index, "type": self.type,
                "inputs": [t.to_dict() for t in self.inputs], "outputs": [t.to_dict() for t in self.outputs],
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
