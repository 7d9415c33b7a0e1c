"""The operator's actions: keys and command-palette entries that steer the run through its Control.

A mixin of the console app (app.py): every action only calls the Control (or RemoteControl) and
shows the command at once; the pipeline applies it at its next stage boundary.
"""

from __future__ import annotations

from typing import Iterable

from textual import work
from textual.app import SystemCommand
from textual.screen import Screen

from nnlite_tui.exit_codes import ExitCode
from nnlite_tui.core.events import TERMINAL, RunControl
from nnlite_tui.tui.screens.confirm import ConfirmQuit
from nnlite_tui.tui.failure import cause_line
from nnlite_tui.tui.screens.detail import ModelDetailScreen
from nnlite_tui.tui.screens.full_text import FullTextScreen
from nnlite_tui.tui.screens.help import HelpScreen
from nnlite_tui.tui.screens.results import ResultsScreen
from nnlite_tui.tui.widgets.events_pane import clock_time, describe

QUIT_WAIT_SECONDS = 20.0  # for the pipeline to cancel its stages before its children are killed


class OperatorActions:
    """Needs from the app: control, view, pipeline, pipeline_done, pipeline_failed, attach,
    pipeline_factory, theme_names, param_cache, fold() and get_screen_main()."""

    def operator(self, action: str, model: str | None = None) -> None:
        """Send the command and show it at once; the runner's echo of it is folded into the same line,
        and the runner writes it to events.jsonl."""
        self.control.command(action, None if action == "skip" and model and "," in model else model)
        self.fold([RunControl(action, model, ts=self.view.clock())])

    def refused(self, what: str) -> bool:
        """Say why a command cannot apply, instead of showing it as done: the run has ended, or
        (attached) no process owns it (a runner that starts later reads only what is written after
        its start)."""
        view = self.view
        why = None
        if view.finished is not None:
            word = "was stopped" if view.finished.stopped else "has finished"
            why = f"The run {word}: nothing to {what}. Rerun its `nnlite run` command to go on."
        elif self.attach and view.runner_alive is False:
            why = (f"No process runs {view.run_dir} now: nothing to {what}. Rerun its `nnlite run` "
                   "command (same --out) to resume it.")
        if why:
            self.notify(why, severity="warning", timeout=8)
        return why is not None

    def action_toggle_pause(self) -> None:
        if self.refused("resume" if self.view.paused else "pause"):
            return
        self.operator("resume" if self.view.paused else "pause")

    def action_skip_current(self) -> None:
        if self.refused("skip"):
            return
        in_flight = self.view.in_flight()
        if not in_flight:
            self.notify("No model in flight to skip; x skips the model under the cursor.", severity="warning")
            return
        self.operator("skip", ", ".join(in_flight))

    def action_skip_selected(self) -> None:
        model = self.get_screen_main().selected_model()
        if model is None or self.refused("skip"):
            return
        status = self.view.models[model].status
        if status in TERMINAL:
            self.notify(f"{model} is {status} already: nothing to skip.", severity="warning")
            return
        self.operator("skip", model)

    def action_retry_selected(self) -> None:
        model = self.get_screen_main().selected_model()
        if model is None or self.refused("retry"):
            return
        status = self.view.models[model].status
        if status not in ("failed", "skipped"):
            self.notify(f"{model} is {status}: nothing to retry (only a failed or skipped model is retried).",
                        severity="warning")
            return
        self.operator("retry", model)

    def action_stop_after_current(self) -> None:
        if self.refused("stop"):
            return
        if self.view.stopping:
            self.notify("Already stopping after the models in flight.", severity="warning")
            return
        self.operator("stop_after_current")

    def action_show_error(self) -> None:
        """The whole failure text of the model under the cursor."""
        model = self.get_screen_main().selected_model()
        row = self.view.models.get(model) if model else None
        if row is None or not row.error:
            self.notify(f"{model or 'No model'} has no failure to show.", severity="information")
            return
        self.push_screen(FullTextScreen(f"Failure of {model} (try {row.attempt})",
                                        [cause_line(row.error), "", *row.error.splitlines()]))

    def action_show_events(self) -> None:
        """Every event the console keeps, newest first, on whole lines."""
        now = self.view.clock()
        lines = [f"{clock_time(e.ts)} {describe(e, now, whole=True)}" for e in self.view.notable]
        self.push_screen(FullTextScreen(f"Events {len(lines)} (newest first)", lines))

    def action_help(self) -> None:
        focused = self.focused
        pane = None
        while focused is not None and pane is None:  # the pane the focused widget is in
            pane = focused.id if focused.id in ("queue", "log", "events") else None
            focused = focused.parent
        self.push_screen(HelpScreen(pane))

    def action_detail(self, model: str | None = None) -> None:
        model = model or self.get_screen_main().selected_model()
        if model:
            self.push_screen(ModelDetailScreen(self.view, model))

    def action_results(self) -> None:
        if not isinstance(self.screen, ResultsScreen):
            self.push_screen(ResultsScreen(self.view, self.param_cache))

    def action_next_theme(self) -> None:
        names = self.theme_names
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"theme {self.theme}", timeout=2)

    def action_quit(self) -> None:
        running = self.pipeline_factory is not None and not self.pipeline_done.is_set() and not self.attach
        if not running:
            if self.pipeline_failed:
                self.finish(ExitCode.INTERNAL)
            else:
                ended = self.view.finished is not None and not self.view.finished.stopped
                self.finish(ExitCode.OK if ended or self.attach else ExitCode.STOPPED)
            return
        in_flight = self.view.in_flight()
        if in_flight:
            self.push_screen(ConfirmQuit(in_flight), callback=self._quit_answered)
        else:
            self._quit_answered(True)

    def _quit_answered(self, confirmed: bool | None) -> None:
        if confirmed:
            self.notify("Stopping: ending child processes, the run stays resumable…", timeout=QUIT_WAIT_SECONDS)
            self._stop_and_exit()

    @work(thread=True, exclusive=True, group="quit", exit_on_error=False)
    def _stop_and_exit(self) -> None:
        """Stop now: the pipeline cancels its stages and ends its children on its way out of run().

        shutdown() is called only if run() has not returned in time (or never started), so that
        the child processes are stopped by one thread, not two at once.
        """
        try:
            self.control.request_stop(now=True)
            if not self.pipeline_done.wait(QUIT_WAIT_SECONDS) and self.pipeline is not None:
                self.pipeline.shutdown()
        finally:
            self.call_from_thread(self.finish, ExitCode.STOPPED)

    def finish(self, code: ExitCode) -> None:
        self.exit(code, return_code=int(code))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own Quit, Keys and Theme (a list of every built-in theme, not the three of ours)
        # stood beside ours: one entry for each thing.
        yield from (c for c in super().get_system_commands(screen) if c.title not in ("Quit", "Keys", "Theme", "Bell"))
        yield SystemCommand("Pause / resume", "Pause the run, or resume it (p)", self.action_toggle_pause)
        yield SystemCommand("Skip in-flight", "Skip the model(s) in flight (s)", self.action_skip_current)
        yield SystemCommand("Skip selected", "Skip the model under the cursor (x)", self.action_skip_selected)
        yield SystemCommand("Retry selected", "Retry the model under the cursor (r)", self.action_retry_selected)
        yield SystemCommand("Stop after current", "Finish the models in flight, then stop (t)",
                            self.action_stop_after_current)
        yield SystemCommand("Model detail", "Report of the model under the cursor (enter)", self.action_detail)
        yield SystemCommand("Results", "Latency vs parameters, failures by stage, medians per device (v)",
                            self.action_results)
        queue = self.get_screen_main().query_one("#queue")
        yield SystemCommand("Filter by name", "Type part of a model's name (/)", queue.action_focus_filter)
        yield SystemCommand("Filter by status", "Next status filter (f)", queue.action_cycle_status)
        yield SystemCommand("Sort models", "Next sort order (o)", queue.action_cycle_sort)
        yield SystemCommand("Follow in-flight log", "The log pane follows the model in flight (esc)",
                            lambda: self.get_screen_main().pick_model(None))
        yield SystemCommand("Failure text", "The whole failure of the model under the cursor (e)", self.action_show_error)
        yield SystemCommand("Events, whole lines", "Every event kept, uncut (E)", self.action_show_events)
        yield SystemCommand("Help", "What every key does (?)", self.action_help)
        yield SystemCommand("Next theme", "Cycle the nnlite colour themes (T)", self.action_next_theme)
        yield SystemCommand("Quit", "Quit; asks first while a model is in flight (q)", self.action_quit)

