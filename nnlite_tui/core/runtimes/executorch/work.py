"""The multiply-accumulate work a .pte does, for the compute check (convert/compute_check.py): read
from the program itself, as LiteRT's is read from its .tflite.

Each XNNPACK partition's payload is XNNPACK's own graph (an XNNHeader, then a flatbuffer of
executorch/backends/xnnpack/serialization/schema.fbs), decoded to JSON by the flatc ExecuTorch
ships and uses for its own programs; the operators left on ExecuTorch's kernels are the program's
KernelCalls with their argument tensors. A multiply-add counts 2, as PyTorch's FlopCounterMode
counts the model's side:

- XNNConv2d / XNNDepthwiseConv2d: 2 x output elements x kh x kw x group_input_channels;
- XNNConvTranspose2d: 2 x input elements x kh x kw x group_output_channels;
- XNNFullyConnected, XNNBatchMatrixMultiply: 2 x output elements x the first input's last dimension;
- XNNScaledDotProductAttention: the two batched products, 2 x B x H x L x S x (E + Ev);
- aten::convolution, addmm, mm, bmm on ExecuTorch's kernels by the same rules.

Runs in the conversion worker, where executorch.exir is already imported by the export.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import tempfile
from collections.abc import Mapping
from math import prod
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from nnlite_tui.core.runtimes.base import GraphWork

XNNPACK = "XnnpackBackend"
_NON_FINITE = re.compile(rb"(?<=: )(-?inf|nan)\b")  # flatc writes clamp bounds as bare inf


class WorkUnreadable(RuntimeError):
    """The program's work could not be read; the message says where."""


# An XNNPACK graph as flatc decodes it (schema.fbs): the fields this reader uses.
class XnnTensor(TypedDict, total=False):
    id_out: int
    dims: list[int]
    tensor_value: XnnTensor  # a quantized value wraps its tensor


class XnnValue(TypedDict, total=False):
    xvalue_union: XnnTensor


class XnnNode(TypedDict, total=False):
    xnode_union_type: str
    xnode_union: dict[str, int]  # the node's tensor ids and sizes (output_id, kernel_height, ...)


class XnnGraph(TypedDict, total=False):
    xvalues: list[XnnValue]
    xnodes: list[XnnNode]


def _xnn_graph(payload: bytes, scratch: str) -> XnnGraph:
    from executorch.backends.xnnpack import serialization
    from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import XNNHeader
    from executorch.exir._serialize._flatbuffer import _flatc_decompile

    header = XNNHeader.from_bytes(payload[:XNNHeader.EXPECTED_LENGTH])
    graph = payload[header.flatbuffer_offset:header.flatbuffer_offset + header.flatbuffer_size]
    path = os.path.join(scratch, "graph.bin")
    with open(path, "wb") as fh:
        fh.write(graph)
    _flatc_decompile(scratch, os.path.join(list(serialization.__path__)[0], "schema.fbs"), path)
    with open(os.path.join(scratch, "graph.json"), "rb") as fh:
        decoded: XnnGraph = json.loads(_NON_FINITE.sub(rb'"\1"', fh.read()))
        return decoded


def _dims(graph: XnnGraph) -> dict[int, list[int]]:
    out = {}
    for value in graph.get("xvalues") or []:
        union: XnnTensor = value.get("xvalue_union") or {}
        tensor = union.get("tensor_value", union)  # a quantized value wraps its tensor
        out[int(tensor.get("id_out", -1))] = [int(d) for d in tensor.get("dims") or []]
    return out


def xnn_node_flops(kind: str, node: Mapping[str, int], dims: dict[int, list[int]]) -> int:
    """One XNNPACK node's MAC FLOPs (0 for a node that does no multiply-accumulate)."""
    if kind in ("XNNConv2d", "XNNDepthwiseConv2d"):
        return 2 * prod(dims[node["output_id"]]) * node["kernel_height"] * node["kernel_width"] * \
            node["group_input_channels"]
    if kind == "XNNConvTranspose2d":
        return 2 * prod(dims[node["input1_id"]]) * node["kernel_height"] * node["kernel_width"] * \
            node["group_output_channels"]
    if kind in ("XNNFullyConnected", "XNNBatchMatrixMultiply"):
        return 2 * prod(dims[node["output_id"]]) * dims[node["input1_id"]][-1]
    if kind == "XNNScaledDotProductAttention":
        q, k, v = dims[node["query_id"]], dims[node["key_id"]], dims[node["value_id"]]
        return 2 * prod(q[:-1]) * k[-2] * (q[-1] + v[-1])
    return 0


