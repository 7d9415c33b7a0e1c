"""Reads a .tflite graph: its ops in execution order, their tensors, the parameters that set their cost,
and the work each does (FLOPs, bytes moved).

Reads the flatbuffer lazily through the schema module shipped with ai-edge-litert (no interpreter, no
weights decoded), so a 50 MB model reads in milliseconds. FLOPs count a multiply-add as 2; bytes moved
are every input (weights included) plus every output, at the tensor's element size.
"""

from __future__ import annotations

from math import prod
from collections.abc import Mapping
from typing import Any, TypedDict, cast

from nnlite_tui.core.ops.graph import Graph, GraphError, GraphOp, ParamValue, Tensor

_DTYPES = {0: ("float32", 4), 1: ("float16", 2), 2: ("int32", 4), 3: ("uint8", 1), 4: ("int64", 8),
           6: ("bool", 1), 7: ("int16", 2), 9: ("int8", 1), 10: ("float64", 8), 16: ("uint32", 4)}
_ACTIVATIONS = {0: None, 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT", 6: "SIGMOID"}
_PADDING = {0: "SAME", 1: "VALID"}
# The ops whose FLOPs are multiply-accumulates, what the compute check compares with PyTorch's count;
# the other ops' figure is an element count (core/convert/compute_check.py).
MAC_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "CONV_3D", "FULLY_CONNECTED", "BATCH_MATMUL")


def _op_names() -> dict[int, str]:
    from ai_edge_litert import schema_py_generated as schema

    return {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}


def _options(op, cls):
    table = op.BuiltinOptions()
    if table is None:
        return None
    opts = cls()
    opts.Init(table.Bytes, table.Pos)
    return opts


class OpParams(TypedDict, total=False):
    """What sets an op's cost beside its tensors (GraphOp.params; its cost key)."""

    kernel: str  # "3x3" (a 3D convolution: "dxhxw")
    stride: str  # "1x1"
    padding: str  # "SAME", "VALID"
    dilation: str
    act: str | None  # the fused activation
    cin: int
    cout: int
    groups: int
    units: int  # FULLY_CONNECTED: output units and input depth
    depth: int


