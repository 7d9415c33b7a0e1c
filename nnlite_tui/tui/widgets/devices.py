"""Devices pane: one card per device or emulator, with live boot monitoring."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from nnlite_tui.core.events import DeviceState
from nnlite_tui.core.names import short_name
from nnlite_tui.tui.state import RunView
from nnlite_tui.tui.widgets.borders import set_border_text

STATE_STYLE = {"device": "$success", "idle": "$success", "busy": "$primary", "booting": "$accent",
               "offline": "$warning", "absent": "$text-muted", "lost": "$error"}


SPARK = "▁▂▃▄▅▆▇█"


def reference_line(medians: list[float]) -> Content | None:
    """The device's reference model: its latest median, the change since the run's first figure, and
    the recent figures as a sparkline (taller is slower)."""
    if not medians:
        return None
    latest, first = medians[-1], medians[0]
    low, high = min(medians), max(medians)
    spark = "".join(SPARK[0 if high == low else round((m - low) / (high - low) * (len(SPARK) - 1))] for m in medians)
    change = f"  {latest / first - 1:+.0%} since first" if len(medians) > 1 else ""
    return Content.assemble("ref ", (f"{latest:.3g} ms", "bold"), change, "  ", (spark, "dim"))


def card_content(state: DeviceState, now: float, width: int = 56,
                 references: list[float] | None = None) -> Content:
    style = STATE_STYLE.get(state.state, "$foreground")
    lines = [Content.assemble((state.state, f"bold {style}"), "  ", (state.kind, "dim"))]
    if state.state == "booting" or state.phase or state.boot_completed is not None:
        elapsed = state.boot_elapsed_s
        if elapsed is not None and state.state == "booting":
            elapsed += max(0.0, now - state.ts)  # keeps counting between the monitor's reports
        completed = {True: ("1", "$success"), False: ("0", "$warning"), None: ("?", "dim")}[state.boot_completed]
        lines.append(Content.assemble(
            f"boot {state.phase or '-'}  {'--' if elapsed is None else f'{elapsed:.0f}s'}  sys.boot_completed=",
            completed))
    lines.append(Content.assemble("model  ", (short_name(state.model, max(8, width - 7)) if state.model else "-",
                                              "bold")))
    readings = []
    if state.temperature_c is not None:
        readings.append(f"{state.temperature_c:.1f}°C")
    if state.mem_available_kb is not None:
        readings.append(f"{state.mem_available_kb / 1024:.0f} MiB free")
    if readings:
        lines.append(Content("  ".join(readings)))
    reference = reference_line(references or [])
    if reference is not None:
        lines.append(reference)
    if state.detail:
        lines.append(Content.styled(state.detail, "dim"))
    return Content("\n").join(lines)


class DeviceCard(Static):
    def __init__(self, state: DeviceState, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state = state
        self.border_title = state.serial
        self._height = -1
        self._plain = ""

    def show(self, state: DeviceState, now: float, references: list[float] | None = None) -> None:
        self.state = state
        self.set_class(state.state == "booting", "-booting")
        self.set_class(state.state in ("lost", "offline"), "-trouble")
        content = card_content(state, now, self.content_region.width or 56, references)
        height = content.plain.count("\n")
        if height < self._height:
            # A card only grows: busy/idle every model would otherwise change its height, and a
            # layout pass re-renders the whole screen.
            content = content + "\n" * (self._height - height)
        if content.plain == self._plain:
            return  # busy/idle round trips often come back to the same card
        self._plain = content.plain
        self.update(content, layout=height > self._height)
        self._height = max(height, self._height)


class DevicesPane(VerticalScroll):
    def __init__(self, view: RunView, **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.cards: dict[str, DeviceCard] = {}

    def on_mount(self) -> None:
        self.border_title = "Devices"
        self.set_interval(1.0, self.tick)
        self.update_devices(set(self.view.devices))

    def update_devices(self, serials: set[str]) -> None:
        now = self.view.clock()
        for serial in sorted(serials):
            state = self.view.devices[serial]
            card = self.cards.get(serial)
            if card is None:
                card = self.cards[serial] = DeviceCard(state, classes="device-card")
                self.mount(card)
            card.show(state, now, list(self.view.references.get(serial, ())))
        title = f"Devices {len(self.cards)}"
        set_border_text(self, title)

    def tick(self) -> None:
        """Boot timers advance every second even when the monitor is quiet."""
        booting = {s for s, d in self.view.devices.items() if d.state == "booting"}
        if booting:
            self.update_devices(booting)