def _kernel_flops(name: str, sizes: list[list[int] | None], transposed: bool) -> int:
    """One of ExecuTorch's own kernel calls: its arguments' sizes (None: not a tensor), out last."""
    out = sizes[-1]
    if name == "aten::convolution" and sizes[0] and sizes[1] and out:
        per = prod(sizes[1][1:])  # weight: (Cout, Cin/g, k...) or, transposed, (Cin, Cout/g, k...)
        return 2 * (prod(sizes[0]) if transposed else prod(out)) * per
    if name == "aten::addmm" and sizes[1] and out:
        return 2 * prod(out) * sizes[1][-1]
    if name in ("aten::mm", "aten::bmm") and sizes[0] and out:
        return 2 * prod(out) * sizes[0][-1]
    return 0


def _kernel_work(plan: Any, by_op: dict[str, int]) -> None:
    values = plan.values
    names = [op.name for op in plan.operators]

    def sizes(i: int) -> list[int] | None:
        val = values[i].val
        return [int(s) for s in val.sizes] if hasattr(val, "sizes") else None

    for chain in plan.chains:
        for instruction in chain.instructions:
            call = instruction.instr_args
            if not hasattr(call, "op_index"):
                continue  # a delegate call, a move, a jump: counted elsewhere or no work
            name = names[call.op_index]
            if name not in ("aten::convolution", "aten::addmm", "aten::mm", "aten::bmm"):
                continue
            args = list(call.args)
            transposed = name == "aten::convolution" and bool(getattr(values[args[6]].val, "bool_val", False))
            flops = _kernel_flops(name, [sizes(a) for a in args], transposed)
            by_op[name] = by_op.get(name, 0) + flops


def mac_work(path: str) -> GraphWork:
    """The program's MAC FLOPs (`flops`, `flops_by_op`), or why they could not be read
    (`flops_unmeasured`: the check is then unmeasured)."""
    try:
        by_op = read_work(path)
    except WorkUnreadable as exc:
        return {"flops": None, "flops_by_op": {}, "flops_unmeasured": str(exc)}
    return {"flops": sum(by_op.values()), "flops_by_op": by_op}


def read_work(path: str) -> dict[str, int]:
    from executorch.exir._serialize._program import deserialize_pte_binary

    try:
        with open(path, "rb") as fh:
            program = deserialize_pte_binary(fh.read()).program
    except (OSError, ValueError, RuntimeError, struct.error, IndexError) as exc:  # what flatbuffers raises on junk
        raise WorkUnreadable(f"{path}: not a readable ExecuTorch program ({exc})") from exc
    plan = program.execution_plan[0]
    by_op: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="nnlite-work-") as scratch:
        for delegate in plan.delegates:
            if delegate.id != XNNPACK:
                raise WorkUnreadable(f"{path}: a {delegate.id} partition, whose graph this reader does not know")
            if delegate.processed.location.name != "INLINE":
                raise WorkUnreadable(f"{path}: an XNNPACK partition stored outside the program")
            payload = program.backend_delegate_data[delegate.processed.index].data
            try:
                graph = _xnn_graph(payload, scratch)
            except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as exc:
                raise WorkUnreadable(f"{path}: an XNNPACK partition could not be decoded ({exc})") from exc
            dims = _dims(graph)
            for node in graph.get("xnodes") or []:
                kind = node.get("xnode_union_type", "")
                try:
                    flops = xnn_node_flops(kind, node.get("xnode_union") or {}, dims)
                except (KeyError, IndexError) as exc:
                    raise WorkUnreadable(f"{path}: an {kind} node without the tensors it names ({exc})") from exc
                if flops:
                    by_op[kind] = by_op.get(kind, 0) + flops
    _kernel_work(plan, by_op)
    return by_op
