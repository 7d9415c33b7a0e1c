"""The pipeline's device side: one thread per device takes converted units, times them in rounds, and
times the device's reference model at intervals.

A unit is timed in rounds (bench/rounds.py), each a fresh benchmark process or app launch. After
each round the unit goes to the back of its device's queue, so the other units' rounds separate its
own; once it has its rounds (more, up to --max-rounds, while it is unstable) they are combined into
one result and the unit's report is written. Finished rounds are kept on disk (round_files.py), so a
run killed between rounds resumes with them. Between units, a device whose reference is due times it
(bench/reference.py) and the figure goes to the events.

This is a part of the Pipeline class (run/pipeline.py), kept in its own module by concern: it reads
the Pipeline's queues, store and control, and applies outcomes only through its methods.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.bench import reference as ref
from nnlite_tui.core.bench.rounds import ROUND_GAP_S, combine, judge, per_round, round_of
from nnlite_tui.core.bench.step import bench_step
from nnlite_tui.core.devices.base import DeviceError
from nnlite_tui.core.events import TERMINAL, DeviceState, RoundFinished, Recovery, ReferenceTimed
from nnlite_tui.core.outcomes import Artifact, Benchmarked, BenchJob, BenchResult, Cancelled, Failed, Retry
from nnlite_tui.core.run import round_files
from nnlite_tui.core.run.scheduling import SHARED
from nnlite_tui.core.run.unit_faults import run_unit

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from pathlib import Path

    from nnlite_tui.core.bench.reference import ReferenceClock
    from nnlite_tui.core.convert.step import Attempt
    from nnlite_tui.core.devices.base import Device
    from nnlite_tui.core.events import Event
    from nnlite_tui.core.outcomes import Outcome, StageError
    from nnlite_tui.core.run.artifacts import DiskGuard
    from nnlite_tui.core.run.config import RunConfig
    from nnlite_tui.core.run.control import Control
    from nnlite_tui.core.run.recovery import RecoveryPolicy
    from nnlite_tui.core.run.report_writer import ReportWriter
    from nnlite_tui.core.run.scheduling import WorkQueue
    from nnlite_tui.core.store import RunStore


class DeviceWork:
    """Mixed into Pipeline: the device threads' loop, rounds and reference runs."""

    if TYPE_CHECKING:  # what it uses of the Pipeline it is mixed into (the type checker holds both to it)
        cfg: RunConfig
        run_dir: Path
        run_id: str
        store: RunStore
        devices: dict[str, Device]
        work: WorkQueue
        control: Control
        recovery: RecoveryPolicy
        references: dict[str, ReferenceClock]
        reports: ReportWriter
        disk: DiskGuard

        def emit(self, event: Event) -> None: ...
        def _record(self, name: str) -> dict[str, Any]: ...
        def _attempt(self, number: int) -> Attempt: ...
        def _device_result(self, name: str, key: str, result: dict[str, Any]) -> None: ...
        def _set_status(self, name: str, status: str, error: StageError | None = None, **fields: Any) -> None: ...
        def _cancelled(self, name: str) -> None: ...
        def _in_flight(self, name: str, step: Callable[[], Outcome]) -> Outcome: ...
        def _isolation_for(self, device: Device) -> Callable[[], AbstractContextManager[None]]: ...
        def _fail_alone(self, name: str, why: str) -> None: ...

    # ----- the loop -----
    def _device_loop(self, serial: str) -> None:
        control = self.control
        device = self.devices[serial]
        self.recovery.prepare_device(device)
        while not control.stop_now.is_set():
            if self.work.all_done.is_set():
                return
            if not control.wait_while_paused(0.2):
                continue
            job = self.work.next_job(serial)
            if job is None:
                if control.stopping:
                    return
                continue
            if control.stopping:  # stop after current: a model that only waits is redone next run
                return
            if self.references[serial].due(time.monotonic()):
                self._time_reference(device)
            run_unit(job.name, lambda: self._benchmark(device, job), disk=self.disk,
                     requeue=lambda: self._requeue_job(serial, job), fail=lambda why: self._fail_alone(job.name, why))

    def _requeue_job(self, serial: str, job: BenchJob) -> None:
        """The round again once the disk takes writes (unit_faults.py)."""
        self.disk.wait_for_room(self.control.stop_after_current)
        self.work.put_job(SHARED if self.cfg.distribute else serial, job, ready_at=time.monotonic() + 1.0)

    # ----- one round of a unit -----
    def _benchmark(self, device: Device, job: BenchJob) -> None:
        name = job.name
        key = SHARED if self.cfg.distribute else device.serial
        cancel = self.work.cancel_event(name)
        if self.control.should_skip(name) or cancel.is_set():
            if not self.control.stop_now.is_set():
                self._device_result(name, key, {"status": "skipped", "device": device.serial})
            return
        per_device = dict(self._record(name).get("devices") or {})
        previous = dict(per_device.get(key) or {})
        if previous.get("status") in TERMINAL:
            # Finished on this device before a kill: its report stands; the model may still need
            # its other devices, or only the terminal transition the kill cut off.
            self._device_result(name, key, previous)
            return
        done = round_files.load(self.run_dir, name, device.serial, self.cfg.bench.backend)
        index = len(done) + 1
        attempt = self._attempt(int(previous.get("attempts", 0)) + 1)
        per_device[key] = {**previous, "status": "benchmarking", "attempts": attempt.number, "device": device.serial,
                           "round": index}
        self.store.update(name, devices=per_device)
        self._set_status(name, "benchmarking", device=device.serial, stage="benchmark")
        started_at = time.time()
        settings = per_round(self.cfg.bench, self.cfg.rounds)
        if index > 1:  # one profiled pass and one pair of energy windows per unit: after its first round
            settings = replace(settings, profile_ops=None, energy=False)
        outcome = self._in_flight(name, lambda: bench_step(
            job, device, settings=settings, run_id=self.run_id, cancel=cancel,
            emit=self.emit, attempt=attempt, isolate=self._isolation_for(device),
            before_benchmark=self.recovery.wait_for_temperature))
        if isinstance(outcome, Benchmarked) and outcome.result.valid:
            self.recovery.device_ok(device)
            self._after_round(job, device, key, done + [(outcome.result, started_at)])
        else:
            self._apply_benchmark(job, device, key, attempt, outcome)

    def _after_round(self, job: BenchJob, device: Device, key: str, done: list[tuple[BenchResult, float]]) -> None:
        """A valid round: keep it, then queue the next one or finish the unit with all of them."""
        name, serial, backend = job.name, device.serial, self.cfg.bench.backend
        index = len(done)
        result, started_at = done[-1]
        round_files.save(self.run_dir, name, serial, backend, index, result, started_at)
        clock = self.references[serial]
        rounds = [round_of(i, r, at, clock.nearest(at)) for i, (r, at) in enumerate(done, start=1)]
        target = self.cfg.rounds
        if index >= target and not judge(rounds).stable:
            target = min(self.cfg.max_rounds, index + 1)  # one more round, later in the run
        self.emit(RoundFinished(model=name, device=serial, round=index, rounds=max(target, index),
                                median_ms=rounds[-1].median_ns / 1e6, seconds=result.seconds))
        if index < target:
            per_device = dict(self._record(name).get("devices") or {})
            per_device[key] = {**per_device.get(key, {}), "status": "benchmarking", "attempts": 0, "device": serial,
                               "round": index, "rounds": target,
                               "round_medians_ms": [r.median_ns / 1e6 for r in rounds]}
            self.store.update(name, devices=per_device)
            # Behind the other units' rounds, and not before ROUND_GAP_S: drift shows between rounds.
            self.work.put_job(serial, job, ready_at=time.monotonic() + ROUND_GAP_S)
            return
        self._apply_benchmark(job, device, key, self._attempt(1), Benchmarked(combine(rounds, [r for r, _ in done])))

    # ----- a round's outcome, or the unit's combined result -----
    def _apply_benchmark(self, job: BenchJob, device: Device, key: str, attempt: Attempt, outcome: Outcome) -> None:
        name, serial = job.name, device.serial
        if isinstance(outcome, Benchmarked):
            self.recovery.device_ok(device)
            bench = outcome.result
            path = self.reports.write(job.spec, serial, conversion=job.conversion, bench=bench, error=None,
                                      device_info=bench.device_info)
            self._device_result(name, key, {
                "status": "done" if bench.valid else "failed", "attempts": attempt.number, "report": str(path),
                "median_ms": bench.median_ms, "error": bench.error.to_dict() if bench.error else None,
                "device": serial, "flags": bench.flags})
            round_files.remove(self.run_dir, name, serial, self.cfg.bench.backend)
        elif isinstance(outcome, Cancelled) or self.control.stop_now.is_set():
            if self.control.stop_now.is_set():
                self._cancelled(name)
            else:
                self._device_result(name, key, {"status": "skipped", "device": serial})
        elif isinstance(outcome, Retry):
            self.emit(Recovery(action="retry", target=f"{name}@{serial}",
                               detail=f"{outcome.error.message} (attempt {attempt.number} of {attempt.max_attempts})"))
            self.store.update(name, error=outcome.error.to_dict())
            if outcome.fault is not None:
                self.recovery.device_fault(device, outcome.fault)
            self.work.put_job(serial if self._rounds_started(name, key) else key, job)
        elif isinstance(outcome, Failed):
            self.emit(Recovery(action="give-up", target=f"{name}@{serial}", severity="error",
                               detail=f"{outcome.error.message} after {attempt.number} attempt(s)"))
            path = self.reports.write(job.spec, serial, conversion=job.conversion, bench=None, error=outcome.error,
                                      device_info=outcome.device_info)
            self._device_result(name, key, {"status": "failed", "attempts": attempt.number, "report": str(path),
                                            "error": outcome.error.to_dict(), "device": serial})
            round_files.remove(self.run_dir, name, serial, self.cfg.bench.backend)
            if outcome.fault is not None:
                self.recovery.device_fault(device, outcome.fault)

    def _rounds_started(self, name: str, key: str) -> bool:
        """Whether a unit has finished rounds on the device it is on (its later rounds stay there)."""
        return int(((self._record(name).get("devices") or {}).get(key) or {}).get("round") or 1) > 1

    # ----- the reference model -----
    def _time_reference(self, device: Device) -> None:
        """Time the reference model on `device` now; a failure is reported and costs the run nothing else."""
        serial, clock = device.serial, self.references[device.serial]
        started, wall = time.monotonic(), time.time()
        self.emit(DeviceState(serial=serial, state="busy", kind=device.kind, model="(reference model)"))
        median_ns: float | None = None
        detail = ""
        try:
            device.ready_for_benchmark(self.control.stop_now)
            with self._isolation_for(device)():
                block: dict[str, Any] = device.benchmark(Artifact(str(ref.REFERENCE_FILE), ref.REFERENCE_RUNTIME),
                                                         ref.SETTINGS, self.run_id, self.control.stop_now)
            if block.get("valid"):
                median_ns = float(block["stats"]["median_ns"])
            else:
                detail = f"{block.get('error_stage')}: {block.get('error_message')}"
        except DeviceError as err:
            detail = f"device: {err}"
        cost = time.monotonic() - started
        clock.record(time.monotonic(), cost, wall, median_ns)
        self.emit(ReferenceTimed(serial=serial, median_ms=None if median_ns is None else median_ns / 1e6,
                                 seconds=round(cost, 3), detail=detail[:300]))
        self.emit(DeviceState(serial=serial, state="idle", kind=device.kind))
