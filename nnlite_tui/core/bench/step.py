"""The benchmark step: measure one converted model on one device and say what happened.

It knows nothing of the run: no store, no queues, no control. Device faults come back as Retry
or Failed carrying the fault, so that the Runner can climb the recovery ladder.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, ContextManager

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.convert.step import Attempt
from nnlite_tui.core.devices.base import Device, DeviceError
from nnlite_tui.core.events import DeviceState, Event, ModelLog, StageFinished, StageStarted
from nnlite_tui.core.bench.input_check import check_block
from nnlite_tui.core.bench.range_check import check_ranges
from nnlite_tui.core.outcomes import Artifact, Benchmarked, BenchJob, BenchResult, Cancelled, Failed, Outcome, Retry, StageError

LOG_TAIL_LINES = 20


def bench_step(job: BenchJob, device: Device, *, settings: BenchSettings, run_id: str, cancel: threading.Event,
               emit: Callable[[Event], None], attempt: Attempt,
               isolate: Callable[[], ContextManager[None]] = contextlib.nullcontext,
               before_benchmark: Callable[[Device], Mapping[str, Any] | None] = lambda device: None) -> Outcome:
    """`isolate` keeps other work off the CPU while timing; `before_benchmark` may wait (e.g. to cool down).
    The device gets ready (`ready_for_benchmark`: the host starts its benchmark process then) before
    `isolate`, so the isolation covers the load and the timing, not the start-up."""
    name, serial = job.name, device.serial
    emit(StageStarted(model=name, stage="benchmark", device=serial, attempt=attempt.number))
    started = time.monotonic()
    try:
        # Readings too are device calls: a device that drops while being read is a device fault.
        cooldown = before_benchmark(device)
        before = device.snapshot()
        emit(DeviceState(serial=serial, state="busy", kind=device.kind, model=name,
                         temperature_c=before.get("max_temperature_c"),
                         mem_available_kb=(before.get("memory") or {}).get("available_ram_kb")))
        device.ready_for_benchmark(cancel)
        isolated = time.monotonic()
        with isolate():
            measured = device.benchmark(job.conversion.artifact or Artifact("", job.spec.runtime), settings, run_id,
                                     cancel, progress=lambda line: emit(ModelLog(model=name, stage="benchmark",
                                                                                 line=line)))
        isolated = time.monotonic() - isolated
        # A quantized input is checked against the model's parameters, an integer one against its range,
        # wherever it was filled.
        block = check_ranges(check_block(measured, job.conversion.details), job.conversion.details)
        after = device.snapshot()
        info = device.info()
    except DeviceError as err:
        emit(StageFinished(model=name, stage="benchmark", ok=False, seconds=time.monotonic() - started,
                           device=serial, detail=str(err)[:300]))
        emit(DeviceState(serial=serial, state="idle", kind=device.kind))
        return _device_fault(device, err, attempt)
    result = BenchResult(serial=serial, block=block, device_info=info, before=before, after=after,
                         seconds=time.monotonic() - started, cooldown=cooldown)
    for line in (block.get("log") or "").splitlines()[-LOG_TAIL_LINES:]:
        if line.strip():
            emit(ModelLog(model=name, stage="benchmark", line=line[:500]))
    summary = _summary(result)
    emit(ModelLog(model=name, stage="benchmark", line=f"[nnlite] {serial}: {summary}"))
    emit(StageFinished(model=name, stage="benchmark", ok=result.valid, seconds=result.seconds, device=serial,
                       detail=summary[:300], isolated_s=None if isolate is contextlib.nullcontext else isolated))
    emit(DeviceState(serial=serial, state="idle", kind=device.kind, temperature_c=after.get("max_temperature_c"),
                     mem_available_kb=(after.get("memory") or {}).get("available_ram_kb")))
    return Benchmarked(result)


def _summary(result: BenchResult) -> str:
    if result.median_ms is None:
        return f"{result.block.get('error_stage')}: {result.block.get('error_message')}"
    stats = result.stats
    return f"median {result.median_ms:.3f} ms, p90 {stats['p90_ns'] / 1e6:.3f} ms over {stats['count']} runs"


def _device_fault(device: Device, err: DeviceError, attempt: Attempt) -> Outcome:
    if err.kind == "cancelled":
        return Cancelled()
    error = StageError(stage=f"device:{err.kind}", type="DeviceError", message=str(err))
    if err.transient and not attempt.last:
        return Retry(error=error, fault=err)
    try:
        info: Mapping[str, Any] = device.info()
    except DeviceError as exc:  # the device is gone: the report still names it and says so
        info = {"serial": device.serial, "kind": device.kind, "error": str(exc)}
    return Failed(error=error, fault=err if err.transient else None, device_info=info)
