"""The calling thread's part of a run: turn operator commands into actions, and wait for the end.

Commands come from the Control (a console in this process) and from RUN_DIR/control.jsonl (a
console attached from another process). Skips cancel the models in flight; stop-now also kills
the children of the converter and of the devices; retries go back to the Runner.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from nnlite_tui.core.run.control import Control, ControlChannel
from nnlite_tui.core.events import Event, RunControl
from nnlite_tui.core.run.scheduling import WorkQueue

POLL_S = 0.1
JOIN_TIMEOUT_S = 30


class RunWatch:
    def __init__(self, control: Control, channel: ControlChannel, work: WorkQueue, emit: Callable[[Event], None],
                 retry: Callable[[str], None], kill_children: Callable[[], None]):
        self.control = control
        self.channel = channel
        self.work = work
        self.emit = emit
        self.retry = retry
        self.kill_children = kill_children

    def until_done(self, threads: list[threading.Thread]) -> None:
        control = self.control
        was_paused = control.paused
        while True:
            for command, model in self.channel.poll():
                control.command(command, model)
            # Every operator's command, from this process's console or the channel, goes to the event
            # log: an attached console's history, and `status`, show skips and retries too.
            for command, model in control.take_notes():
                self.emit(RunControl(action=command, model=model))
                if command in ("pause", "resume"):
                    was_paused = command == "pause"
            if control.paused != was_paused:
                was_paused = control.paused
                self.emit(RunControl(action="pause" if was_paused else "resume"))
            for name in control.take_retries():
                self.retry(name)
            self._apply_skips()
            if control.stop_now.is_set():
                self.work.cancel_all()
                self.kill_children()
            if self.work.all_done.is_set() or not any(t.is_alive() for t in threads):
                break
            if control.stopping and not self.work.in_flight():
                break
            time.sleep(POLL_S)
        control.request_stop(now=control.stop_now.is_set())
        for t in threads:
            t.join(timeout=JOIN_TIMEOUT_S)

    def _apply_skips(self) -> None:
        skip_all = self.control.take_skip_current()
        for name in self.work.in_flight():
            if skip_all or self.control.should_skip(name):
                self.control.skip(name)  # so the step boundary that sees the cancel also sees why
                self.work.cancel_event(name).set()
