"""A synthetic many-model run for bench/tui_latency.py: the console under a 10,000-model queue.

    python bench/tui_synthetic.py console --models 10000 --stats OUT.json   (on a terminal)
    python bench/tui_synthetic.py store RUN_DIR --models 10000

`console` runs the real console (make_app) over SyntheticPipeline, whose events reach the app the
way a real run's do: pipeline thread -> TuiReporter -> post_message. It times, inside the console
process, every fold of events into the panes and every frame painted, and writes the figures and
the process's memory to OUT.json when the console exits.

`store` builds a finished-looking RUN_DIR with the real RunStore (and an events.jsonl written by
the real JsonlReporter) for the start-up timings of `nnlite status` and `nnlite tui`.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nnlite_tui.core.events import (DeviceState, ModelLog, ModelStatus, Recovery, RunFinished,  # noqa: E402
                                    RunStarted, StageFinished, StageStarted)

DEVICES = ("emulator-32399", "emulator-5554", "host")
NOISE = ("/usr/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` is deprecated, "
         "use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.")


def names(count: int) -> tuple[str, ...]:
    return tuple(f"lemur_{i:05d}_{('alexnet', 'resnet18_mini', 'mobilenetv1_mini', 'vit_tiny')[i % 4]}"
                 for i in range(count))


def model_events(i: int, name: str, t: float) -> list:
    """One model's pass as the pipeline reports it: statuses, stages, log lines, device states."""
    device = DEVICES[i % len(DEVICES)]
    failed = i % 17 == 0
    events = [ModelStatus(name, "converting", attempt=1, ts=t), StageStarted(name, "convert", ts=t)]
    events += [ModelLog(name, "convert", line, ts=t) for line in
               (NOISE, "  return cls.__new__(cls, *args)", NOISE, "  return cls.__new__(cls, *args)",
                f"[convert] {name}: exported 42 ops", f"[convert] {name}: lowered to tflite (245 KiB)")]
    events += [StageFinished(name, "convert", True, 2.5 + i % 7, ts=t),
               ModelStatus(name, "benchmarking", attempt=1, device=device, ts=t),
               DeviceState(device, "busy", kind="emulator" if "emulator" in device else "host", model=name,
                           temperature_c=40 + i % 30, mem_available_kb=2_000_000, ts=t),
               ModelLog(name, "benchmark", f"[nnlite] {device}: median {1 + i % 50 / 10:.2f} ms", ts=t)]
    if failed:
        events.append(ModelStatus(name, "failed", attempt=1, device=device, ts=t,
                                  error="benchmark: AdbError: device offline while running benchmark_model"))
    else:
        events.append(ModelStatus(name, "done", attempt=1, device=device, median_ms=1 + (i * 37 % 500) / 10, ts=t))
    events.append(DeviceState(device, "idle", kind="emulator" if "emulator" in device else "host", ts=t))
    return events


class SyntheticPipeline:
    """The Pipeline's interface (run(reporter, control), shutdown()), emitting a fast synthetic run."""

    def __init__(self, count: int, rate: float, seconds: float):
        self.names = names(count)
        self.rate = rate  # models per second
        self.seconds = seconds

    def run(self, reporter, control) -> dict:
        emit = reporter.emit
        started = time.time()
        emit(RunStarted("runs/synthetic", self.names, DEVICES))
        for device in DEVICES:
            emit(DeviceState(device, "idle", kind="emulator" if "emulator" in device else "host"))
        counts: dict[str, int] = {}
        for i, name in enumerate(self.names):
            if control.stopping or time.time() - started > self.seconds:
                break
            while not control.wait_while_paused(0.05):
                pass
            for event in model_events(i, name, time.time()):
                emit(event)
            if i % 50 == 25:  # a cool-down now and then: five ticks that make one line
                for tick in range(5):
                    emit(Recovery("cool-down", f"/dev/bus/usb/001/{i % 9:03d}/{DEVICES[0]}", severity="info",
                                  detail="thermal zone 0 at 81 C after benchmark of " + name,
                                  countdown_s=10.0 - 2 * tick))
            time.sleep(1 / self.rate)
        emit(RunFinished(counts, time.time() - started, stopped=control.stopping))
        return counts

    def shutdown(self) -> None:
        pass


