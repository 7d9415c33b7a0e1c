"""The benchmark protocol for LiteRT in Python, shared by the host device and the simulated device.

One run: load the model (timed as init, with allocate_tensors), fill a fixed seeded random input,
time the first invoke, warm up until both `warmup` invokes and `warmup_seconds` of warm-up work are
reached, then time `invoke()` alone until both `runs` timed runs and `min_seconds` of timed work
are reached, capped by `max_runs` and `max_seconds`. Only invoke() is inside the timed region:
set_tensor happens once, before the loop. Each timed run also records the native interval, the
binding's call into the C++ Interpreter::Invoke, beside the wall time of the Python invoke().

`benchmark_result()` returns the protocol's result block (android-app/PROTOCOL.md): the same keys
the Android app writes, so host, simulated and real device results are read by one code path.
Failures are data: a failed run returns `valid: false` with the stage and error, never raises.
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from nnlite_tui.core.stats import summarize

BACKENDS = ("xnnpack", "cpu", "gpu", "nnapi")
# What LiteRT in Python can run on a host CPU; other requests fall back, and the result says so.
HOST_BACKENDS = ("xnnpack", "cpu")
PROFILE_MODES = (None, "xnnpack", "builtin", "both")
# Settings of the profiled pass: optional extras of the device protocol, not settings of the app's
# benchmark (android-app/PROTOCOL.md, section 9e).
HOST_ONLY_SETTINGS = ("profile_ops", "profile_runs")


@dataclass(frozen=True)
class BenchSettings:
    warmup: int = 5
    runs: int = 50
    min_seconds: float = 1.0
    max_runs: int = 10_000
    max_seconds: float = 60.0
    threads: int = 1
    backend: str = "xnnpack"
    seed: int = 0
    # As LiteRT's benchmark_model (--warmup_min_secs): warm up by time as well as by count.
    warmup_seconds: float = 0.5
    # As benchmark_model's --require_full_delegation: fail when a delegate takes only part of the graph.
    require_full_delegation: bool = False
    # After the timed runs, a separate profiled pass: "xnnpack", "builtin" or "both" kernel modes.
    profile_ops: str | None = None
    profile_runs: int = 20

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.runs < 1 or self.min_seconds < 0 or self.threads < 1:
            raise ValueError(f"invalid benchmark settings: {self}")
        if not (math.isfinite(self.warmup_seconds) and self.warmup_seconds >= 0):
            raise ValueError(f"warmup_seconds must be a finite number >= 0, got {self.warmup_seconds}")
        if self.max_runs < self.runs:
            raise ValueError(f"max_runs {self.max_runs} below runs {self.runs}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend {self.backend!r} not one of {BACKENDS}")
        if self.profile_ops not in PROFILE_MODES:
            raise ValueError(f"profile_ops {self.profile_ops!r} not one of {PROFILE_MODES}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class BenchmarkError(Exception):
    def __init__(self, stage: str, error: BaseException | str):
        self.stage = stage
        if isinstance(error, BaseException):
            self.error_type = f"{type(error).__module__}.{type(error).__name__}"
            self.message = first_line(str(error)) or type(error).__name__
        else:
            self.error_type = "BenchmarkError"
            self.message = error
        super().__init__(f"{stage}: {self.message}")


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _make_interpreter(model_path: str, settings: BenchSettings):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    resolver = (
        OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if settings.backend == "cpu" else OpResolverType.AUTO
    )
    return Interpreter(model_path=model_path, num_threads=settings.threads, experimental_op_resolver_type=resolver)


def make_input(shape, dtype, seed: int, quantization=None):
    """The seeded input for one tensor. A quantized integer tensor (`quantization` = the detail's
    (scale, zero_point) with scale > 0) gets the same standard-normal sample a float tensor gets,
    quantized with its scale and zero point; an unquantized integer tensor (ids, masks) gets small
    random integers."""
    import numpy as np

    from nnlite_tui.core.tensor_quant import quantize

    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(size=tuple(shape)).astype(dtype)
    if quantization is not None and float(quantization[0]) > 0.0:
        sample = rng.standard_normal(size=tuple(shape))
        return quantize(sample, dtype, float(quantization[0]), int(quantization[1]))
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -128), min(info.max, 127), size=tuple(shape), dtype=dtype)


class NativeClock:
    """The last native interval (ns) of an interpreter whose binding is wrapped by _TimedBinding."""

    last_ns: int | None = None


class _TimedBinding:
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
    interpreter._interpreter = _TimedBinding(binding, clock)
    return clock


def graph_delegation(interpreter, backend: str) -> dict[str, Any]:
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


def memory_snapshot() -> dict[str, int | None]:
    """This process's VmRSS/VmHWM (kB, /proc/self/status) and glibc's heap (mallinfo2), the host's
    counterpart of Debug.getNativeHeapSize/getNativeHeapAllocatedSize; None where unavailable."""
    out: dict[str, int | None] = {"vm_rss_kb": None, "vm_hwm_kb": None, "native_heap_size_kb": None,
                                  "native_heap_allocated_kb": None}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out["vm_rss_kb" if key == "VmRSS" else "vm_hwm_kb"] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass  # not Linux: the values stay None
    heap = _mallinfo2()
    if heap is not None:
        out["native_heap_size_kb"], out["native_heap_allocated_kb"] = heap
    return out


def _mallinfo2() -> tuple[int, int] | None:
    fn = _mallinfo2_function()
    if fn is None:
        return None  # not glibc >= 2.33
    info = fn()
    return (info.arena + info.hblkhd) // 1024, (info.uordblks + info.hblkhd) // 1024


@functools.lru_cache(maxsize=1)
def _mallinfo2_function():
    """glibc's mallinfo2, looked up once: find_library runs ldconfig, tens of ms a benchmark should not pay."""
    import ctypes
    import ctypes.util

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = MallInfo2
    return fn


