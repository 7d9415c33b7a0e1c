"""The Pipeline: convert ahead, benchmark on every device, report, record every transition.

Threads: N conversion threads (one per conversion worker process) run ahead of the benchmarks
through a bounded lookahead; one benchmark thread per device. The calling thread watches the
Control (and RUN_DIR/control.jsonl for commands from another process) and waits for the end.

A model's record in the store has an overall status and, under "devices", one entry per target
device ({status, attempts, report, median_ms, error}). The model is terminal once every target is.
Reports are written before the terminal transition, so a crash in between redoes the model and
rewrites the same report file: never two reports for one (model, device, backend).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nnlite_tui.core.config import RunConfig
from nnlite_tui.core.control import Control, ControlChannel
from nnlite_tui.core.convert import Converter
from nnlite_tui.core.convert_step import convert_model
from nnlite_tui.core.devices.base import Device
from nnlite_tui.core.events import (TERMINAL, ModelStatus, Recovery, Reporter, RunControl,
                                    RunFinished, RunStarted)
from nnlite_tui.core.isolation import HostIsolation
from nnlite_tui.core.recovery import RecoveryPolicy, ReexecRequested
from nnlite_tui.core.report import build_report, report_filename, write_json_atomic
from nnlite_tui.core.run_files import PID_FILE
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import RunStore


@dataclass
class RunOutcome:
    counts: dict[str, int]
    stopped: bool
    seconds: float
    reexec: bool = False


class Pipeline:
    def __init__(self, cfg: RunConfig, specs: list[ModelSpec], store: RunStore, converter: Converter,
                 devices: list[Device]):
        self.cfg = cfg
        self.specs = {s.name: s for s in specs}
        self.order = [s.name for s in specs]
        self.store = store
        self.converter = converter
        self.devices = {d.serial: d for d in devices}
        self.run_dir = Path(cfg.out)
        self.run_id = store.get_config().get("run_id", "run") if store.get_config() else "run"
        self.isolation = HostIsolation(converter, cfg.bench.threads, method=cfg.isolation)
        for device in devices:
            if device.kind == "host" and self.isolation.pins_benchmark:
                device.cpus = self.isolation.bench_cpus
        self._lock = threading.Lock()
        self._pending: deque[str] = deque()
        self._device_q: dict[str, queue.Queue[str]] = {s: queue.Queue() for s in self.devices}
        self._shared_q: queue.Queue[str] = queue.Queue()
        self._slots = threading.Semaphore(max(1, cfg.lookahead + len(self.devices)))
        self._holding: set[str] = set()  # models holding a lookahead slot
        self._active: set[str] = set()  # models in a stage right now (converting or benchmarking)
        self._cancel: dict[str, threading.Event] = {}
        self._open: set[str] = set()  # models not yet terminal in this run
        self._done_event = threading.Event()
        self._reporter: Reporter | None = None
        self._control: Control | None = None
        self.recovery = RecoveryPolicy(cfg, self)

    # ----- helpers -----
    def emit(self, event) -> None:
        if self._reporter is not None:
            self._reporter.emit(event)

    def targets(self, name: str) -> list[str]:
        return ["*"] if self.cfg.distribute else list(self.devices)

    def _record(self, name: str) -> dict[str, Any]:
        return self.store.get(name) or {}

    def _set_status(self, name: str, status: str, **fields: Any) -> None:
        rec = self.store.transition(name, status, **fields)
        err = rec.get("error")
        self.emit(ModelStatus(model=name, status=status, attempt=rec.get("attempts", 0),
                              device=fields.get("device"), median_ms=rec.get("median_ms"),
                              error=f"{err['stage']}: {err['type']}: {err['message']}" if err else None))

    # ----- queueing -----
    def _prepare_queue(self) -> list[str]:
        self.store.add_models([{"name": n, "spec": self.specs[n].to_dict()} for n in self.order])
        queued = []
        for name in self.order:
            rec = self._record(name)
            status = rec.get("status", "queued")
            if status == "failed" and self.cfg.retry_failed:
                self.store.update(name, attempts=0, error=None, devices={})
                status = "queued"
            if status in TERMINAL:
                continue
            if status != "queued":
                # It was in flight when the last run stopped: redo it (conversion comes from cache).
                self.store.transition(name, "queued")
            queued.append(name)
        return queued

    def _enqueue(self, name: str) -> None:
        with self._lock:
            self._open.add(name)
            self._cancel[name] = threading.Event()
            self._pending.append(name)

    def _next_pending(self) -> str | None:
        with self._lock:
            return self._pending.popleft() if self._pending else None

    def _finish(self, name: str, status: str, **fields: Any) -> None:
        self._set_status(name, status, **fields)
        with self._lock:
            self._open.discard(name)
            if name in self._holding:
                self._holding.discard(name)
                self._slots.release()
            if not self._open:
                self._done_event.set()

    # ----- conversion -----
    def _convert_loop(self) -> None:
        control = self._control
        while not control.stopping:
            if not control.wait_while_paused(0.2):
                continue
            name = self._next_pending()
            if name is None:
                if self._done_event.wait(0.2):
                    return
                continue
            while not self._slots.acquire(timeout=0.2):
                if control.stop_now.is_set():
                    return
            with self._lock:
                self._holding.add(name)
                if control.stopping:  # asked to stop while we waited: leave it queued for the next run
                    self._holding.discard(name)
                    self._slots.release()
                    return
                self._active.add(name)
            try:
                convert_model(self, name)
            finally:
                with self._lock:
                    self._active.discard(name)

    def _requeue(self, name: str) -> None:
        with self._lock:
            self._pending.append(name)

    def _release_slot(self, name: str) -> None:
        with self._lock:
            if name in self._holding:
                self._holding.discard(name)
                self._slots.release()

    # ----- benchmarking -----
    def _device_loop(self, serial: str) -> None:
        from nnlite_tui.core.bench_step import benchmark_on

        control = self._control
        device = self.devices[serial]
        own = self._device_q[serial]
        while not control.stop_now.is_set():
            if self._done_event.is_set():
                return
            if not control.wait_while_paused(0.2):
                continue
            name = None
            for q in (own, self._shared_q):
                try:
                    name = q.get(timeout=0.1)
                    break
                except queue.Empty:
                    continue
            if name is None:
                if control.stopping:
                    return
                continue
            if control.stopping:  # stop after current: a model that only waits is redone next run
                return
            with self._lock:
                self._active.add(name)
            try:
                benchmark_on(self, device, name)
            finally:
                with self._lock:
                    self._active.discard(name)

    def device_result(self, name: str, serial: str, result: dict[str, Any]) -> None:
        """Record one device's terminal result for a model; finish the model when all targets are."""
        rec = self._record(name)
        per_device = dict(rec.get("devices") or {})
        per_device[serial] = result
        self.store.update(name, devices=per_device)
        targets = self.targets(name)
        if targets == ["*"]:
            finished = [result]
        else:
            finished = [per_device[t] for t in targets if t in per_device and per_device[t]["status"] in TERMINAL]
            if len(finished) < len(targets):
                return
        statuses = {f["status"] for f in finished}
        status = "failed" if "failed" in statuses else ("done" if "done" in statuses else "skipped")
        medians = [f.get("median_ms") for f in finished if f.get("median_ms") is not None]
        errors = [f.get("error") for f in finished if f.get("error")]
        self._finish(name, status, median_ms=medians[0] if medians else None,
                     error=errors[0] if errors else None, device=serial)

    def _write_report(self, name: str, serial: str, *, conversion, bench, error, before, after,
                      device_info: dict[str, Any] | None = None) -> Path:
        spec = self.specs[name]
        if device_info is None:
            device = self.devices.get(serial) or next(iter(self.devices.values()))
            device_info = device.info()
        rec = self._record(name)
        report = build_report(spec=spec.to_dict(), conversion=conversion, bench=bench, device=device_info,
                              before=before, after=after, settings=self.cfg.bench.to_dict(), run_id=self.run_id,
                              error=error, attempts=int(rec.get("attempts", 1)),
                              isolation=self.isolation.describe() if device_info.get("kind") == "host" else None,
                              tool_versions=self.converter.versions)
        path = self.run_dir / "reports" / report_filename(name, device_info.get("serial", serial),
                                                          self.cfg.bench.backend)
        write_json_atomic(path, report)
        self.store.update(name, report=str(path))
        return path

    # ----- main loop -----
    def run(self, reporter: Reporter, control: Control) -> RunOutcome:
        self._reporter = reporter
        self._control = control
        started = time.monotonic()
        pid_path = self.run_dir / PID_FILE
        pid_path.write_text(str(os.getpid()))
        channel = ControlChannel(self.run_dir)
        channel.skip_existing()
        queued = self._prepare_queue()
        resumed = len(queued) < len(self.order) or any(
            (self._record(n).get("attempts") or 0) > 0 for n in queued)
        self.emit(RunStarted(run_dir=str(self.run_dir), models=tuple(self.order),
                             devices=tuple(self.devices), resumed=resumed))
        for name in self.order:
            rec = self._record(name)
            self.emit(ModelStatus(model=name, status=rec.get("status", "queued"), attempt=rec.get("attempts", 0),
                                  median_ms=rec.get("median_ms")))
        for name in queued:
            self._enqueue(name)
        if not queued:
            self._done_event.set()
        self.converter.prestart()
        threads = [threading.Thread(target=self._guard, args=(self._convert_loop,), name=f"convert-{i}",
                                    daemon=True) for i in range(self.converter.n_workers)]
        for serial in self.devices:
            threads.append(threading.Thread(target=self._guard, args=(self._device_setup_and_loop, serial),
                                            name=f"device-{serial}", daemon=True))
        for t in threads:
            t.start()
        try:
            self._watch(control, channel, threads)
        finally:
            self.shutdown()
            self.store.flush()
            try:
                pid_path.unlink()
            except FileNotFoundError:
                pass  # removed by an operator; nothing to clean
        counts = self.store.counts()
        stopped = control.stopping and bool(self._open)
        outcome = RunOutcome(counts=counts, stopped=stopped, seconds=time.monotonic() - started,
                             reexec=self.recovery.reexec_requested)
        self.emit(RunFinished(counts=counts, seconds=outcome.seconds, stopped=stopped))
        return outcome

    def _device_setup_and_loop(self, serial: str) -> None:
        device = self.devices[serial]
        self.recovery.prepare_device(device)
        self._device_loop(serial)

    def _guard(self, fn, *args) -> None:
        try:
            fn(*args)
        except ReexecRequested:
            self._control.request_stop(now=True)
        except Exception as exc:  # a bug in a worker thread must stop the run loudly, not hang it
            self.emit(Recovery(action="internal-error", target=threading.current_thread().name,
                               detail=f"{type(exc).__name__}: {exc}", severity="error"))
            self._control.request_stop(now=True)
            raise

    def _watch(self, control: Control, channel: ControlChannel, threads: list[threading.Thread]) -> None:
        was_paused = control.paused
        while True:
            for command, model in channel.poll():
                control.apply(command, model)
                self.emit(RunControl(action=command, model=model))
            if control.paused != was_paused:
                was_paused = control.paused
                self.emit(RunControl(action="pause" if was_paused else "resume"))
            for name in control.take_retries():
                self._operator_retry(name)
            self._apply_skips(control)
            if control.stop_now.is_set():
                for ev in list(self._cancel.values()):
                    ev.set()
                self.converter.kill_all()
                for d in self.devices.values():
                    getattr(d, "kill_children", lambda: None)()
            if self._done_event.is_set() or not any(t.is_alive() for t in threads):
                break
            if control.stopping and not self._in_flight():
                break
            time.sleep(0.1)
        control.request_stop(now=control.stop_now.is_set())
        for t in threads:
            t.join(timeout=30)

    def _in_flight(self) -> bool:
        with self._lock:
            return bool(self._active)

    def _apply_skips(self, control: Control) -> None:
        with self._lock:
            flight = list(self._active)
        skip_all = control.take_skip_current()
        for name in flight:
            if skip_all or control.should_skip(name):
                control.skip(name)  # so the stage boundary that sees the cancel also sees why
                self._cancel[name].set()

    def _operator_retry(self, name: str) -> None:
        rec = self._record(name)
        if name not in self.specs or rec.get("status") not in ("failed", "skipped"):
            return
        self.store.update(name, attempts=0, error=None, devices={})
        self.store.transition(name, "queued")
        self.emit(ModelStatus(model=name, status="queued"))
        self._done_event.clear()
        self._enqueue(name)

    def shutdown(self) -> None:
        """Stop every child process this run started (conversion workers, benchmark processes)."""
        self.converter.close()
        for d in self.devices.values():
            d.close()
