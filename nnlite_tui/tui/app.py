"""The console app: wiring of the main screen, the event sources (pipeline worker or attached
run), the operator's actions (actions.py) and themes.

`make_app()` is the one factory used by `nnlite tui`, `nnlite run` on a terminal, and the tests.
The pipeline runs in a thread worker and reaches the UI only through TuiReporter messages; the UI
reaches the pipeline only through its Control (or, attached, through RemoteControl).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from nnlite_tui.exit_codes import ExitCode
from nnlite_tui.core.run.control import Control, RemoteControl, runner_pid
from nnlite_tui.core.run.event_log import EventTail
from nnlite_tui.core.events import Event, ModelLog, MultiReporter, Recovery, Reporter, RunStarted
from nnlite_tui.tui.actions import OperatorActions
from nnlite_tui.tui.messages import EventsPending, PipelineEvent, PipelineEvents
from nnlite_tui.tui.reporter import TuiReporter
from nnlite_tui.tui.results import ParamCache
from nnlite_tui.tui.screens.main import MainScreen
from nnlite_tui.tui.state import RunView
from nnlite_tui.tui.widgets.run_header import RunHeader
from nnlite_tui.tui.themes import DEFAULT_THEME, load_themes

STYLES = Path(__file__).parent / "styles"
RUNNER_CHECK_SECONDS = 2.0
UI_INTERVAL = 0.1  # at most ten screen updates a second from a stream of events
UNMOUNT_WAIT_SECONDS = 5.0


def settle_heap() -> None:
    """Move what exists now (the app, a run's models) out of the garbage collector's sight.

    These objects live as long as the console; with 10,000 models every full collection walked
    them all, ~200 ms a time, several times a minute, each one a frozen frame.
    """
    gc.collect()
    gc.freeze()


class NnliteApp(OperatorActions, App[int]):
    CSS_PATH = STYLES / "console.tcss"
    TITLE = "nnlite"
    # Short descriptions: at 80 columns the footer keeps every key, Help and Quit included.
    BINDINGS = [
        Binding("p", "toggle_pause", "Pause"),
        Binding("s", "skip_current", "Skip"),
        Binding("x", "skip_selected", "Skip sel"),
        Binding("r", "retry_selected", "Retry"),
        Binding("t", "stop_after_current", "Stop after"),
        Binding("v", "results", "Results"),
        Binding("question_mark", "help", "Help"),
        Binding("e", "show_error", "Failure text", show=False),
        Binding("E", "show_events", "Events, whole", show=False),
        Binding("T", "next_theme", "Theme", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, *, pipeline_factory: Callable[[], Any] | None = None, run_dir: str | None = None,
                 attach: bool = False, theme: str | None = None, clock: Callable[[], float] = time.time,
                 reporters: Iterable[Reporter] = (), ui_interval: float = UI_INTERVAL, sample_host: bool = True):
        super().__init__()
        self.sample_host = sample_host  # the host card's live load figures (tests: off, screens must not vary)
        self.ui_interval = ui_interval
        self._unshown: list[Event] = []
        self._show_pending = False
        self._last_show = 0.0
        self.pipeline_factory = pipeline_factory
        self.attach = attach
        self.view = RunView(clock)
        self.param_cache = ParamCache()  # parameter counts from the reports, for the results screen
        self.view.run_dir = run_dir
        self.control: Control | RemoteControl = RemoteControl(run_dir) if attach else Control()
        self.pipeline: Any = None
        self.pipeline_done = threading.Event()
        self.pipeline_started = False  # no pipeline worker, nothing to wait for when the console closes
        self.pipeline_failed = False
        self.ready = False  # the panes are mounted
        self.reporter = TuiReporter(self)
        self.extra_reporters = list(reporters)  # e.g. the events.jsonl writer of a local run
        self.tail = EventTail(run_dir, lambda events: self.post_message(PipelineEvents(events))) if attach else None
        loaded = load_themes()
        self.theme_errors = loaded.errors
        self.theme_names = list(loaded.themes)
        for item in loaded.themes.values():
            self.register_theme(item)
        wanted = theme or DEFAULT_THEME
        if wanted not in loaded.themes:
            self.theme_errors.append(f"unknown theme {wanted!r}; using {DEFAULT_THEME} "
                                     f"(available: {', '.join(self.theme_names)})")
            wanted = DEFAULT_THEME
        self.theme = wanted

    def get_default_screen(self) -> Screen:
        run_pid = None
        if self.sample_host:
            run_pid = (lambda: runner_pid(self.view.run_dir) if self.view.run_dir else None) if self.attach \
                else os.getpid
        return MainScreen(self.view, "attached" if self.attach else "local", run_pid)

    def on_mount(self) -> None:
        for error in self.theme_errors:
            self.notify(error, severity="warning", timeout=10)
        self.call_after_refresh(self._start)  # once every pane is mounted and can take events

    def _start(self) -> None:
        self.ready = True
        self.get_screen_main().show_all()  # events that arrived while the panes were mounting
        settle_heap()
        if self.tail is not None:
            self._follow_events()
            self.check_runner()
            self.set_interval(RUNNER_CHECK_SECONDS, self.check_runner)
        elif self.pipeline_factory is not None:
            self.pipeline_started = True
            self._run_pipeline()

    # --- pipeline and events in ---
    @work(thread=True, exclusive=True, group="pipeline", exit_on_error=False)
    def _run_pipeline(self) -> None:
        try:
            self.pipeline = self.pipeline_factory()
            if not self.control.stopping:
                self.pipeline.run(MultiReporter(self.reporter, *self.extra_reporters), self.control)
        finally:
            self.pipeline_done.set()

    def check_runner(self) -> None:
        alive = runner_pid(self.view.run_dir) is not None
        if alive != self.view.runner_alive:
            self.view.runner_alive = alive
            self.get_screen_main().query_one(RunHeader).update_from_view()

    @work(thread=True, exclusive=True, group="attach", exit_on_error=False)
    def _follow_events(self) -> None:
        first, from_snapshot = self.tail.start()
        if from_snapshot:
            self.post_message(PipelineEvents(first, from_snapshot=True))
        self.tail.follow()

    def fold(self, events: Iterable[Event], throttle: bool = False) -> None:
        """Fold events into the view at once; show them now, or (a stream, throttle=True) with the
        others that arrive within ui_interval: one screen update for all of them."""
        events = list(events)
        self.view.apply_all(events)
        if not self.ready:
            return
        self._unshown.extend(e for e in events if not isinstance(e, ModelLog))  # logs: view.fresh_lines
        wait = self._last_show + self.ui_interval - time.monotonic()
        if not throttle or wait <= 0:
            self._show()
        elif not self._show_pending:
            self._show_pending = True
            self.set_timer(wait, self._show)

    def _show(self) -> None:
        events, self._unshown = self._unshown, []
        self._show_pending = False
        self._last_show = time.monotonic()
        self.get_screen_main().show(events)
        if any(isinstance(e, RunStarted) for e in events):
            settle_heap()

    def get_screen_main(self) -> MainScreen:
        return next(s for s in self.screen_stack if isinstance(s, MainScreen))

    @on(PipelineEvent)
    def _event(self, message: PipelineEvent) -> None:
        self.fold([message.event])

    @on(PipelineEvents)
    def _events(self, message: PipelineEvents) -> None:
        self.view.replaying = message.from_snapshot
        try:
            self.fold(message.events, throttle=True)
        finally:
            self.view.replaying = False
        if message.from_snapshot:  # models finished before now were not seen finishing: rate from now
            self.view.rate_since = self.view.clock()

    @on(EventsPending)
    def _pending(self, message: EventsPending) -> None:
        self.fold(message.reporter.drain(), throttle=True)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group not in ("pipeline", "attach"):
            return
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.pipeline_failed = event.worker.group == "pipeline"
            self.fold([Recovery("crashed", event.worker.group, f"{type(error).__name__}: {error}", "error")])
            self.notify(f"{event.worker.group} stopped: {error}", severity="error", timeout=30)
        elif event.state == WorkerState.SUCCESS and event.worker.group == "pipeline":
            self.notify("The run has ended.", timeout=10)

    def on_unmount(self) -> None:
        gc.unfreeze()  # what settle_heap() hid from the collector can be collected again once we are gone
        if self.tail is not None:
            self.tail.stop.set()
        if self.pipeline_started and not self.pipeline_done.is_set():
            # Closed without the quit action (e.g. the terminal went away): still stop child processes.
            self.control.request_stop(now=True)
            if not self.pipeline_done.wait(UNMOUNT_WAIT_SECONDS) and self.pipeline is not None:
                self.pipeline.shutdown()


def make_app(*, pipeline_factory: Callable[[], Any] | None = None, run_dir: str | None = None,
             attach: bool = False, theme: str | None = None, clock: Callable[[], float] = time.time,
             reporters: Iterable[Reporter] = (), ui_interval: float = UI_INTERVAL,
             sample_host: bool = True) -> NnliteApp:
    """The console over a local pipeline (pipeline_factory) or attached to another process's run_dir.

    pipeline_factory is called in the pipeline worker thread (building may import torch) and must
    return an object with run(reporter, control) and shutdown(). `reporters` also receive every
    event of a local run (e.g. core.jsonl.JsonlReporter for RUN_DIR/events.jsonl). A stream of
    events reaches the screen at most once per ui_interval seconds (the view folds them at once).
    """
    if attach and not run_dir:
        raise ValueError("attach mode needs a run_dir")
    return NnliteApp(pipeline_factory=pipeline_factory, run_dir=run_dir, attach=attach, theme=theme, clock=clock,
                     reporters=reporters, ui_interval=ui_interval, sample_host=sample_host)


def run_tui(pipeline_factory: Callable[[], Any], theme: str | None = None, run_dir: str | None = None,
            reporters: Iterable[Reporter] = ()) -> int:
    """Run the console over a local pipeline until the run ends and the operator quits; the exit code."""
    app = make_app(pipeline_factory=pipeline_factory, run_dir=run_dir, theme=theme, reporters=reporters)
    code = app.run()
    return int(code) if code is not None else int(ExitCode.OK)
