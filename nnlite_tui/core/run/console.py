"""ConsoleReporter: the headless front end's view of a run (plain lines, or a progress line on a TTY)."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import TextIO

from nnlite_tui.core.text_safety import printable
from nnlite_tui.core.events import (TERMINAL, DeviceState, Event, ModelStatus, Recovery, RunControl, RunFinished,
                                    RunStarted)
from nnlite_tui.core.names import short_name
from nnlite_tui.core.run.eta import EtaEstimator

MIN_NAME = 16  # the unit in flight, at the end of the progress line: cut to the terminal's width, not below this


def fmt_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "--:--"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class ConsoleReporter:
    def __init__(self, stream: TextIO | None = None, progress: bool | None = None, verbose: bool = False):
        self.stream = stream or sys.stdout
        self.progress = self.stream.isatty() if progress is None else progress
        self.verbose = verbose
        self._lock = threading.Lock()
        self.total = 0
        self.status: dict[str, str] = {}
        self.started = time.monotonic()
        self.estimator = EtaEstimator()
        self.finished_here = 0
        self.current = ("", "")  # what is in flight, and the unit (or device) it is about
        self._line_shown = False

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.status.values():
            out[s] = out.get(s, 0) + 1
        return out

    def _print(self, text: str) -> None:
        if self._line_shown:
            self.stream.write("\r\x1b[2K")
            self._line_shown = False
        self.stream.write(printable(text) + "\n")
        self.stream.flush()

    def _progress_line(self) -> None:
        if not self.progress or not self.total:
            return
        c = self.counts()
        terminal = sum(c.get(s, 0) for s in TERMINAL)
        elapsed = time.monotonic() - self.started
        rate = self.finished_here / elapsed if elapsed > 0 and self.finished_here else 0.0
        priced = self.estimator.estimate(time.time())  # by the cost of what remains (run/eta.py)
        eta = priced.seconds if priced is not None else (self.total - terminal) / rate if rate else None
        width = 24
        filled = int(width * terminal / self.total)
        bar = "#" * filled + "-" * (width - filled)
        line = (f"[{bar}] {terminal}/{self.total}  done {c.get('done', 0)}  failed {c.get('failed', 0)}  "
                f"skipped {c.get('skipped', 0)}  ETA {fmt_duration(eta)}  ")
        # One line that \r can redraw: a line wider than the terminal wraps, and the redraw then
        # leaves its first part behind.
        what, name = self.current
        room = shutil.get_terminal_size((120, 24)).columns - 1 - len(line) - len(what) - 1
        if what:
            line += f"{what} {short_name(printable(name), max(MIN_NAME, room))}"
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()
        self._line_shown = True

    def emit(self, event: Event) -> None:
        with self._lock:
            self.estimator.fold(event)
            self._handle(event)

    def _handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.total = len(event.models)
            self.status = {m: "queued" for m in event.models}
            self._print(f"{'Resuming' if event.resumed else 'Starting'} run in {event.run_dir}: "
                        f"{self.total} model(s) on {', '.join(event.devices)}")
        elif isinstance(event, ModelStatus):
            before = self.status.get(event.model)
            self.status[event.model] = event.status
            if event.status in ("converting", "benchmarking"):
                self.current = (event.status, event.model)
            if event.status in TERMINAL and before not in TERMINAL and before is not None:
                self.finished_here += 1
                c = self.counts()
                n = sum(c.get(s, 0) for s in TERMINAL)
                if event.status == "done":
                    extra = f"median {event.median_ms:.3f} ms" if event.median_ms is not None else ""
                else:
                    extra = event.error or ""
                self._print(f"[{n}/{self.total}] {event.status:<7} {event.model}  {extra}".rstrip())
        elif isinstance(event, Recovery):
            if event.action == "cool-down" and event.countdown_s is not None and self.progress:
                self.current = (f"cool-down {event.countdown_s:.0f}s", event.target)
            else:
                self._print(f"[{event.severity}] {event.action} {event.target}: {event.detail}")
        elif isinstance(event, RunControl):
            self._print(f"[control] {event.action}{' ' + event.model if event.model else ''}")
        elif isinstance(event, DeviceState) and event.state in ("booting", "lost", "offline"):
            phase = f" ({event.phase}, {event.boot_elapsed_s:.0f}s)" if event.phase and event.boot_elapsed_s else ""
            self._print(f"[device] {event.serial}: {event.state}{phase} {event.detail}".rstrip())
        elif isinstance(event, RunFinished):
            self._print(f"Run {'stopped' if event.stopped else 'finished'} in {fmt_duration(event.seconds)}: "
                        + ", ".join(f"{k} {v}" for k, v in event.counts.items() if v))
            return
        self._progress_line()
