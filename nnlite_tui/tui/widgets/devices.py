"""Devices pane: one card per device or emulator, with live boot monitoring; the host card also shows
what disturbs its measurements (conversions beside a benchmark, other processes' CPU, temperature)."""

from __future__ import annotations

from typing import Callable

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from nnlite_tui.core.devices.host_load import HostLoad, HostLoadSampler
from nnlite_tui.core.events import DeviceState
from nnlite_tui.core.names import short_name
from nnlite_tui.tui.state import RunView
from nnlite_tui.tui.widgets.borders import set_border_text

STATE_STYLE = {"device": "$success", "idle": "$success", "busy": "$primary", "booting": "$accent",
               "offline": "$warning", "absent": "$text-muted", "lost": "$error"}


SPARK = "▁▂▃▄▅▆▇█"
HOST_SAMPLE_S = 3.0
OTHERS_WARN = 20.0  # other processes' CPU (percent of all cores) that is worth a warning colour


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


def host_lines(load: HostLoad | None, converting: int, benchmarking: bool, held: bool) -> list[Content]:
    """What disturbs a host measurement: conversions beside a benchmark, other processes' CPU, load."""
    lines = []
    if converting:
        if benchmarking and held:
            lines.append(Content.styled(f"{converting} conversion(s) held while it times", "dim"))
        elif benchmarking:
            lines.append(Content.styled(f"{converting} conversion(s) beside the benchmark", "bold $warning"))
        else:
            lines.append(Content(f"converting {converting} unit(s)"))
    if load is not None:
        parts: list = [f"load {load.load_1m:.1f}/{load.cores} cores"]
        if load.others_percent is not None:
            style = "bold $warning" if load.others_percent >= OTHERS_WARN else ""
            parts += ["  other processes ", (f"{load.others_percent:.0f}% CPU", style)]
        lines.append(Content.assemble(*parts))
    return lines


def card_content(state: DeviceState, now: float, width: int = 56,
                 references: list[float] | None = None, host: list[Content] | None = None,
                 temperature_c: float | None = None) -> Content:
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
    lines += host or []
    readings = []
    temperature = temperature_c if temperature_c is not None else state.temperature_c
    if temperature is not None:
        readings.append(f"{temperature:.1f}°C")
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

    def show(self, state: DeviceState, now: float, references: list[float] | None = None,
             host: list[Content] | None = None, temperature_c: float | None = None) -> None:
        self.state = state
        self.set_class(state.state == "booting", "-booting")
        self.set_class(state.state in ("lost", "offline"), "-trouble")
        content = card_content(state, now, self.content_region.width or 56, references, host, temperature_c)
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
    """`run_pid` gives the runner's pid (this process for a local run) for the host's load figures;
    None: no sampling (tests, whose screens must not depend on the machine)."""

    def __init__(self, view: RunView, run_pid: Callable[[], int | None] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.view = view
        self.cards: dict[str, DeviceCard] = {}
        self.run_pid = run_pid
        self.sampler: HostLoadSampler | None = None
        self.load: HostLoad | None = None

    def on_mount(self) -> None:
        self.border_title = "Devices"
        self.set_interval(1.0, self.tick)
        if self.run_pid is not None:
            self.set_interval(HOST_SAMPLE_S, self.sample_host)
        self.update_devices(set(self.view.devices))

    def sample_host(self) -> None:
        hosts = [s for s, d in self.view.devices.items() if d.kind == "host"]
        if not hosts:
            return
        pid = self.run_pid()
        if self.sampler is None or self.sampler.run_pid != pid:
            self.sampler = HostLoadSampler(pid)
        self.load = self.sampler.sample()
        self.update_devices(set(hosts))

    def host_lines(self, state: DeviceState) -> list[Content]:
        converting = sum(1 for name in self.view.flying if self.view.models[name].status == "converting")
        return host_lines(self.load, converting, state.state == "busy", self.view.holds_conversions)

    def update_devices(self, serials: set[str]) -> None:
        now = self.view.clock()
        for serial in sorted(serials):
            state = self.view.devices[serial]
            card = self.cards.get(serial)
            if card is None:
                card = self.cards[serial] = DeviceCard(state, classes="device-card")
                self.mount(card)
            host = self.host_lines(state) if state.kind == "host" else None
            temperature = self.load.temperature_c if host is not None and self.load is not None else None
            card.show(state, now, list(self.view.references.get(serial, ())), host, temperature)
        title = f"Devices {len(self.cards)}"
        set_border_text(self, title)

    def tick(self) -> None:
        """Boot timers advance every second even when the monitor is quiet."""
        booting = {s for s, d in self.view.devices.items() if d.state == "booting"}
        if booting:
            self.update_devices(booting)