class Timings:
    """Fold and paint durations inside the console process."""

    def __init__(self) -> None:
        self.fold_ms: list[float] = []
        self.paint_ms: list[float] = []
        self.frame_ms: list[float] = []  # a frame's paint plus the folds since the frame before it
        self.frame_cpu_ms: list[float] = []  # the same in CPU time of the console's thread (load-independent)
        self._pending_cpu = 0.0
        self._pending = 0.0  # both run on the console's event loop: no lock

    def install(self, app_class) -> None:
        """Time NnliteApp.fold (events into the view, and the panes when not throttled), its
        throttled screen update _show, and every frame Textual paints."""
        from textual.screen import Screen

        fold, show, on_timer = app_class.fold, app_class._show, Screen._on_timer_update
        timings = self

        def timed(method, record: bool):
            def wrapper(app, *args, **kwargs):
                t0, c0 = time.perf_counter(), time.thread_time()
                method(app, *args, **kwargs)
                took = (time.perf_counter() - t0) * 1000
                if record:
                    timings.fold_ms.append(took)
                timings._pending += took
                timings._pending_cpu += (time.thread_time() - c0) * 1000
            return wrapper

        def timed_update(screen):
            t0, c0 = time.perf_counter(), time.thread_time()
            painted = bool(screen._dirty_widgets or screen._layout_required or screen._repaint_required)
            on_timer(screen)
            if painted:
                took = (time.perf_counter() - t0) * 1000
                timings.paint_ms.append(took)
                timings.frame_ms.append(took + timings._pending)
                timings.frame_cpu_ms.append((time.thread_time() - c0) * 1000 + timings._pending_cpu)
                timings._pending = timings._pending_cpu = 0.0

        app_class.fold = timed(fold, record=True)
        app_class._show = timed(show, record=False)
        Screen._on_timer_update = timed_update


def run_console(args) -> None:
    import psutil

    from nnlite_tui.tui.app import NnliteApp, make_app

    timings = Timings()
    timings.install(NnliteApp)
    pipeline = SyntheticPipeline(args.models, args.rate, args.seconds)
    app = make_app(pipeline_factory=lambda: pipeline)
    rss = []

    def sample() -> None:
        while not app.is_running:
            time.sleep(0.05)
        process = psutil.Process()
        while app.is_running:
            rss.append(process.memory_info().rss)
            time.sleep(0.5)

    threading.Thread(target=sample, daemon=True).start()
    if args.profile:
        import cProfile

        cProfile.runctx("app.run()", globals(), locals(), args.profile)
    else:
        app.run()
    Path(args.stats).write_text(json.dumps({
        "fold_ms": timings.fold_ms, "paint_ms": timings.paint_ms, "frame_ms": timings.frame_ms,
        "frame_cpu_ms": timings.frame_cpu_ms, "rss_bytes": rss,
        "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "models_shown": len(app.view.models), "log_lines_kept": sum(len(v) for v in app.view.logs.values()),
        "events_kept": len(app.view.notable),
    }))


def build_store(run_dir: Path, count: int) -> None:
    """A 10,000-model run as a real run leaves it: state.json (+ journal) and events.jsonl."""
    from nnlite_tui.core.run.jsonl import JsonlReporter
    from nnlite_tui.core.store import RunStore

    all_names = names(count)
    reporter = JsonlReporter(run_dir)
    reporter.emit(RunStarted(str(run_dir), all_names, DEVICES))
    done = int(count * 0.8)  # the first 80% finished (1 in 17 of them failed), the rest queued
    records = []
    for i, name in enumerate(all_names):
        record = {"name": name, "spec": {"path": f"/data/lemur/{name}.py", "in_shape": [1, 3, 32, 32]}}
        if i < done:
            record.update(attempts=1, device=DEVICES[i % len(DEVICES)])
            if i % 17 == 0:
                record.update(status="failed", error={"stage": "benchmark", "type": "AdbError",
                                                      "message": "device offline"})
            else:
                record.update(status="done", median_ms=1 + (i * 37 % 500) / 10)
            for event in model_events(i, name, time.time()):
                reporter.emit(event)
        records.append(record)
    with RunStore(run_dir, flush_interval=1.0) as store:
        store.set_config({"devices": list(DEVICES)})
        store.add_models(records)
        store.compact()
    reporter.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    console = sub.add_parser("console")
    console.add_argument("--models", type=int, default=10_000)
    console.add_argument("--rate", type=float, default=40.0, help="models finished per second")
    console.add_argument("--seconds", type=float, default=60.0, help="stop feeding after this long")
    console.add_argument("--stats", required=True)
    console.add_argument("--profile", help="write a cProfile of the console to this file")
    store = sub.add_parser("store")
    store.add_argument("run_dir", type=Path)
    store.add_argument("--models", type=int, default=10_000)
    args = parser.parse_args()
    if args.what == "console":
        run_console(args)
    else:
        build_store(args.run_dir, args.models)


if __name__ == "__main__":
    main()
