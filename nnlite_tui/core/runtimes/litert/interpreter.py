"""LiteRT's interpreter as a benchmark session (bench/protocol.py's BenchSession).

The session times the interpreter's own `invoke` (no wrapper of ours inside the timed region) and,
beside it, the binding's call into the C++ Interpreter::Invoke: the host's nearest equivalent of
Java's getLastNativeInferenceDurationNanoseconds.
"""

from __future__ import annotations

import time
from typing import Any

from nnlite_tui.core.bench.block import Delegation, InputDetail, SessionTiming
from nnlite_tui.core.bench.settings import BenchmarkError, BenchSettings

# What LiteRT in Python can run on a host CPU; other requests fall back, and the result says so.
HOST_BACKENDS = ("xnnpack", "cpu")


def host_backend(requested: str, path: str | None = None) -> tuple[str, str | None]:
    """The backend a host benchmark uses for `requested`, and why it differs (None when it does not);
    the same for every .tflite."""
    if requested in HOST_BACKENDS:
        return requested, None
    return "xnnpack", f"{requested} delegate is not available to LiteRT in Python on this CPU; ran XNNPACK"


def make_interpreter(model_path: str, settings: BenchSettings):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    resolver = (
        OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if settings.backend == "cpu" else OpResolverType.AUTO
    )
    return Interpreter(model_path=model_path, num_threads=settings.threads, experimental_op_resolver_type=resolver)


class NativeClock:
    """The last native interval (ns) of an interpreter whose binding is wrapped by TimedBinding."""

    last_ns: int | None = None


class TimedBinding:
    """Stands between Python's Interpreter and its C++ binding to time the binding's Invoke call:
    the host's nearest equivalent of Java's getLastNativeInferenceDurationNanoseconds. Nothing but
    the interpreter may hold it: Interpreter.invoke() refuses to run while anything else refers to
    its binding (it counts references), so callers keep only the NativeClock."""

    def __init__(self, binding, clock: NativeClock):
        self._binding, self._clock = binding, clock

    def Invoke(self):  # noqa: N802 - the binding's name
        t0 = time.perf_counter_ns()
        try:
            return self._binding.Invoke()
        finally:
            self._clock.last_ns = time.perf_counter_ns() - t0

    def __getattr__(self, name):
        return getattr(self._binding, name)


def attach_native_clock(interpreter) -> NativeClock | None:
    binding = getattr(interpreter, "_interpreter", None)
    if binding is None or not hasattr(binding, "Invoke"):
        return None  # another interpreter (a scripted one in tests): no native interval
    clock = NativeClock()
    interpreter._interpreter = TimedBinding(binding, clock)
    return clock


def graph_delegation(interpreter: Any, backend: str) -> Delegation:
    """What LiteRT in Python says about delegation: each delegate partition is one DELEGATE node in
    the graph, so partitions and the model's own node count are known; how many nodes a partition
    took is not exposed (on Android the app reads it from LiteRT's log line), so it stays null."""
    try:
        ops = interpreter._get_ops_details()
    except (AttributeError, RuntimeError, ValueError) as exc:
        return {"source": "interpreter graph", "delegate": None, "delegated_nodes": None, "total_nodes": None,
                "partitions": None, "full": None, "applied": [], "error": f"{type(exc).__name__}: {exc}"}
    partitions = sum(1 for op in ops if op.get("op_name") == "DELEGATE")
    return {"source": "interpreter graph", "delegate": None, "delegated_nodes": 0 if partitions == 0 else None,
            "total_nodes": len(ops) - partitions, "partitions": partitions,
            "full": False if partitions == 0 else None, "applied": [], "error": None}


class LiteRtSession:
    """A loaded, allocated interpreter (bench.protocol.BenchSession)."""

    timing: SessionTiming = {"wall_clock": "Interpreter.invoke", "native_clock": "InterpreterWrapper.Invoke"}
    reset_inputs = None  # inputs are set once: the interpreter never writes over its input tensors

    def __init__(self, interpreter, backend: str):
        self.interpreter = interpreter
        self.backend = backend
        self._delegation: Delegation | None = None
        self.native = attach_native_clock(interpreter)
        if self.native is None:
            self.timing = {**self.timing, "native_clock": None}
        self.invoke = interpreter.invoke

    def inputs(self) -> list[InputDetail]:
        return self.interpreter.get_input_details()  # LiteRT's own description, which InputDetail copies

    def set_input(self, detail: InputDetail, value: Any) -> None:
        self.interpreter.set_tensor(detail["index"], value)

    def output_shapes(self) -> list[list[int]]:
        return [[int(d) for d in o["shape"]] for o in self.interpreter.get_output_details()]

    def delegation(self) -> Delegation:
        if self._delegation is None:
            self._delegation = graph_delegation(self.interpreter, self.backend)
        return self._delegation

    def check(self, settings: BenchSettings) -> None:
        delegation = self.delegation()
        if settings.require_full_delegation and settings.backend != "cpu" and delegation["full"] is not True:
            raise BenchmarkError("load", "require_full_delegation: LiteRT's Python API does not tell how many nodes "
                                         f"the delegate took ({delegation['partitions']} delegate partitions)")


def open_session(model_path: str, settings: BenchSettings) -> LiteRtSession:
    """Load and allocate `model_path` (the protocol's init); BenchmarkError("load"|"allocate", ...)."""
    try:
        interpreter = make_interpreter(model_path, settings)
    except Exception as exc:  # the interpreter raises ValueError/RuntimeError for unsupported ops
        raise BenchmarkError("load", exc) from exc
    try:
        interpreter.allocate_tensors()
    except Exception as exc:
        raise BenchmarkError("allocate", exc) from exc
    return LiteRtSession(interpreter, settings.backend)
