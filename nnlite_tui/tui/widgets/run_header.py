"""Run header: progress (done/failed/total), throughput, ETA, elapsed time and the paused state."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from nnlite_tui.tui.formatting import line
from nnlite_tui.tui.state import RunView

BAR_WIDTH = 24


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "--"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h{minutes:02d}m"
    return f"{hours}:{minutes:02d}:{secs:02d}"


class RunHeader(Static):
    """Two lines at the top; its class says whether the run is running, paused, stopping or finished."""

    def __init__(self, view: RunView, *, mode: str = "local", **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.mode = mode  # "local" | "attached"
        self._word = ""
        self._text: tuple[str, str] | None = None

    def on_mount(self) -> None:
        self.update_from_view()
        self.set_interval(1.0, self.update_from_view)

    def state_word(self) -> str:
        view = self.view
        if view.finished is not None:
            return "STOPPED" if view.finished.stopped else "FINISHED"
        if view.runner_alive is False:
            return "NO RUNNER"
        if view.stopping:
            return "STOPPING"
        if view.paused:
            return "PAUSED"
        return "RUNNING" if view.started_at is not None else "STARTING"

    def update_from_view(self) -> None:
        view = self.view
        word = self.state_word()
        if word != self._word:  # a class change restyles the header; only on a change of state
            if self._word:
                self.remove_class(f"-{self._word.lower().replace(' ', '-')}")
            self.add_class(f"-{word.lower().replace(' ', '-')}")
            self._word = word
        counts = view.counts()
        total = len(view.models)
        done, failed, skipped = counts["done"], counts["failed"], counts["skipped"]
        finished = done + failed + skipped
        filled = round(BAR_WIDTH * finished / total) if total else 0
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        percent = f"{100 * finished / total:3.0f}%" if total else "  -%"
        rate = view.throughput_per_hour()
        in_flight = ", ".join(view.in_flight()) or "-"
        source = f"attached to {view.run_dir}" if self.mode == "attached" else (view.run_dir or "")
        line1 = line(
            ("nnlite", "bold"), "  ", (f" {word} ", "reverse bold"), f"  {bar} {percent}  ",
            (f"done {done}", "bold $success"), "  ", (f"failed {failed}", "bold $error"), "  ",
            (f"skipped {skipped}", "$warning"), f"  of {total}   ",
            f"{rate:.1f}" if rate is not None else "--", " models/h   ETA ", duration(view.eta_seconds()),
            "   elapsed ", duration(view.elapsed()),
        )
        line2 = line(("in flight: ", "dim"), in_flight, "   ", (source, "dim"))
        text = (line1.plain, line2.plain)
        if text != self._text:  # the styles follow from the text: same text, nothing to repaint
            self._text = text
            # Two lines, always: no layout pass (a layout pass re-renders the whole screen).
            self.update(Content("\n").join([line1, line2]), layout=False)
