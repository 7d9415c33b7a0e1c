"""Devices pane: one card per device or emulator, with live boot monitoring."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from nnlite_tui.core.events import DeviceState
from nnlite_tui.tui.state import RunView
from nnlite_tui.tui.widgets.borders import set_border_text

STATE_STYLE = {"device": "$success", "idle": "$success", "busy": "$primary", "booting": "$accent",
               "offline": "$warning", "absent": "$text-muted", "lost": "$error"}


def card_content(state: DeviceState, now: float) -> Content:
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
    lines.append(Content.assemble("model  ", (state.model or "-", "bold")))
    readings = []
    if state.temperature_c is not None:
        readings.append(f"{state.temperature_c:.1f}°C")
    if state.mem_available_kb is not None:
        readings.append(f"{state.mem_available_kb / 1024:.0f} MiB free")
    if readings:
        lines.append(Content("  ".join(readings)))
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

    def show(self, state: DeviceState, now: float) -> None:
        self.state = state
        self.set_class(state.state == "booting", "-booting")
        self.set_class(state.state in ("lost", "offline"), "-trouble")
        content = card_content(state, now)
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
            card.show(state, now)
        title = f"Devices {len(self.cards)}"
        set_border_text(self, title)

    def tick(self) -> None:
        """Boot timers advance every second even when the monitor is quiet."""
        booting = {s for s, d in self.view.devices.items() if d.state == "booting"}
        if booting:
            self.update_devices(booting)
