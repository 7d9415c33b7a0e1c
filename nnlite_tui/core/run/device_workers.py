"""The pipeline's device side: one thread per device takes converted units, times them in rounds, and
times the device's reference model at intervals.

A unit is timed in rounds (bench/rounds.py), each a fresh benchmark process or app launch. After
each round the unit goes to the back of its device's queue, so the other units' rounds separate its
own; once it has its rounds (more, up to --max-rounds, while it is unstable) they are combined into
one result and the unit's report is written. Finished rounds are kept on disk (round_files.py), so a
run killed between rounds resumes with them. Between units, a device whose reference is due times it
(bench/reference.py) and the figure goes to the events.

The Pipeline (run/pipeline.py) holds one DeviceWorkers and runs its `device_loop` in each device's
thread. It reads the run's queues, store and control, and changes a unit's state only through the
Pipeline (UnitStates below).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from nnlite_tui.core.bench import reference as ref
from nnlite_tui.core.bench import reference_record
from nnlite_tui.core.bench.isolation import HostIsolation
from nnlite_tui.core.bench.reference import ReferenceClock
from nnlite_tui.core.bench.rounds import ROUND_GAP_S, combine, judge, per_round, round_of
from nnlite_tui.core.bench.step import bench_step
from nnlite_tui.core.bench.thermal_baseline import Baseline
from nnlite_tui.core.convert.step import Attempt
from nnlite_tui.core.devices.base import Device, DeviceError
from nnlite_tui.core.events import TERMINAL, DeviceState, Event, RoundFinished, Recovery, ReferenceTimed
from nnlite_tui.core.outcomes import (Artifact, Benchmarked, BenchJob, BenchResult, Cancelled, Failed, Outcome, Retry,
                                      StageError)
from nnlite_tui.core.run import round_files
from nnlite_tui.core.run.artifacts import DiskGuard
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.run.recovery import RecoveryPolicy, RoundWait
from nnlite_tui.core.run.report_writer import ReportWriter
from nnlite_tui.core.run.scheduling import SHARED, WorkQueue
from nnlite_tui.core.run.unit_faults import run_unit
from nnlite_tui.core.run.unit_records import DeviceEntry, UnitRecord, stored
from nnlite_tui.core.store import RunStore


class UnitStates(Protocol):
    """What the device side asks of the Pipeline, the one place a unit's state changes."""

    def emit(self, event: Event) -> None: ...

    def record(self, name: str) -> UnitRecord: ...

    def set_status(self, name: str, status: str, error: StageError | None = None, **fields: Any) -> None: ...

    def device_result(self, name: str, key: str, result: DeviceEntry) -> None:
        """One device's terminal result for the unit; the unit is finished once all its targets are."""

    def cancelled(self, name: str) -> None:
        """Stopped in flight: queued again on a stop now, else skipped."""

    def fail_alone(self, name: str, why: str) -> None:
        """The unit fails for a file it could not write (unit_faults.py), the run goes on."""


