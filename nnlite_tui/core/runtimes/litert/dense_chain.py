"""A .tflite written directly (no converter): a chain of FULLY_CONNECTED layers with seeded weights.

Used by the memory-bound reference (core/bench/reference_memory.py): at batch 1 a fully connected
layer reads each weight once per inference and does one multiply-add with it, so a chain whose
weights are many times the last-level cache is timed by the memory bandwidth the device has left,
which is what a neighbour on a shared host or a warm phone takes away from large models. Written
from the LiteRT schema so that the same bytes come out on every machine, without PyTorch.
"""

from __future__ import annotations

import os
from pathlib import Path


def weights(width: int, layers: int, seed: int):
    """The layers' weights: float32 [width, width] each, N(0, 1/width) so activations stay near unit scale."""
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(seed))
    scale = np.float32(1.0 / np.sqrt(width))
    return [(rng.standard_normal((width, width), dtype=np.float32) * scale) for _ in range(layers)]


def write_dense_chain(path: str | Path, width: int, layers: int, seed: int) -> None:
    """Write the chain input [1, width] -> FC -> ... -> FC -> output [1, width] (atomically)."""
    import flatbuffers
    import numpy as np
    from ai_edge_litert import schema_py_generated as s

    model = s.ModelT()
    model.version = 3
    code = s.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = s.BuiltinOperator.FULLY_CONNECTED
    code.version = 1
    model.operatorCodes = [code]
    model.buffers = [s.BufferT()]  # buffer 0: empty, for the activations
    graph = s.SubGraphT()
    graph.tensors, graph.operators = [], []

    def tensor(name: str, shape: list[int], buffer: int) -> int:
        t = s.TensorT()
        t.shape, t.type, t.buffer, t.name = shape, s.TensorType.FLOAT32, buffer, name
        graph.tensors.append(t)
        return len(graph.tensors) - 1

    x = tensor("input", [1, width], 0)
    first = x
    for i, w in enumerate(weights(width, layers, seed)):
        buf = s.BufferT()
        buf.data = np.frombuffer(w.tobytes(), dtype=np.uint8)
        model.buffers.append(buf)
        w_index = tensor(f"w{i}", [width, width], len(model.buffers) - 1)
        y = tensor(f"a{i}", [1, width], 0)
        op = s.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = 0, [x, w_index, -1], [y]
        options = s.FullyConnectedOptionsT()
        options.fusedActivationFunction = s.ActivationFunctionType.NONE
        op.builtinOptionsType, op.builtinOptions = s.BuiltinOptions.FullyConnectedOptions, options
        graph.operators.append(op)
        x = y
    graph.inputs, graph.outputs = [first], [x]
    model.subgraphs = [graph]
    signature = s.SignatureDefT()
    signature.signatureKey, signature.subgraphIndex = "serving_default", 0
    signature.inputs, signature.outputs = [s.TensorMapT()], [s.TensorMapT()]
    signature.inputs[0].name, signature.inputs[0].tensorIndex = "args_0", first
    signature.outputs[0].name, signature.outputs[0].tensorIndex = "output_0", x
    model.signatureDefs = [signature]
    builder = flatbuffers.Builder(width * width * 4 * layers + (1 << 20))
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(builder.Output())
    os.replace(tmp, path)
