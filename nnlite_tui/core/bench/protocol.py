"""The benchmark protocol in Python, whatever the runtime: the host device and the simulated device.

One run: load the model (timed as init; the runtime's `open_session`), fill a fixed seeded random
input, time the first inference, warm up until both `warmup` inferences and `warmup_seconds` of
warm-up work are reached, then time the inference call alone until both `runs` timed runs and
`min_seconds` of timed work are reached, capped by `max_runs` and `max_seconds`. Only the inference
call is inside the timed region: inputs are set once, before the loop, or, for a runtime whose
memory plan reuses input buffers (ExecuTorch: the session's `reset_inputs`), again before every
inference, outside its timed interval. Where the runtime has a native clock (LiteRT: the binding's call into the C++ Interpreter::Invoke), each timed run records
the native interval beside the wall time.

`benchmark_result()` returns the protocol's result block (android-app/PROTOCOL.md): the same keys
the Android app writes, so host, simulated and real device results are read by one code path.
Failures are data: a failed run returns `valid: false` with the stage and error, never raises.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from nnlite_tui.core.bench.block import AfterTimed, BenchmarkBlock, FillRecord, InputDetail, Measured
from nnlite_tui.core.bench.input_check import fill_record
from nnlite_tui.core.bench.input_fill import make_input
from nnlite_tui.core.bench.memory import memory_snapshot
from nnlite_tui.core.bench.session import BenchSession
from nnlite_tui.core.bench.settings import BenchmarkError, BenchSettings
from nnlite_tui.core.bench.stats import summarize
from nnlite_tui.core.runtimes import get_runtime
from nnlite_tui.core.runtimes.default import DEFAULT_RUNTIME

Progress = Callable[..., None]  # progress(phase, **figures): a phase of the protocol begins


def run_protocol(session: BenchSession, settings: BenchSettings, fill: Callable[..., Any],
                 feed: Sequence[tuple[Sequence[int], str]] | None = None,
                 progress: Progress | None = None, ranges: Sequence[Sequence[int] | None] = ()) -> Measured:
    """Feed, warm up and time one loaded model; raise BenchmarkError("invoke", ...) on failure.
    `feed`: (shape, dtype name) per input to feed instead of what the model says, as a device that is
    told its inputs (the benchmark app with ExecuTorch) does. `progress(phase, **figures)` is told as
    the warm-up and the timed runs begin, outside any timed region (so a console can show them while
    they run). `ranges`: per input, the [low, high) of an integer input's valid values (Artifact.input_ranges),
    which its fill stays inside; () for none."""
    native = session.native
    native_samples: list[int] | None = [] if native is not None else None
    inputs = session.inputs() if feed is None else told_inputs(session.inputs(), feed)
    if ranges and len(ranges) != len(inputs):
        raise BenchmarkError("invoke", f"{len(ranges)} input ranges given for a model of {len(inputs)} inputs")
    fill_records: list[FillRecord] = []
    try:
        for i, detail in enumerate(inputs):
            value_range = ranges[i] if ranges else None
            fed = fill(detail["shape"], detail["dtype"], settings.seed, detail.get("quantization"), value_range)
            session.set_input(detail, fed)
            fill_records.append(fill_record(detail, fed, value_range))
        invoke = session.invoke
        timed = _timed_loop(invoke, settings, native, native_samples, progress, session.reset_inputs)
    except Exception as exc:  # whatever the runtime raises for a model it cannot run
        raise BenchmarkError("invoke", exc) from exc
    first_ns, warmup_runs, warmup_total, samples, timed_total = timed
    return {
        "first_inference_ns": first_ns,
        "stats": summarize(samples),
        "samples_ns": samples,
        "timed_seconds": timed_total / 1e9,
        "input_shapes": [[int(d) for d in detail["shape"]] for detail in inputs],
        "input_dtypes": [str(detail["dtype"].__name__) for detail in inputs],
        "input_fill": fill_records,
        "output_shapes": session.output_shapes(),
        "timing": {"stats_of": "wall", **session.timing},
        "native_stats": summarize(native_samples) if native_samples else None,
        "native_samples_ns": native_samples,
        "warmup_runs": warmup_runs,
        "warmup_mean_ns": warmup_total / warmup_runs if warmup_runs else None,
        "delegation": session.delegation(),
    }


def told_inputs(model_inputs: list[InputDetail], feed: Sequence[tuple[Sequence[int], str]]) -> list[InputDetail]:
    import numpy as np

    if len(feed) != len(model_inputs):
        raise BenchmarkError("invoke", f"{len(feed)} inputs given for a model of {len(model_inputs)} inputs")
    return [{**detail, "shape": [int(d) for d in shape], "dtype": np.dtype(dtype).type}
            for detail, (shape, dtype) in zip(model_inputs, feed)]


def _timed_begins(progress: Progress, settings: BenchSettings, first_ns: int, warmup_runs: int,
                  warmup_total: int) -> None:
    progress("timed", warmup_runs=warmup_runs, warmup_mean_ms=warmup_total / warmup_runs / 1e6 if warmup_runs
             else first_ns / 1e6, runs=settings.runs, min_s=settings.min_seconds, max_runs=settings.max_runs,
             max_s=settings.max_seconds)


def _timed_loop(invoke: Callable[[], Any], settings: BenchSettings, native, native_samples: list[int] | None,
                progress: Progress | None, reset: Callable[[], Any] | None = None):
    """First inference, warm-up, timed runs: (first_ns, warmup_runs, warmup_ns, samples, timed_ns).
    `reset` copies the inputs in before every inference, outside its timed interval (a runtime whose
    program consumes its inputs: ExecuTorch)."""
    perf = time.perf_counter_ns
    if reset is not None:
        reset()
    t0 = perf()
    invoke()
    first_ns = perf() - t0
    if progress is not None:
        progress("warmup", first_ms=first_ns / 1e6, warmup=settings.warmup, warmup_s=settings.warmup_seconds)
    min_ns = int(settings.min_seconds * 1e9)
    cap_ns = int(settings.max_seconds * 1e9)
    warmup_ns = int(settings.warmup_seconds * 1e9)
    warmup_runs = warmup_total = 0
    # The time part of warm-up is capped by max_seconds, so a huge warmup_seconds cannot hang.
    while warmup_runs < settings.warmup or (warmup_total < warmup_ns and warmup_total < cap_ns):
        if reset is not None:
            reset()
        t0 = perf()
        invoke()
        warmup_total += perf() - t0
        warmup_runs += 1
    if progress is not None:
        _timed_begins(progress, settings, first_ns, warmup_runs, warmup_total)
    samples: list[int] = []
    timed_total = 0
    while True:
        if reset is not None:
            reset()
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
    return first_ns, warmup_runs, warmup_total, samples, timed_total


def run_benchmark(model_path: str, settings: BenchSettings, fill: Callable[..., Any] | None = None,
                  runtime: str = DEFAULT_RUNTIME, feed: Sequence[tuple[Sequence[int], str]] | None = None,
                  progress: Progress | None = None,
                  after_timed: Callable[[Callable[[], Any]], AfterTimed] | None = None,
                  ranges: Sequence[Sequence[int] | None] = ()) -> BenchmarkBlock:
    """Load and time one artifact; raise BenchmarkError(stage, ...) on failure. `fill(shape, dtype,
    seed, quantization, value_range)` makes each input (make_input; the device simulator's input faults
    replace it); `ranges` the integer inputs' [low, high) where known (token ids in their table);
    `feed` the inputs' shapes and dtypes when the device is told them (run_protocol). `after_timed`
    gets one inference of the still-loaded model (inputs copied in first where the runtime needs it)
    once the timed runs are over, and returns blocks to add (the energy windows: energy_run.py); an
    inference failing there fails the run at `invoke`."""
    if not os.path.isfile(model_path):
        raise BenchmarkError("load", f"model file not found: {model_path}")
    mem_before = memory_snapshot()
    if progress is not None:
        progress("load")
    t0 = time.perf_counter_ns()
    session = get_runtime(runtime).open_session(model_path, settings)
    init_ns = time.perf_counter_ns() - t0
    mem_loaded = memory_snapshot()
    session.check(settings)
    measured = run_protocol(session, settings, fill or make_input, feed, progress, ranges)
    mem_after = memory_snapshot()
    extra: AfterTimed = {}
    if after_timed is not None:
        try:
            extra = after_timed(_one_inference(session))
        except BenchmarkError:
            raise
        except Exception as exc:  # whatever the runtime raises for an inference it cannot run
            raise BenchmarkError("invoke", exc) from exc
    return {"init_ns": init_ns, **measured,
            "memory": {"source": "host", "before_load": mem_before, "after_load": mem_loaded, "after_runs": mem_after},
            **extra}


def _one_inference(session: BenchSession) -> Callable[[], Any]:
    """One inference as the app's engine makes it: ExecuTorch's copies its inputs in first."""
    invoke, reset = session.invoke, session.reset_inputs
    if reset is None:
        return invoke

    def fed_invoke() -> Any:
        reset()
        return invoke()

    return fed_invoke


def benchmark_result(model_path: str, settings: BenchSettings, run_id: str = "", profile: bool = True,
                     fill: Callable[..., Any] | None = None, runtime: str = DEFAULT_RUNTIME,
                     feed: Sequence[tuple[Sequence[int], str]] | None = None,
                     progress: Progress | None = None,
                     after_timed: Callable[[Callable[[], Any]], AfterTimed] | None = None,
                     ranges: Sequence[Sequence[int] | None] = ()) -> BenchmarkBlock:
    """The protocol's result block for one model, valid or not; with `profile` and settings.profile_ops,
    the profiled pass's ops block too (host_bench runs that pass itself, after saving the timings).
    `runtime` and `runtime_version` name what ran (protocol 3): the runtime's library installed here."""
    rt = get_runtime(runtime)
    used, fallback = rt.host_backend(settings.backend, model_path)
    base: BenchmarkBlock = {
        "run_id": run_id,
        "model_path": model_path,
        "runtime": rt.name,
        "runtime_version": rt.versions().get(rt.library),
        "backend_requested": settings.backend,
        "backend_used": used,
        "fallback_reason": fallback,
        "threads": settings.threads,
        "warmup": settings.warmup,
        "warmup_seconds": settings.warmup_seconds,
        "runs": settings.runs,
        "min_seconds": settings.min_seconds,
        "seed": settings.seed,
        "require_full_delegation": settings.require_full_delegation,
    }
    try:
        measured = run_benchmark(model_path, settings, fill, runtime, feed, progress, after_timed, ranges)
    except BenchmarkError as err:
        return {**base, "valid": False, "error_stage": err.stage, "error_type": err.error_type,
                "error_message": err.message}
    result: BenchmarkBlock = {**base, "valid": True, "error_stage": None, "error_type": None, "error_message": None,
                              **measured}
    if profile and settings.profile_ops:
        # Only now, after the timed runs: the profiled pass never shares time with them.
        result = {**result, **rt.profile(model_path, settings, ranges)}
    return result