def run_benchmark(model_path: str, settings: BenchSettings, fill: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run the protocol; raise BenchmarkError(stage, ...) on failure. `fill(shape, dtype, seed,
    quantization)` makes each input (make_input; the device simulator's input faults replace it)."""
    from nnlite_tui.core.input_check import fill_record

    fill = fill or make_input
    if not os.path.isfile(model_path):
        raise BenchmarkError("load", f"model file not found: {model_path}")
    mem_before = memory_snapshot()
    t0 = time.perf_counter_ns()
    try:
        interpreter = _make_interpreter(model_path, settings)
    except Exception as exc:  # the interpreter raises ValueError/RuntimeError for unsupported ops
        raise BenchmarkError("load", exc) from exc
    try:
        interpreter.allocate_tensors()
    except Exception as exc:
        raise BenchmarkError("allocate", exc) from exc
    init_ns = time.perf_counter_ns() - t0
    mem_loaded = memory_snapshot()
    delegation = graph_delegation(interpreter, settings.backend)
    if settings.require_full_delegation and settings.backend != "cpu" and delegation["full"] is not True:
        raise BenchmarkError("load", "require_full_delegation: LiteRT's Python API does not tell how many nodes "
                                     f"the delegate took ({delegation['partitions']} delegate partitions)")
    native = attach_native_clock(interpreter)
    native_samples: list[int] | None = [] if native is not None else None

    inputs = interpreter.get_input_details()
    fill_records = []
    try:
        for detail in inputs:
            fed = fill(detail["shape"], detail["dtype"], settings.seed, detail.get("quantization"))
            interpreter.set_tensor(detail["index"], fed)
            fill_records.append(fill_record(detail, fed))
        invoke = interpreter.invoke
        t0 = time.perf_counter_ns()
        invoke()
        first_ns = time.perf_counter_ns() - t0
        perf = time.perf_counter_ns
        min_ns = int(settings.min_seconds * 1e9)
        cap_ns = int(settings.max_seconds * 1e9)
        warmup_ns = int(settings.warmup_seconds * 1e9)
        warmup_runs = warmup_total = 0
        # The time part of warm-up is capped by max_seconds, so a huge warmup_seconds cannot hang.
        while warmup_runs < settings.warmup or (warmup_total < warmup_ns and warmup_total < cap_ns):
            t0 = perf()
            invoke()
            warmup_total += perf() - t0
            warmup_runs += 1
        samples: list[int] = []
        timed_total = 0
        while True:
            t0 = perf()
            invoke()
            dt = perf() - t0
            samples.append(dt)
            if native_samples is not None:
                native_samples.append(native.last_ns)
            timed_total += dt
            n = len(samples)
            if n >= settings.max_runs or timed_total >= cap_ns:
                break
            if n >= settings.runs and timed_total >= min_ns:
                break
    except Exception as exc:
        raise BenchmarkError("invoke", exc) from exc
    mem_after = memory_snapshot()

    return {
        "init_ns": init_ns,
        "first_inference_ns": first_ns,
        "stats": summarize(samples),
        "samples_ns": samples,
        "timed_seconds": timed_total / 1e9,
        "input_shapes": [[int(d) for d in detail["shape"]] for detail in inputs],
        "input_dtypes": [str(detail["dtype"].__name__) for detail in inputs],
        "input_fill": fill_records,
        "output_shapes": [[int(d) for d in o["shape"]] for o in interpreter.get_output_details()],
        "timing": {"stats_of": "wall", "wall_clock": "Interpreter.invoke",
                   "native_clock": "InterpreterWrapper.Invoke" if native_samples is not None else None},
        "native_stats": summarize(native_samples) if native_samples else None,
        "native_samples_ns": native_samples,
        "warmup_runs": warmup_runs,
        "warmup_mean_ns": warmup_total / warmup_runs if warmup_runs else None,
        "delegation": delegation,
        "memory": {"source": "host", "before_load": mem_before, "after_load": mem_loaded, "after_runs": mem_after},
    }


def benchmark_result(model_path: str, settings: BenchSettings, run_id: str = "", profile: bool = True,
                     fill: Callable[..., Any] | None = None) -> dict[str, Any]:
    """The protocol's result block for one model, valid or not; with `profile` and settings.profile_ops,
    the profiled pass's ops block too (host_bench runs that pass itself, after saving the timings)."""
    used = settings.backend if settings.backend in HOST_BACKENDS else "xnnpack"
    base: dict[str, Any] = {
        "run_id": run_id,
        "model_path": model_path,
        "backend_requested": settings.backend,
        "backend_used": used,
        "fallback_reason": None if used == settings.backend else
        f"{settings.backend} delegate is not available to LiteRT in Python on this CPU; ran XNNPACK",
        "threads": settings.threads,
        "warmup": settings.warmup,
        "warmup_seconds": settings.warmup_seconds,
        "runs": settings.runs,
        "min_seconds": settings.min_seconds,
        "seed": settings.seed,
        "require_full_delegation": settings.require_full_delegation,
    }
    try:
        measured = run_benchmark(model_path, settings, fill)
    except BenchmarkError as err:
        return {**base, "valid": False, "error_stage": err.stage, "error_type": err.error_type,
                "error_message": err.message}
    result = {**base, "valid": True, "error_stage": None, "error_type": None, "error_message": None, **measured}
    if profile and settings.profile_ops:
        # Only now, after the timed runs: the profiled pass never shares time with them.
        from nnlite_tui.core.predict.profiled_pass import profiled_pass

        result.update(profiled_pass(model_path, settings))
    return result
