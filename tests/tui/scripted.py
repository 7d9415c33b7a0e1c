"""ScriptedPipeline: a stand-in with the Pipeline's interface (run(reporter, control), shutdown()).

It honours a real core.control.Control the way the pipeline does (pause, skip, stop at stage
boundaries), so console tests drive the real controls without converting anything.
"""

from __future__ import annotations

import threading
import time

from nnlite_tui.core.run.control import Control
from nnlite_tui.core.events import (DeviceState, ModelLog, ModelStatus, Recovery, Reporter, RunControl, RunFinished,
                                    RunStarted, StageFinished, StageStarted)


class ScriptedPipeline:
    def __init__(self, models=("m1", "m2", "m3"), run_dir="runs/t1", step_s=0.02, hold: str | None = None):
        self.models = tuple(models)
        self.run_dir = run_dir
        self.step_s = step_s
        self.hold = hold  # stay in "converting" on this model until skipped or stopped
        self.shutdown_called = threading.Event()
        self.ran = threading.Event()
        self.held_before: str | None = None  # the model the pause last held the run in front of

    def run(self, reporter: Reporter, control: Control) -> dict:
        """Like Pipeline.run: returns once stopped or done, having stopped its children (shutdown)."""
        self.ran.set()
        try:
            return self._run(reporter, control)
        finally:
            self.shutdown()

    def _run(self, reporter: Reporter, control: Control) -> dict:
        started = time.time()
        emit = reporter.emit
        emit(RunStarted(self.run_dir, self.models, ("host",)))
        emit(DeviceState("host", "idle"))
        counts: dict[str, int] = {}
        for name in self.models:
            self._notes(emit, control)
            if control.stopping:
                break
            while not control.wait_while_paused(0.05):
                self._notes(emit, control)
                self.held_before = name
            self._notes(emit, control)
            status = self._one(name, emit, control)
            counts[status] = counts.get(status, 0) + 1
        self._notes(emit, control)
        emit(RunFinished(counts, time.time() - started, stopped=control.stopping))
        return counts

    def _one(self, name, emit, control) -> str:
        emit(ModelStatus(name, "converting", attempt=1))
        emit(StageStarted(name, "convert"))
        emit(DeviceState("host", "busy", model=name))
        for i in range(3):
            emit(ModelLog(name, "convert", f"{name}: converting step {i}"))
        deadline = time.monotonic() + (60 if name == self.hold else self.step_s)
        while time.monotonic() < deadline:
            self._notes(emit, control)
            if control.take_skip_current() or control.should_skip(name):
                emit(ModelStatus(name, "skipped", attempt=1))
                return "skipped"
            if control.stop_now.is_set():
                emit(ModelStatus(name, "queued", attempt=1))
                return "queued"
            time.sleep(0.01)
        emit(StageFinished(name, "convert", True, self.step_s))
        emit(ModelStatus(name, "benchmarking", attempt=1, device="host"))
        emit(ModelStatus(name, "done", attempt=1, device="host", median_ms=1.25))
        emit(DeviceState("host", "idle"))
        return "done"

    @staticmethod
    def _notes(emit, control: Control) -> None:
        """As the runner's RunWatch does: every operator's command goes to the event log."""
        for command, model in control.take_notes():
            emit(RunControl(command, model))

    def shutdown(self) -> None:
        self.shutdown_called.set()


def busy_run_events(now: float) -> list:
    """A run a few minutes in: every status, a booting emulator, a cool-down, logs of the model in flight."""
    t0 = now - 600
    names = [f"model_{i:02d}" for i in range(12)]
    events = [RunStarted("runs/t1", tuple(names), ("host", "emulator-5554"), ts=t0)]
    finished = {"model_00": ("done", 1.82), "model_01": ("done", 3.41), "model_02": ("failed", None),
                "model_03": ("done", 0.57), "model_04": ("skipped", None)}
    for i, (name, (status, median)) in enumerate(finished.items()):
        events.append(ModelStatus(name, "converting", attempt=1, ts=t0 + 60 * i + 5))
        events.append(ModelStatus(name, status, attempt=2 if status == "failed" else 1, device="host",
                                  median_ms=median, ts=t0 + 60 * (i + 1),
                                  error="convert: TorchExportError: unsupported op aten::grid_sampler" if
                                  status == "failed" else None))
    events += [
        ModelStatus("model_05", "benchmarking", attempt=1, device="host", ts=now - 20),
        ModelStatus("model_06", "converted", attempt=1, ts=now - 15),
        ModelStatus("model_07", "converting", attempt=1, ts=now - 5),
        StageStarted("model_07", "convert", ts=now - 5),
        DeviceState("host", "busy", kind="host", model="model_05", temperature_c=54.5,
                    mem_available_kb=6_291_456, ts=now - 20),
        DeviceState("emulator-5554", "booting", kind="emulator", phase="waiting for sys.boot_completed",
                    boot_elapsed_s=38.0, boot_completed=False, ts=now - 2),
        Recovery("reconnect", "emulator-5554", "adb: device offline", severity="error", ts=now - 50),
        Recovery("cool-down", "host", "CPU at 81°C", severity="warning", countdown_s=90.0, ts=now - 30),
    ]
    events += [ModelLog("model_07", "convert", f"[convert] model_07 step {i}: lowering aten ops")
               for i in range(8)]
    return events




