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
from nnlite_tui.core.events import RunControl
from nnlite_tui.tui.screens.confirm import ConfirmQuit
from nnlite_tui.tui.screens.detail import ModelDetailScreen
from nnlite_tui.tui.screens.help import HelpScreen
from nnlite_tui.tui.screens.results import ResultsScreen

QUIT_WAIT_SECONDS = 20.0  # for the pipeline to cancel its stages before its children are killed


class OperatorActions:
    """Needs from the app: control, view, pipeline, pipeline_done, pipeline_failed, attach,
    pipeline_factory, theme_names, param_cache, fold() and get_screen_main()."""

    def operator(self, action: str, model: str | None = None) -> None:
        """Show the operator's command at once; the runner's echo of it is folded into the same line."""
        self.fold([RunControl(action, model, ts=self.view.clock())])

    def no_runner(self) -> bool:
        """Attached to a run that no process owns: a command would go unheard (a runner that starts
        later reads only what is written after its start), so say so instead of showing it done."""
        if self.attach and self.view.runner_alive is False:
            self.notify(f"No process runs {self.view.run_dir} now: nothing to steer. Rerun its `nnlite run` "
                        "command (same --out) to resume it.", severity="warning", timeout=8)
            return True
        return False

    def action_toggle_pause(self) -> None:
        if self.no_runner():
            return
        if self.view.paused:
            self.control.resume()
            self.operator("resume")
        else:
            self.control.pause()
            self.operator("pause")

    def action_skip_current(self) -> None:
        if self.no_runner():
            return
        in_flight = self.view.in_flight()
        if not in_flight:
            self.notify("No model in flight to skip.", severity="warning")
            return
        self.control.skip(None)
        self.operator("skip", ", ".join(in_flight))

    def action_skip_selected(self) -> None:
        model = self.get_screen_main().selected_model()
        if model and not self.no_runner():
            self.control.skip(model)
            self.operator("skip", model)

    def action_retry_selected(self) -> None:
        model = self.get_screen_main().selected_model()
        if model and not self.no_runner():
            self.control.retry(model)
            self.operator("retry", model)

    def action_stop_after_current(self) -> None:
        if self.no_runner():
            return
        self.control.request_stop(now=False)
        self.operator("stop_after_current")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

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
        yield from super().get_system_commands(screen)
        yield SystemCommand("Pause / resume", "Pause the run, or resume it (p)", self.action_toggle_pause)
        yield SystemCommand("Skip in-flight", "Skip the model(s) in flight (s)", self.action_skip_current)
        yield SystemCommand("Skip selected", "Skip the model under the cursor (x)", self.action_skip_selected)
        yield SystemCommand("Retry selected", "Retry the model under the cursor (r)", self.action_retry_selected)
        yield SystemCommand("Stop after current", "Finish the models in flight, then stop (t)",
                            self.action_stop_after_current)
        yield SystemCommand("Model detail", "Report of the model under the cursor (enter)", self.action_detail)
        yield SystemCommand("Results", "Latency vs parameters, failures by stage, medians per device (g)",
                            self.action_results)
        queue = self.get_screen_main().query_one("#queue")
        yield SystemCommand("Filter by name", "Type part of a model's name (/)", queue.action_focus_filter)
        yield SystemCommand("Filter by status", "Next status filter (f)", queue.action_cycle_status)
        yield SystemCommand("Sort models", "Next sort order (o)", queue.action_cycle_sort)
        yield SystemCommand("Follow in-flight log", "The log pane follows the model in flight (esc)",
                            lambda: self.get_screen_main().pick_model(None))
        yield SystemCommand("Help", "What every key does (?)", self.action_help)
        yield SystemCommand("Next theme", "Cycle the nnlite colour themes (T)", self.action_next_theme)
        yield SystemCommand("Quit console", "Quit; asks first while a model is in flight (q)", self.action_quit)