def _params(schema: Any, op_type: str, op: Any, ins: list[Tensor], outs: list[Tensor]) -> OpParams:
    p: OpParams = {}
    if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV") and len(ins) >= 2:
        weights = ins[1]  # TRANSPOSE_CONV: (output shape, weights, input)
        if len(weights.shape) == 4:
            p["kernel"] = f"{weights.shape[1]}x{weights.shape[2]}"
        cls = {"CONV_2D": schema.Conv2DOptions, "DEPTHWISE_CONV_2D": schema.DepthwiseConv2DOptions,
               "TRANSPOSE_CONV": schema.TransposeConvOptions}[op_type]
        opts = _options(op, cls)
        if opts is not None:
            p["stride"] = f"{opts.StrideH()}x{opts.StrideW()}"
            p["padding"] = _PADDING.get(opts.Padding(), opts.Padding())
            if op_type != "TRANSPOSE_CONV":
                p["dilation"] = f"{opts.DilationHFactor()}x{opts.DilationWFactor()}"
                p["act"] = _ACTIVATIONS.get(opts.FusedActivationFunction())
        data_in = ins[2] if op_type == "TRANSPOSE_CONV" and len(ins) > 2 else ins[0]
        if len(data_in.shape) == 4 and len(weights.shape) == 4:
            p["cin"] = data_in.shape[3]
            p["cout"] = outs[0].shape[3] if outs and len(outs[0].shape) == 4 else weights.shape[0]
            if op_type == "CONV_2D":
                p["groups"] = max(1, data_in.shape[3] // max(1, weights.shape[3]))
            elif op_type == "DEPTHWISE_CONV_2D":
                p["groups"] = data_in.shape[3]
    elif op_type in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        opts = _options(op, schema.Pool2DOptions)
        if opts is not None:
            p["kernel"] = f"{opts.FilterHeight()}x{opts.FilterWidth()}"
            p["stride"] = f"{opts.StrideH()}x{opts.StrideW()}"
            p["padding"] = _PADDING.get(opts.Padding(), opts.Padding())
    elif op_type == "CONV_3D" and len(ins) >= 2 and len(ins[1].shape) == 5:
        # filter [depth, height, width, in channels (per group), out channels]
        kd, kh, kw, cin, cout = ins[1].shape
        p["kernel"], p["cin"], p["cout"] = f"{kd}x{kh}x{kw}", cin, cout
    elif op_type == "FULLY_CONNECTED" and len(ins) >= 2 and len(ins[1].shape) == 2:
        p["units"], p["depth"] = ins[1].shape[0], ins[1].shape[1]
    return p


def _work(op_type: str, params: OpParams, ins: list[Tensor], outs: list[Tensor]) -> int:
    out_elems = prod(outs[0].shape) if outs and outs[0].shape else 1
    if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D") and "kernel" in params and "cin" in params:
        kh, kw = map(int, params["kernel"].split("x"))
        per_out = kh * kw * (params["cin"] // params.get("groups", 1) if op_type == "CONV_2D" else 1)
        return 2 * out_elems * per_out
    if op_type == "TRANSPOSE_CONV" and "kernel" in params and len(ins) > 2:
        kh, kw = map(int, params["kernel"].split("x"))
        return 2 * prod(ins[2].shape) * kh * kw * params.get("cout", 1)
    if op_type == "CONV_3D" and "kernel" in params:
        # every output element is a sum over its kd x kh x kw window of the filter's input channels
        return 2 * out_elems * prod(map(int, params["kernel"].split("x"))) * params["cin"]
    if op_type == "FULLY_CONNECTED" and "depth" in params:
        return 2 * out_elems * params["depth"]
    if op_type == "BATCH_MATMUL" and ins and len(ins[0].shape) >= 2:
        return 2 * out_elems * ins[0].shape[-1]
    if op_type in ("MAX_POOL_2D", "AVERAGE_POOL_2D") and "kernel" in params:
        kh, kw = map(int, params["kernel"].split("x"))
        return out_elems * kh * kw
    if op_type in ("MEAN", "SUM", "REDUCE_MAX", "SOFTMAX", "LOG_SOFTMAX") and ins:
        return prod(ins[0].shape) if ins[0].shape else 1
    return out_elems


def read_graph(path: str) -> Graph:
    """The main subgraph's ops, in execution order; GraphError names the file when it cannot be read."""
    from ai_edge_litert import schema_py_generated as schema

    try:
        with open(path, "rb") as f:
            buf = f.read()
        model = schema.Model.GetRootAs(buf, 0)
        sub = model.Subgraphs(0)
    except (OSError, IndexError, ValueError, TypeError) as exc:
        raise GraphError(f"{path}: not a readable .tflite model ({exc})") from exc
    if sub is None:
        raise GraphError(f"{path}: the model has no subgraph")
    names = _op_names()
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]

    def tensor(i: int) -> Tensor:
        t = sub.Tensors(i)
        b = model.Buffers(t.Buffer()) if t.Buffer() > 0 else None
        constant = b is not None and (b.DataLength() > 0 or b.Size() > 0)
        name = _DTYPES.get(t.Type(), (f"type{t.Type()}", 4))[0]
        return Tensor(shape=[int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else [], dtype=name,
                      constant=constant)

    ops = []
    for index in range(sub.OperatorsLength()):
        op = sub.Operators(index)
        code = codes[op.OpcodeIndex()]
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        op_type = names.get(builtin, f"OP{builtin}")
        if op_type == "CUSTOM" and code.CustomCode():
            op_type = f"CUSTOM:{code.CustomCode().decode(errors='replace')}"
        ins = [tensor(i) for i in (op.InputsAsNumpy() if op.InputsLength() else []) if i >= 0]
        outs = [tensor(i) for i in (op.OutputsAsNumpy() if op.OutputsLength() else []) if i >= 0]
        params = _params(schema, op_type, op, ins, outs)
        ops.append(GraphOp(index=index, type=op_type, inputs=ins, outputs=outs, params=dict(cast(Mapping[str, ParamValue], params)),  # every OpParams value is one
                           flops=_work(op_type, params, ins, outs),
                           bytes_moved=sum(t.bytes for t in ins) + sum(t.bytes for t in outs)))
    return Graph(path=path, ops=ops)