class DeviceWorkers:
    """The device threads' loop, rounds and reference runs."""

    def __init__(self, cfg: RunConfig, *, run_id: str, store: RunStore, devices: Mapping[str, Device],
                 work: WorkQueue, control: Control, recovery: RecoveryPolicy,
                 references: Mapping[str, ReferenceClock], reports: ReportWriter, disk: DiskGuard,
                 isolation: HostIsolation, cache_root: Path, units: UnitStates) -> None:
        self.cfg, self.run_id, self.run_dir = cfg, run_id, Path(cfg.out)
        self.store, self.devices, self.work, self.control = store, devices, work, control
        self.recovery, self.references, self.reports, self.disk = recovery, references, reports, disk
        self.isolation, self.cache_root, self.units = isolation, cache_root, units
        self.emit = units.emit
        self.thermal_baselines: dict[str, Baseline] = {}  # per device, taken before its first round

    # ----- the loop -----
    def device_loop(self, serial: str) -> None:
        """The device's thread: take its jobs until the run is done or stopped."""
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
                     requeue=lambda: self._requeue_job(serial, job),
                     fail=lambda why: self.units.fail_alone(job.name, why))

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
                self.units.device_result(name, key, {"status": "skipped", "device": device.serial})
            return
        per_device = dict(self.units.record(name).get("devices") or {})
        previous: DeviceEntry = per_device.get(key) or {}
        if previous.get("status") in TERMINAL:
            # Finished on this device before a kill: its report stands; the model may still need
            # its other devices, or only the terminal transition the kill cut off.
            self.units.device_result(name, key, previous)
            return
        done = round_files.load(self.run_dir, name, device.serial, self.cfg.bench.backend)
        index = len(done) + 1
        attempt = self._attempt(previous.get("attempts", 0) + 1)
        per_device[key] = {**previous, "status": "benchmarking", "attempts": attempt.number, "device": device.serial,
                           "round": index}
        self.store.update(name, devices=per_device)
        self.units.set_status(name, "benchmarking", device=device.serial, stage="benchmark")
        started_at = time.time()
        settings = per_round(self.cfg.bench, self.cfg.rounds)
        if index > 1:  # one profiled pass and one pair of energy windows per unit: after its first round
            settings = replace(settings, profile_ops=None, energy=False)
        outcome = self.work.while_in_flight(name, lambda: bench_step(
            job, device, settings=settings, run_id=self.run_id, cancel=cancel,
            emit=self.emit, attempt=attempt, isolate=self._isolation_for(device),
            before_benchmark=self._before_round))
        if isinstance(outcome, Benchmarked) and outcome.result.valid:
            self.recovery.device_ok(device)
            self._after_round(job, device, key, done + [(outcome.result, started_at)])
        else:
            self._apply_benchmark(job, device, key, attempt, outcome)

    def _before_round(self, device: Device) -> RoundWait | None:
        """--cooldown-temp's wait, then (phones) the wait until the device is back at the session's thermal
        baseline (bench/thermal_baseline.py); what both found goes into the round's record."""
        cooldown = self.recovery.wait_for_temperature(device)
        if device.serial not in self.thermal_baselines:
            self.thermal_baselines[device.serial] = Baseline.of(device)
        thermal = self.thermal_baselines[device.serial].wait(device, self.control.stop_now)
        return cooldown if thermal is None else {**(cooldown or {}), "thermal_baseline": thermal}

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
            per_device = dict(self.units.record(name).get("devices") or {})
            per_device[key] = {**per_device.get(key, {}), "status": "benchmarking", "attempts": 0, "device": serial,
                               "round": index, "rounds": target,
                               "round_medians_ms": [r.median_ns / 1e6 for r in rounds]}
            self.store.update(name, devices=per_device)
            # Behind the other units' rounds, and not before ROUND_GAP_S: drift shows between rounds.
            self.work.put_job(serial, job, ready_at=time.monotonic() + ROUND_GAP_S)
            return
        between = reference_record.between_session(self.cache_root, serial)
        self._apply_benchmark(job, device, key, self._attempt(1),
                              Benchmarked(combine(rounds, [r for r, _ in done], between)))

    # ----- a round's outcome, or the unit's combined result -----
    def _apply_benchmark(self, job: BenchJob, device: Device, key: str, attempt: Attempt, outcome: Outcome) -> None:
        name, serial = job.name, device.serial
        if isinstance(outcome, Benchmarked):
            self.recovery.device_ok(device)
            bench = outcome.result
            path = self.reports.write(job.spec, serial, conversion=job.conversion, bench=bench, error=None,
                                      device_info=bench.device_info)
            self.units.device_result(name, key, {
                "status": "done" if bench.valid else "failed", "attempts": attempt.number, "report": str(path),
                "median_ms": bench.median_ms, "error": stored(bench.error) if bench.error else None,
                "device": serial, "flags": bench.flags})
            round_files.remove(self.run_dir, name, serial, self.cfg.bench.backend)
        elif isinstance(outcome, Cancelled) or self.control.stop_now.is_set():
            if self.control.stop_now.is_set():
                self.units.cancelled(name)
            else:
                self.units.device_result(name, key, {"status": "skipped", "device": serial})
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
            self.units.device_result(name, key, {"status": "failed", "attempts": attempt.number, "report": str(path),
                                            "error": stored(outcome.error), "device": serial})
            round_files.remove(self.run_dir, name, serial, self.cfg.bench.backend)
            if outcome.fault is not None:
                self.recovery.device_fault(device, outcome.fault)

    def _rounds_started(self, name: str, key: str) -> bool:
        """Whether a unit has finished rounds on the device it is on (its later rounds stay there)."""
        return int(((self.units.record(name).get("devices") or {}).get(key) or {}).get("round") or 1) > 1

    # ----- the reference workloads -----
    def _time_reference(self, device: Device) -> None:
        """Time every reference workload on `device` now, keep the figures in the run's references.json
        and the device history; a failure is reported and costs the run nothing else."""
        serial, clock = device.serial, self.references[device.serial]
        started = time.monotonic()
        self.emit(DeviceState(serial=serial, state="busy", kind=device.kind, model="(reference model)"))
        figures: dict[str, float] = {}
        details: list[str] = []
        for reference in ref.active_references():
            if self.control.stop_now.is_set():
                break
            wall = time.time()
            median_ns, detail = self._time_one_reference(device, reference)
            if median_ns is not None:
                clock.figure(reference.name, wall, median_ns)
                figures[reference.name] = median_ns
            else:
                details.append(f"{reference.name}: {detail}")
        cost = time.monotonic() - started
        clock.record(time.monotonic(), cost, None, None)
        try:
            reference_record.keep(self.run_dir, self.cache_root, serial, self.run_id, clock)
        except (OSError, ValueError) as exc:
            details.append(f"not kept: {exc}")
        ms = (lambda name: figures[name] / 1e6 if name in figures else None)
        self.emit(ReferenceTimed(serial=serial, median_ms=ms(ref.COMPUTE), memory_ms=ms(ref.MEMORY),
                                 seconds=round(cost, 3), detail="; ".join(details)[:300]))
        self.emit(DeviceState(serial=serial, state="idle", kind=device.kind))

    def _time_one_reference(self, device: Device, reference: ref.Reference) -> tuple[float | None, str]:
        try:
            artifact = Artifact(str(reference.artifact(self.cache_root)), ref.REFERENCE_RUNTIME)
            device.ready_for_benchmark(self.control.stop_now)
            with self._isolation_for(device)():
                block = device.benchmark(artifact, reference.settings, self.run_id, self.control.stop_now)
        except DeviceError as err:
            return None, f"device: {err}"
        except (OSError, RuntimeError) as err:  # the memory reference could not be written
            return None, f"reference file: {err}"
        stats = block.get("stats")
        if block.get("valid") and isinstance(stats, dict) and isinstance(stats.get("median_ns"), (int, float)):
            return float(stats["median_ns"]), ""
        return None, f"{block.get('error_stage')}: {block.get('error_message')}"

    # ----- helpers -----
    def _attempt(self, number: int) -> Attempt:
        return Attempt(number, self.cfg.max_attempts, self.cfg.backoff_s)

    def _isolation_for(self, device: Device) -> Callable[[], AbstractContextManager[None]]:
        """The host's benchmarks run apart from the conversions (bench/isolation.py); a phone's need nothing."""
        return self.isolation.benchmarking if device.kind == "host" else nullcontext
