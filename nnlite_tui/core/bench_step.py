"""One (model, device) benchmark step of the pipeline: measure, report, record, recover."""

from __future__ import annotations

import contextlib
import time

from nnlite_tui.core.devices.base import Device, DeviceError
from nnlite_tui.core.events import DeviceState, ModelLog, ModelStatus, Recovery, StageFinished, StageStarted


def benchmark_on(p, device: Device, name: str) -> None:
    control = p._control
    cancel = p._cancel[name]
    key = "*" if p.cfg.distribute else device.serial
    if control.should_skip(name) or cancel.is_set():
        if control.stop_now.is_set():
            return
        p.device_result(name, key, {"status": "skipped", "device": device.serial})
        return
    rec = p._record(name)
    per = dict((rec.get("devices") or {}).get(key) or {})
    attempt = int(per.get("attempts", 0)) + 1
    per_device = dict(rec.get("devices") or {})
    per_device[key] = {**per, "status": "benchmarking", "attempts": attempt, "device": device.serial}
    p.store.update(name, devices=per_device)
    p._set_status(name, "benchmarking", device=device.serial, stage="benchmark")
    p.emit(StageStarted(model=name, stage="benchmark", device=device.serial, attempt=attempt))
    t0 = time.monotonic()
    isolate = p.isolation.benchmarking() if device.kind == "host" else contextlib.nullcontext()
    try:
        # Readings too are device calls: a device that drops while being read is a device fault.
        cooldown = p.recovery.wait_for_temperature(device)
        before = device.snapshot()
        p.emit(DeviceState(serial=device.serial, state="busy", kind=device.kind, model=name,
                           temperature_c=before.get("max_temperature_c"),
                           mem_available_kb=(before.get("memory") or {}).get("available_ram_kb")))
        with isolate:
            bench = device.benchmark(rec["tflite"], p.cfg.bench, p.run_id, cancel)
        after = device.snapshot()
        info = device.info()
    except DeviceError as err:
        seconds = time.monotonic() - t0
        p.emit(StageFinished(model=name, stage="benchmark", ok=False, seconds=seconds, device=device.serial,
                             detail=str(err)[:300]))
        p.emit(DeviceState(serial=device.serial, state="idle", kind=device.kind))
        _device_error(p, device, name, key, attempt, err)
        return
    seconds = time.monotonic() - t0
    p.recovery.device_ok(device)
    if cooldown is not None:
        bench["cooldown"] = cooldown
    for line in (bench.get("log") or "").splitlines()[-20:]:
        if line.strip():
            p.emit(ModelLog(model=name, stage="benchmark", line=line[:500]))
    stats = bench.get("stats") or {}
    valid = bool(bench.get("valid"))
    median_ms = stats["median_ns"] / 1e6 if valid and stats else None
    summary = (f"median {median_ms:.3f} ms, p90 {stats['p90_ns'] / 1e6:.3f} ms over {stats['count']} runs"
               if median_ms is not None else f"{bench.get('error_stage')}: {bench.get('error_message')}")
    p.emit(ModelLog(model=name, stage="benchmark", line=f"[nnlite] {device.serial}: {summary}"))
    path = p._write_report(name, device.serial, conversion=rec.get("conversion"), bench=bench, error=None,
                           before=before, after=after, device_info=info)
    error = None if valid else {"stage": f"benchmark:{bench.get('error_stage')}", "type": bench.get("error_type"),
                                "message": bench.get("error_message")}
    p.emit(StageFinished(model=name, stage="benchmark", ok=valid, seconds=seconds, device=device.serial,
                         detail=summary[:300]))
    p.emit(DeviceState(serial=device.serial, state="idle", kind=device.kind,
                       temperature_c=after.get("max_temperature_c"),
                       mem_available_kb=(after.get("memory") or {}).get("available_ram_kb")))
    p.device_result(name, key, {"status": "done" if valid else "failed", "attempts": attempt, "report": str(path),
                                "median_ms": median_ms, "error": error, "device": device.serial})


def _device_error(p, device: Device, name: str, key: str, attempt: int, err: DeviceError) -> None:
    control = p._control
    queue = p._shared_q if key == "*" else p._device_q[device.serial]
    if err.kind == "cancelled" or control.stop_now.is_set():
        if control.stop_now.is_set():
            p.store.transition(name, "queued")
            p.emit(ModelStatus(model=name, status="queued"))
            p._release_slot(name)
        else:
            p.device_result(name, key, {"status": "skipped", "device": device.serial})
        return
    error = {"stage": f"device:{err.kind}", "type": "DeviceError", "message": str(err)}
    if err.transient and attempt < p.cfg.max_attempts:
        p.emit(Recovery(action="retry", target=f"{name}@{device.serial}",
                        detail=f"{err} (attempt {attempt} of {p.cfg.max_attempts})"))
        p.store.update(name, error=error)
        p.recovery.device_fault(device, err)
        queue.put(name)
        return
    p.emit(Recovery(action="give-up", target=f"{name}@{device.serial}", severity="error",
                    detail=f"{err} after {attempt} attempt(s)"))
    try:
        info = device.info()
    except DeviceError as exc:  # the device is gone: the report still names it and says so
        info = {"serial": device.serial, "kind": device.kind, "error": str(exc)}
    path = p._write_report(name, device.serial, conversion=p._record(name).get("conversion"), bench=None,
                           error=error, before=None, after=None, device_info=info)
    p.device_result(name, key, {"status": "failed", "attempts": attempt, "report": str(path), "error": error,
                                "device": device.serial})
    if err.transient:
        p.recovery.device_fault(device, err)
