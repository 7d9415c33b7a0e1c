"""Run header: progress (done/failed/total), throughput, ETA, elapsed time and the paused state."""

from __future__ import annotations

from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import Visual
from textual.widget import Widget

from nnlite_tui.core.names import cut_middle, short_name, short_names
from nnlite_tui.tui.formatting import Span, seconds, spans
from nnlite_tui.tui.live_phases import LABELS
from nnlite_tui.tui.state import RunView

BAR_WIDTH = 24
WIDE_HEADER = 130  # narrower: the compact first line


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


class RunHeader(Widget):
    """Two lines at the top; its class says whether the run is running, paused, stopping or finished.

    Both lines change with nearly every update during a run, but only a few of their fields do
    (a count, the rate, the clock): each field is drawn once and reused while its text and style
    stay, and a line is the join of its fields' drawings.
    """

    def __init__(self, view: RunView, *, mode: str = "local", **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.mode = mode  # "local" | "attached"
        self._word = ""
        self._text: tuple[str, str] | None = None
        self._parts: list[list[tuple[str, str]]] = [[], []]
        self._strips: list[Strip | None] = [None, None]
        self._drawn: dict[tuple[str, str], Strip] = {}  # (text, style) of a field -> its drawing
        self._drawn_key: tuple | None = None

    def render(self) -> Content:
        """The two lines as one Content (for a reader of the header; drawing goes by field)."""
        return Content("\n").join([Content.assemble(*parts) for parts in self._parts])

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
        source = f"attached to {view.run_dir}" if self.mode == "attached" else (view.run_dir or "")
        width = self.size.width or 160
        source = cut_middle(source, max(20, width // 3))
        slow = slow_text(view)
        room = width - len("in flight: ") - 3 - len(source) - (len(slow) + 3 if slow else 0)
        in_flight = short_names(view.in_flight(), max(20, room)) or "-"
        eta = eta_text(view)
        if width >= WIDE_HEADER:
            line1 = fields_of(
                ("nnlite", "bold"), "  ", (f" {word} ", "reverse bold"), f"  {bar} {percent}  ",
                (f"done {done}", "bold $success"), "  ", (f"failed {failed}", "bold $error"), "  ",
                (f"skipped {skipped}", "$warning"), f"  of {total}   ",
                f"{rate:.1f}" if rate is not None else "--", " models/h   ETA ", (eta, "bold"),
                "   elapsed ", duration(view.elapsed()),
            )
        else:  # 80 columns: the counts, the ETA and the clock, without the bar and the rate
            line1 = fields_of(
                (f" {word} ", "reverse bold"), f" {percent} ", (f"done {done}", "bold $success"), " ",
                (f"failed {failed}", "bold $error"), " ", (f"skip {skipped}", "$warning"), f" /{total}  ETA ",
                (eta, "bold"), "  ", duration(view.elapsed()),
            )
        line2 = fields_of(("in flight: ", "dim"), in_flight, *(("   ", (slow, "bold $warning")) if slow else ()), "   ",
                          (source, "dim"))
        text = ("".join(t for t, _ in line1), "".join(t for t, _ in line2))
        if text == self._text:  # the styles follow from the text: same text, nothing to repaint
            return
        old, self._text = self._text or ("", ""), text
        for y, parts in enumerate((line1, line2)):
            if text[y] != old[y]:
                self._parts[y], self._strips[y] = parts, None
                # Two lines, always: no layout pass (a layout pass re-renders the whole screen).
                self.refresh(Region(0, y, self.size.width, 1))

    def render_line(self, y: int) -> Strip:
        width, style = self.size.width, self.visual_style
        if (width, style) != self._drawn_key:  # another width or a restyle (paused, theme)
            self._drawn.clear()
            self._strips = [None, None]
            self._drawn_key = (width, style)
        if y >= len(self._strips):
            return Strip.blank(width, style.rich_style)
        strip = self._strips[y]
        if strip is None:
            strip = Strip.join([self._draw(part, style) for part in self._parts[y]]).simplify()
            strip = self._strips[y] = strip.crop(0, width)
        return strip

    def _draw(self, part: tuple[str, str], style: VisualStyle) -> Strip:
        strip = self._drawn.get(part)
        if strip is None:
            if len(self._drawn) > 256:  # old counts and clocks
                self._drawn.clear()
            drawn = Visual.to_strips(self, Content.assemble(part), len(part[0]) + 1, 1, style)
            strip = self._drawn[part] = drawn[0] if drawn else Strip([])
        return strip


def eta_text(view: RunView) -> str:
    """`6:20 ±1:10` (priced by cost), `~6:20` (by count: no costs known), `--`; paused time apart."""
    eta = view.eta()
    if eta is None:
        text = "--"
    elif eta.basis == "count":
        text = "~" + short_duration(eta.seconds)
    else:
        text = short_duration(eta.seconds) + (f" ±{short_duration(eta.spread)}" if eta.spread >= 1 else "")
    paused = view.estimator.paused_s(view.clock())
    return text + (f" +{short_duration(paused)} paused" if paused >= 1 else "")


def short_duration(seconds: float) -> str:
    """6:20, 1:02:03, 2d03h."""
    seconds = int(round(seconds))
    if seconds >= 86400:
        return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def slow_text(view: RunView) -> str:
    """The conversion holding the run up, when one has run a few times the run's median."""
    slow = view.slow_conversion()
    if slow is None:
        return ""
    name, took, median = slow
    live = view.phases.get(name)
    phase = f" in {LABELS.get(live.current.phase, live.current.phase)}" if live is not None else ""
    return f"slow: {short_name(name, 40)} converting {seconds(took)}{phase}, {took / median:.0f}x the median {seconds(median)}"


def fields_of(*parts: Span) -> list[tuple[str, str]]:
    """The (text, style) fields of a line, spaced as formatting.line() spaces them."""
    return [part if isinstance(part, tuple) else (part, "") for part in spans(*parts)]
