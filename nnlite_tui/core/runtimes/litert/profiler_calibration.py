"""The profiler's per-op cost, measured on models where it is the only thing to measure.

With a profiler attached, every run pays, per op event, for XNNPACK's clock reads and for handing
the operator's name and time to the profiler (or, for builtin kernels, for the profiler's scoped
event), whether or not the profiler records, and, while it records, for storing the event (a copy
of its tag). On a model whose runs take milliseconds that cost (a fraction of a µs per op) is far
below the difference between two compiled instances of the model, so it is measured here on two
generated models that do almost nothing else: chains of 8 and 256 ADDs of a 16-float tensor, each
run in turn compiled without a profiler, with one attached but idle, and with one recording. The
differences per run, against the number of ops, give a fixed cost and a cost per op event; both
are properties of this library on this host, measured once per process and kernel mode. ADD's
XNNPACK name is short ("Add (ND)"): a longer operator name costs a little more to copy.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

SMALL_OPS, LARGE_OPS = 8, 256
PAIRS, SECONDS = 600, 0.4
_measured: dict[tuple[str, int], Calibration] = {}


@dataclass(frozen=True)
class Calibration:
    fixed_us: float  # per run
    per_op_us: float  # per op event of the run, recording: collection and storing the event
    collection_per_op_us: float = 0.0  # the collection part alone (what an idle profiler costs)

    def cost_us(self, op_events: int) -> float:
        return self.fixed_us + self.per_op_us * op_events


def chain_model(path: str, ops: int) -> None:
    """A valid .tflite: `ops` ADDs in a chain, x -> x + x -> ..., float32 [1, 16], one signature."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    model = s.ModelT()
    model.version = 3
    code = s.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = s.BuiltinOperator.ADD
    code.version = 1
    model.operatorCodes = [code]
    model.buffers = [s.BufferT()]
    graph = s.SubGraphT()
    graph.tensors = []
    for i in range(ops + 1):
        tensor = s.TensorT()
        tensor.shape, tensor.type, tensor.buffer, tensor.name = [1, 16], s.TensorType.FLOAT32, 0, f"t{i}"
        graph.tensors.append(tensor)
    graph.operators = []
    for i in range(ops):
        op = s.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = 0, [i, i], [i + 1]
        op.builtinOptionsType, op.builtinOptions = s.BuiltinOptions.AddOptions, s.AddOptionsT()
        graph.operators.append(op)
    graph.inputs, graph.outputs = [0], [ops]
    model.subgraphs = [graph]
    signature = s.SignatureDefT()
    signature.signatureKey, signature.subgraphIndex = "serving_default", 0
    signature.inputs, signature.outputs = [s.TensorMapT()], [s.TensorMapT()]
    signature.inputs[0].name, signature.inputs[0].tensorIndex = "args_0", 0
    signature.outputs[0].name, signature.outputs[0].tensorIndex = "output_0", ops
    model.signatureDefs = [signature]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    with open(path, "wb") as f:
        f.write(builder.Output())


# (lib, model path, kernel mode, threads) -> what an idle and a recording profiler add to a run, µs
AddedCosts = Callable[[object, str, str, int], tuple[float, float]]


def calibrate(lib, kernel_mode: str, threads: int, added_costs: AddedCosts) -> Calibration:
    """The per-op cost for this kernel mode and thread count (measured once per process).

    `added_costs` is op_profile.profiler_added_costs: the profiler's sessions live there, and this
    module stays below it."""
    key = (kernel_mode, threads)
    if key not in _measured:
        with tempfile.TemporaryDirectory(prefix="nnlite-calib-") as tmp:
            costs = []
            for ops in (SMALL_OPS, LARGE_OPS):
                path = os.path.join(tmp, f"chain{ops}.tflite")
                chain_model(path, ops)
                costs.append(added_costs(lib, path, kernel_mode, threads))
        (idle_small, recording_small), (idle_large, recording_large) = costs
        # Per op: the recording profiler's slope (collection and storage: the memory snapshots of the
        # run's DEFAULT events are the same for both chains and drop out). Per run: the idle
        # profiler's intercept (the snapshots are not in it; the profile's own timestamps give them).
        idle_per_op = max((idle_large - idle_small) / (LARGE_OPS - SMALL_OPS), 0.0)
        # A recording profiler also collects what an idle one does: a slope measured below the idle
        # one is the host's noise (its speed moves between the passes), not a cheaper recording.
        per_op = max((recording_large - recording_small) / (LARGE_OPS - SMALL_OPS), idle_per_op)
        _measured[key] = Calibration(fixed_us=max(idle_small - idle_per_op * SMALL_OPS, 0.0), per_op_us=per_op,
                                     collection_per_op_us=idle_per_op)
    return _measured[key]
