"""One model's conversion step of the pipeline: convert, record, then queue, retry or fail it."""

from __future__ import annotations

import threading
import time

from nnlite_tui.core.convert import DETERMINISTIC_STAGES
from nnlite_tui.core.events import ModelStatus, Recovery, StageFinished, StageStarted
from nnlite_tui.core.logs import LogTailer


def convert_model(p, name: str) -> None:
    """Convert one model (or take it from the cache), then queue it for its devices or finish it."""
    control = p._control
    if control.should_skip(name):
        p._finish(name, "skipped")
        return
    spec = p.specs[name]
    rec = p._record(name)
    attempt = int(rec.get("attempts", 0)) + 1
    p._set_status(name, "converting", attempts=attempt, stage="convert")
    p.emit(StageStarted(model=name, stage="convert", attempt=attempt))
    log_path = p.run_dir / "logs" / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with LogTailer(log_path, name, "convert", p.emit):
        result = p.converter.convert(spec, p.run_dir / "tflite" / f"{name}.tflite", log_path,
                                     cancel=p._cancel[name])
    seconds = time.monotonic() - t0
    ok = bool(result.get("ok"))
    detail = "cached" if result.get("cached") else (result.get("error_message") or "")
    p.emit(StageFinished(model=name, stage="convert", ok=ok, seconds=seconds, detail=detail[:300]))
    timings = dict(rec.get("timings") or {})
    timings["convert"] = seconds
    p.store.update(name, conversion=result, timings=timings, tflite=result.get("tflite_path"))
    if ok:
        p._set_status(name, "converted", stage="benchmark")
        for target in p.targets(name):
            (p._shared_q if target == "*" else p._device_q[target]).put(name)
        return
    stage = result.get("stage")
    if stage == "cancelled" or control.stop_now.is_set():
        _cancelled(p, name)
        return
    if stage == "filtered":
        p._finish(name, "skipped", error={"stage": stage, "type": "Filtered",
                                          "message": result.get("error_message")})
        return
    error = {"stage": stage, "type": result.get("error_type"), "message": result.get("error_message")}
    if stage not in DETERMINISTIC_STAGES and attempt < p.cfg.max_attempts:
        p.emit(Recovery(action="retry", target=name, detail=f"{stage}: {error['message']} "
                        f"(attempt {attempt} of {p.cfg.max_attempts})"))
        p.store.update(name, error=error)
        p._release_slot(name)
        p.store.transition(name, "queued")
        threading.Timer(p.cfg.backoff_s * attempt, p._requeue, args=(name,)).start()
        return
    for target in p.targets(name):
        p._write_report(name, target, conversion=result, bench=None, error=error, before=None, after=None)
    p._finish(name, "failed", error=error)


def _cancelled(p, name: str) -> None:
    if p._control.stop_now.is_set():
        p.store.transition(name, "queued")  # not the model's fault: the next run redoes it
        p.emit(ModelStatus(model=name, status="queued"))
        p._release_slot(name)
    else:
        p._finish(name, "skipped")
