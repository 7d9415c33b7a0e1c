"""The rows of the constant table each integer input of a .tflite indexes: the graph's own word on token ranges.

An id input feeds EMBEDDING_LOOKUP (ids, table) or GATHER (table, ids), directly or through ops that
keep its values (CAST, RESHAPE, SLICE, STRIDED_SLICE, SQUEEZE, EXPAND_DIMS, and the SELECT by which PyTorch's indexing
wraps negative ids), or GATHER_ND with one index per lookup; the table's first
dimension bounds the ids. The worker takes an input's range from PyTorch's embedding first
(convert/worker/token_ranges.py); this fills it for an input whose lookup PyTorch did not show
(`F.embedding` not called: `weight[ids]`, `index_select`, a gather), so any .tflite with such a table
is filled in range. Reads the flatbuffer with the schema module shipped with ai-edge-litert.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_KEEPS_VALUES = ("CAST", "RESHAPE", "SLICE", "STRIDED_SLICE", "SQUEEZE", "EXPAND_DIMS")
_INTEGER_TYPES = (2, 4, 7, 9, 3)  # int32, int64, int16, int8, uint8 (schema TensorType)


def table_rows(path: str) -> dict[int, int]:
    """{input number (args_<n> of the signature, else its position): rows of the smallest table it indexes}."""
    from ai_edge_litert import schema_py_generated as schema

    with open(path, "rb") as f:
        model = schema.Model.GetRootAs(f.read(), 0)
    sub = model.Subgraphs(0)
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]

    def constant(t: int) -> bool:
        index = sub.Tensors(t).Buffer()
        buffer = model.Buffers(index) if index > 0 else None
        return buffer is not None and (buffer.DataLength() > 0 or buffer.Size() > 0)

    ops: list[tuple[str, list[int], list[int]]] = []
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        code = codes[op.OpcodeIndex()]
        kind = names.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()), "")
        if kind == "GATHER" and _gather_axis(schema, op) != 0:
            kind = "GATHER_OTHER_AXIS"  # indexes columns or deeper: the table's rows do not bound it
        ops.append((kind, list(op.InputsAsNumpy()) if op.InputsLength() else [],
                    list(op.OutputsAsNumpy()) if op.OutputsLength() else []))
    rows: dict[int, int] = {}
    for position in range(sub.InputsLength()):
        tensor = int(sub.Inputs(position))
        if sub.Tensors(tensor).Type() not in _INTEGER_TYPES:
            continue
        found = _rows_from(tensor, ops, sub, constant)
        if found:
            name = sub.Tensors(tensor).Name().decode(errors="replace")
            number = re.search(r"args_(\d+)", name)
            rows[int(number.group(1)) if number else position] = min(found)
    return rows


def _last_dim(sub, t: int) -> int | None:
    shape = sub.Tensors(t).ShapeAsNumpy() if sub.Tensors(t).ShapeLength() else []
    return int(shape[-1]) if len(shape) else None


def _gather_axis(schema, op) -> int:
    table = op.BuiltinOptions()
    if table is None:
        return 0
    options = schema.GatherOptions()
    options.Init(table.Bytes, table.Pos)
    return int(options.Axis())


def _rows_from(tensor: int, ops, sub, constant) -> list[int]:
    """First dimensions of the constant tables `tensor` (or what keeps its values) indexes."""
    seen, todo, found = set(), [tensor], []
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        for kind, ins, outs in ops:
            if kind == "EMBEDDING_LOOKUP" and ins[:1] == [t] and len(ins) > 1 and constant(ins[1]):
                found.append(int(sub.Tensors(ins[1]).Shape(0)))
            elif kind == "GATHER" and len(ins) > 1 and ins[1] == t and constant(ins[0]):
                found.append(int(sub.Tensors(ins[0]).Shape(0)))
            elif kind == "GATHER_ND" and len(ins) > 1 and ins[1] == t and constant(ins[0]) and _last_dim(sub, t) == 1:
                found.append(int(sub.Tensors(ins[0]).Shape(0)))  # one index per lookup: a row
            elif (kind in _KEEPS_VALUES and ins[:1] == [t]) or (kind in ("SELECT", "SELECT_V2") and t in ins[1:]):
                # SELECT: PyTorch's `table[ids]` wraps negative ids (ids + rows where ids < 0) before the
                # lookup; an id in [0, rows) passes it unchanged
                todo.extend(outs)
    return found


def with_table_ranges(signature: Sequence[Mapping[str, object]], path: str) -> Sequence[Mapping[str, object]]:
    """The signature with a range from the graph's table for each integer input that has none (its
    entries are the conversion's input_signature: this reads their `dtype` and `range` only)."""
    integer = ("int8", "int16", "int32", "int64", "uint8")
    missing = [i for i, e in enumerate(signature) if e.get("dtype") in integer and "range" not in e]
    if not missing:
        return signature
    rows = table_rows(path)
    return [{**e, "range": [0, rows[i]], "range_from": "graph table"} if i in missing and i in rows else e
            for i, e in enumerate(signature)]
