"""The pipeline: one unit's path from source to report, and the one place its state changes.

Read top to bottom: `run()` queues the models and starts N conversion threads (one per conversion
worker process) and one benchmark thread per device. A conversion thread takes a model, calls
`convert_step` and hands the outcome to `_apply_conversion`; a Converted model travels on as a
BenchJob (spec + ConversionResult) to its devices' queues. A device thread runs the pipeline's
DeviceWorkers (device_workers.py): it takes a job, times it in rounds (`bench_step`), writes the
report through the ReportWriter (report_writer.py) and hands the device's result to `device_result`,
which finishes the model once every target device is terminal. Steps never touch the store, the
queues or the control: only the pipeline's parts that apply their outcomes do, and a unit's status
changes only here (`set_status`, `device_result`, `cancelled`, `fail_alone`: the UnitStates the
device side is given).

A model's record in the store has an overall status and, under "devices", one entry per target
device ({status, attempts, report, median_ms, error}). Reports are written before the terminal
transition, so a crash in between redoes the model and rewrites the same report file: never two
reports for one (model, device, backend).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.run.artifacts import DiskGuard, prune_artifact
from nnlite_tui.core.bench.reference import ReferenceClock
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.device_workers import DeviceWorkers
from nnlite_tui.core.run.control import Control, ControlChannel
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.step import Attempt, convert_step
from nnlite_tui.core.convert.ranking import rank_conversions
from nnlite_tui.core.devices.base import Device
from nnlite_tui.core.events import (ConversionCost, Event, ModelStatus, MultiReporter, Recovery, Reporter, RunFinished,
                                    RunStarted)
from nnlite_tui.core.bench.isolation import HostIsolation
from nnlite_tui.core.outcomes import (BenchJob, Cancelled, Converted,
                                      Failed, Outcome, Retry, Skipped, StageError, combine_device_results,
                                      conversion_of)
from nnlite_tui.core.run.recovery import RecoveryPolicy, ReexecRequested
from nnlite_tui.core.run.report_writer import ReportWriter
from nnlite_tui.core.run_dir import artifact_path, log_path
from nnlite_tui.core.run.resume import models_to_do
from nnlite_tui.core.run.unit_faults import run_unit
from nnlite_tui.core.run_dir import PID_FILE
from nnlite_tui.core.run.watch import RunWatch
from nnlite_tui.core.run.scheduling import SHARED, WorkQueue
from nnlite_tui.core.run.unit_records import DeviceEntry, UnitRecord, unit_record
from nnlite_tui.core.runtimes import get_runtime
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import RunStore

if TYPE_CHECKING:
    from nnlite_tui.core.cluster.session import ClusterSession


@dataclass
class RunOutcome:
    counts: dict[str, int]
    stopped: bool
    seconds: float
    reexec: bool = False


class Pipeline:
    """One run of the models on the devices: the conversion side, the device side (its DeviceWorkers)
    and, for both, every change of a unit's state (the UnitStates the device side is given)."""

    def __init__(self, cfg: RunConfig, specs: list[ModelSpec], store: RunStore, converter: Converter,
                 devices: list[Device]):
        self.cfg = cfg
        self.specs = {s.name: s for s in specs}
        self.order = [s.name for s in specs]
        self.store = store
        self.converter = converter
        self.devices = {d.serial: d for d in devices}
        self.run_dir = Path(cfg.out)
        self.run_id = (store.get_config() or {}).get("run_id", "run")
        self.isolation = HostIsolation(converter, cfg.bench.threads, method=cfg.isolation)
        self.reports = ReportWriter(cfg, self.run_id, store, self.devices, self.isolation, converter)
        for device in devices:
            if device.kind == "host" and self.isolation.pins_benchmark:
                device.pin_cpus(self.isolation.bench_cpus)
        self.work = WorkQueue(self.devices, cfg.lookahead + len(self.devices))
        cache_dir = Path(converter.cache.root)
        self.disk = DiskGuard([self.run_dir, cache_dir], self.emit, min_free_bytes=cfg.min_free_bytes,
                              cache_dir=cache_dir)
        self.disk.on_expired = lambda: self.control.request_stop(now=False)
        self.reporter: Reporter = MultiReporter()  # nobody listens before run()
        self.control = Control()
        self.recovery = RecoveryPolicy(cfg, self.reporter, self.control.stop_now, list(self.devices))
        # The Ray session when the run spans a cluster (core/cluster); its owner shuts it down.
        self.cluster: ClusterSession | None = None
        self.references = {serial: ReferenceClock(started=time.monotonic()) for serial in self.devices}
        self.device_workers = self._device_workers()

    def _device_workers(self) -> DeviceWorkers:
        """The device side, given the run's control, recovery and reference clocks (run() renews them)."""
        return DeviceWorkers(self.cfg, run_id=self.run_id, store=self.store, devices=self.devices, work=self.work,
                             control=self.control, recovery=self.recovery, references=self.references,
                             reports=self.reports, disk=self.disk, isolation=self.isolation,
                             cache_root=Path(self.converter.cache.root), units=self)

    # ----- the run -----
    def _costs_known(self, costs: dict[str, float]) -> None:
        self.work.set_costs(costs)
        for name, cost in costs.items():  # the console's ETA prices what remains with them
            self.emit(ConversionCost(model=name, seconds=cost))

    def run(self, reporter: Reporter, control: Control) -> RunOutcome:
        self.reporter, self.control = reporter, control
        self.recovery = RecoveryPolicy(self.cfg, reporter, control.stop_now, list(self.devices))
        started = time.monotonic()
        self.references = {serial: ReferenceClock(started=started) for serial in self.devices}
        self.device_workers = self._device_workers()
        pid_path = self.run_dir / PID_FILE
        pid_path.write_text(str(os.getpid()))
        channel = ControlChannel(self.run_dir)
        channel.skip_existing()
        queued = models_to_do(self.store, list(self.specs.values()), retry_failed=self.cfg.retry_failed,
                              warn=lambda msg: self.emit(Recovery(action="remeasure", target="report", detail=msg)))
        resumed = len(queued) < len(self.order) or any((self.record(n).get("attempts") or 0) > 0 for n in queued)
        self.emit(RunStarted(run_dir=str(self.run_dir), models=tuple(self.order), devices=tuple(self.devices),
                             resumed=resumed, holds_conversions=self.isolation.method == "pause"
                             and any(d.kind == "host" for d in self.devices.values())))
        for name in self.order:
            rec = self.record(name)
            self.emit(ModelStatus(model=name, status=rec.get("status", "queued"), attempt=rec.get("attempts", 0),
                                  median_ms=rec.get("median_ms")))
        for name in queued:
            self.work.enqueue(name)
        if not queued:
            self.work.all_done.set()
        self.converter.prestart()
        # Costliest conversions first (conversion_cost.py); the first ones wait for a ranking.
        self._ranked = threading.Event()
        threading.Thread(target=rank_conversions, args=([self.specs[n] for n in queued], self.converter,
                                                        self._costs_known, self._ranked),
                         kwargs={"stop": control.stop_now}, daemon=True, name="rank-conversions").start()
        threads = [threading.Thread(target=self._guard, args=(self._convert_loop,), name=f"convert-{i}",
                                    daemon=True) for i in range(self.converter.n_workers)]
        threads += [threading.Thread(target=self._guard, args=(self.device_workers.device_loop, serial),
                                     name=f"device-{serial}", daemon=True) for serial in self.devices]
        for t in threads:
            t.start()
        try:
            RunWatch(control, channel, self.work, self.emit, retry=self._operator_retry,
                     kill_children=self._kill_children).until_done(threads)
        finally:
            self.shutdown()
            self._park_waiting_rounds()
            self.store.flush()
            pid_path.unlink(missing_ok=True)
        counts = self.store.counts()
        stopped = control.stopping and self.work.has_open()
        outcome = RunOutcome(counts=counts, stopped=stopped, seconds=time.monotonic() - started,
                             reexec=self.recovery.reexec_requested)
        self.emit(RunFinished(counts=counts, seconds=outcome.seconds, stopped=stopped))
        return outcome

    # ----- conversion: take a model, convert it, apply the outcome -----
    def _convert_loop(self) -> None:
        control = self.control
        while not self._ranked.wait(0.2):
            if control.stopping:
                return
        while not control.stopping:
            if not control.wait_while_paused(0.2):
                continue
            name = self.work.next_pending()
            if name is None:
                if self.work.all_done.wait(0.2):
                    return
                continue
            if not self.disk.wait_for_room(control.stop_after_current):
                return  # stopped while the disk was full: the model is still queued for the next run
            if not self.work.take_slot(name, give_up=control.stop_now.is_set):
                return
            if control.stopping:  # asked to stop while we waited: leave it queued for the next run
                self.work.release_slot(name)
                return
            run_unit(name, lambda: self._convert(self.specs[name]), disk=self.disk,
                     requeue=lambda: self._requeue_unit(name), fail=lambda why: self.fail_alone(name, why))

    def _requeue_unit(self, name: str) -> None:
        """Back to the queue after the disk refused its files, the attempt not counted (unit_faults.py)."""
        attempts = max(0, (self.record(name).get("attempts") or 0) - 1)
        self.work.release_slot(name)
        self.disk.wait_for_room(self.control.stop_after_current)  # its state can only be saved once there is room
        self.store.transition(name, "queued", attempts=attempts)
        self.emit(ModelStatus(model=name, status="queued", attempt=attempts))
        self.work.requeue(name)

    def fail_alone(self, name: str, why: str) -> None:
        self._finish(name, "failed", error=StageError(stage="files", type="OSError", message=why))

    def _convert(self, spec: ModelSpec) -> None:
        name = spec.name
        if self.control.should_skip(name):
            self._finish(name, "skipped")
            return
        attempt = self._attempt(self.record(name).get("attempts", 0) + 1)
        self.set_status(name, "converting", attempts=attempt.number, stage="convert")
        outcome = self.work.while_in_flight(name, lambda: convert_step(
            spec, self.converter, dest=artifact_path(self.run_dir, name, get_runtime(spec.runtime).suffix),
            log_path=log_path(self.run_dir, name), cancel=self.work.cancel_event(name), emit=self.emit,
            attempt=attempt))
        self._apply_conversion(spec, attempt, outcome)

    def _apply_conversion(self, spec: ModelSpec, attempt: Attempt, outcome: Outcome) -> None:
        name = spec.name
        result = conversion_of(outcome)
        if result is not None:
            timings = {**(self.record(name).get("timings") or {}), "convert": result.seconds}
            self.store.update(name, conversion=result.record(), timings=timings, artifact=result.artifact_path)
        if isinstance(outcome, Converted):
            self.set_status(name, "converted", stage="benchmark")
            job = BenchJob(spec, outcome.result)
            for target in self._targets():
                self.work.put_job(target, job)
        elif isinstance(outcome, Cancelled) or self.control.stop_now.is_set():
            self.cancelled(name)
        elif isinstance(outcome, Skipped):
            self._finish(name, "skipped", error=outcome.error)
        elif isinstance(outcome, Retry):
            err = outcome.error
            self.emit(Recovery(action="retry", target=name, detail=f"{err.stage}: {err.message} "
                               f"(attempt {attempt.number} of {attempt.max_attempts})"))
            self.store.update(name, error=err.to_dict())
            self.work.release_slot(name)
            self.store.transition(name, "queued")
            threading.Timer(outcome.after_s, self.work.requeue, args=(name,)).start()
        elif isinstance(outcome, Failed):
            for target in self._targets():
                self.reports.write(spec, target, conversion=result, bench=None, error=outcome.error)
            self._finish(name, "failed", error=outcome.error)

    def device_result(self, name: str, key: str, result: DeviceEntry) -> None:
        """Record one device's terminal result for a model; finish the model when all targets are."""
        per_device = {**(self.record(name).get("devices") or {}), key: result}
        self.store.update(name, devices=per_device)
        overall = combine_device_results(self._targets(), per_device, key)
        if overall is not None:
            self._finish(name, overall.status, median_ms=overall.median_ms, error=overall.error,
                         device=result.get("device"), flags=overall.flags)

    # ----- state transitions -----
    def emit(self, event: Event) -> None:
        self.reporter.emit(event)

    def set_status(self, name: str, status: str, error: StageError | None = None, **fields: Any) -> None:
        if error is not None:
            fields["error"] = error.to_dict()
        elif status == "done":
            fields["error"] = None  # an earlier attempt's transient error does not describe a done model
        rec = self.store.transition(name, status, **fields)
        stored = StageError.from_dict(rec.get("error"))
        self.emit(ModelStatus(model=name, status=status, attempt=rec.get("attempts", 0), device=fields.get("device"),
                              median_ms=rec.get("median_ms"), error=stored.text() if stored else None,
                              flags=tuple(rec.get("flags") or ())))

    def _finish(self, name: str, status: str, **fields: Any) -> None:
        self.set_status(name, status, **fields)
        kept = self.record(name).get("artifact")
        if kept and prune_artifact(self.cfg.keep_artifacts, status, Path(kept)):
            self.store.update(name, artifact=None)
        self.work.finish(name)

    def cancelled(self, name: str) -> None:
        if self.control.stop_now.is_set():
            self.store.transition(name, "queued")  # not the model's fault: the next run redoes it
            self.emit(ModelStatus(model=name, status="queued"))
            self.work.release_slot(name)
        else:
            self._finish(name, "skipped")

    # ----- helpers -----
    def record(self, name: str) -> UnitRecord:
        return unit_record(self.store, name)

    def _targets(self) -> list[str]:
        return [SHARED] if self.cfg.distribute else list(self.devices)

    def _attempt(self, number: int) -> Attempt:
        return Attempt(number, self.cfg.max_attempts, self.cfg.backoff_s)

    def _guard(self, fn: Callable[..., None], *args: object) -> None:
        try:
            fn(*args)
        except ReexecRequested:
            self.control.request_stop(now=True)
        except Exception as exc:  # a bug in a worker thread must stop the run loudly, not hang it
            self.emit(Recovery(action="internal-error", target=threading.current_thread().name,
                               detail=f"{type(exc).__name__}: {exc}", severity="error"))
            self.control.request_stop(now=True)
            raise

    # ----- the operator -----
    def _kill_children(self) -> None:
        self.converter.kill_all()
        for device in self.devices.values():
            device.kill_children()

    def _operator_retry(self, name: str) -> None:
        if name not in self.specs or self.record(name).get("status") not in ("failed", "skipped"):
            return
        self.store.update(name, attempts=0, error=None, devices={})
        self.store.transition(name, "queued")
        self.emit(ModelStatus(model=name, status="queued"))
        self.work.enqueue(name)

    def _park_waiting_rounds(self) -> None:
        """A stopped run leaves units between their rounds: nothing benchmarks them any more, so they are
        `converted` again (their finished rounds wait on disk for the next run)."""
        for name in self.work.open_names():
            if self.record(name).get("status") == "benchmarking" and name not in self.work.in_flight():
                self.store.transition(name, "converted")
                self.emit(ModelStatus(model=name, status="converted"))

    def shutdown(self) -> None:
        """Stop every child process this run started (conversion workers, benchmark processes)."""
        self.converter.close()
        for d in self.devices.values():
            d.close()
