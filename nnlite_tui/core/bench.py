"""The benchmark protocol for LiteRT in Python, shared by the host device and the simulated device.

One run: load the model (timed as init, with allocate_tensors), fill a fixed seeded random input,
time the first invoke, do `warmup` untimed invokes, then time `invoke()` alone until both `runs`
timed runs and `min_seconds` of timed work are reached, capped by `max_runs` and `max_seconds`.
Only invoke() is inside the timed region: set_tensor happens once, before the loop.

`benchmark_result()` returns the protocol's result block (android-app/PROTOCOL.md): the same keys
the Android app writes, so host, simulated and real device results are read by one code path.
Failures are data: a failed run returns `valid: false` with the stage and error, never raises.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Any

from nnlite_tui.core.stats import summarize

BACKENDS = ("xnnpack", "cpu", "gpu", "nnapi")
# What LiteRT in Python can run on a host CPU; other requests fall back, and the result says so.
HOST_BACKENDS = ("xnnpack", "cpu")
PROFILE_MODES = (None, "xnnpack", "builtin", "both")
# Settings of the host's own profiled pass; not part of the device protocol (android-app/PROTOCOL.md).
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
    # After the timed runs, a separate profiled pass: "xnnpack", "builtin" or "both" kernel modes.
    profile_ops: str | None = None
    profile_runs: int = 20

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.runs < 1 or self.min_seconds < 0 or self.threads < 1:
            raise ValueError(f"invalid benchmark settings: {self}")
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


def make_input(shape, dtype, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(size=tuple(shape)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -128), min(info.max, 127), size=tuple(shape), dtype=dtype)


def run_benchmark(model_path: str, settings: BenchSettings) -> dict[str, Any]:
    """Run the protocol; raise BenchmarkError(stage, ...) on failure."""
    if not os.path.isfile(model_path):
        raise BenchmarkError("load", f"model file not found: {model_path}")
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

    inputs = interpreter.get_input_details()
    try:
        for detail in inputs:
            interpreter.set_tensor(detail["index"], make_input(detail["shape"], detail["dtype"], settings.seed))
        invoke = interpreter.invoke
        t0 = time.perf_counter_ns()
        invoke()
        first_ns = time.perf_counter_ns() - t0
        for _ in range(settings.warmup):
            invoke()
        samples: list[int] = []
        min_ns = int(settings.min_seconds * 1e9)
        cap_ns = int(settings.max_seconds * 1e9)
        timed_total = 0
        perf = time.perf_counter_ns
        while True:
            t0 = perf()
            invoke()
            dt = perf() - t0
            samples.append(dt)
            timed_total += dt
            n = len(samples)
            if n >= settings.max_runs or timed_total >= cap_ns:
                break
            if n >= settings.runs and timed_total >= min_ns:
                break
    except Exception as exc:
        raise BenchmarkError("invoke", exc) from exc

    return {
        "init_ns": init_ns,
        "first_inference_ns": first_ns,
        "stats": summarize(samples),
        "samples_ns": samples,
        "timed_seconds": timed_total / 1e9,
        "input_shapes": [[int(d) for d in detail["shape"]] for detail in inputs],
        "input_dtypes": [str(detail["dtype"].__name__) for detail in inputs],
        "output_shapes": [[int(d) for d in o["shape"]] for o in interpreter.get_output_details()],
    }


def benchmark_result(model_path: str, settings: BenchSettings, run_id: str = "", profile: bool = True) -> dict[str, Any]:
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
        "runs": settings.runs,
        "min_seconds": settings.min_seconds,
        "seed": settings.seed,
    }
    try:
        measured = run_benchmark(model_path, settings)
    except BenchmarkError as err:
        return {**base, "valid": False, "error_stage": err.stage, "error_type": err.error_type,
                "error_message": err.message}
    result = {**base, "valid": True, "error_stage": None, "error_type": None, "error_message": None, **measured}
    if profile and settings.profile_ops:
        # Only now, after the timed runs: the profiled pass never shares time with them.
        from nnlite_tui.core.predict.profiled_pass import profiled_pass

        result.update(profiled_pass(model_path, settings))
    return result
