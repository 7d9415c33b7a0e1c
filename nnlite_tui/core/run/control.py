"""How an operator steers a run (pause, resume, skip, retry, stop): one protocol, two ends.

`Steering` is what a console calls. `Control` implements it inside the runner's process: the
runner checks it at step boundaries, and front ends never touch the runner's threads.
`RemoteControl` implements it for a run owned by another process: each call becomes a command
line in RUN_DIR/control.jsonl (ControlChannel), which the owning runner polls and applies to
its Control.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Protocol

from nnlite_tui.core.run_dir import CONTROL_FILE, PID_FILE

COMMANDS = ("pause", "resume", "skip", "retry", "stop_after_current", "stop_now")


def runner_pid(run_dir: str | os.PathLike) -> int | None:
    """The pid in RUN_DIR/runner.pid if that process is alive (and not this one), else None."""
    path = Path(run_dir) / PID_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    try:
        pid = int(json.loads(text)["pid"]) if text.startswith("{") else int(text.split()[0])
    except (ValueError, KeyError, IndexError, json.JSONDecodeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by another user
    return pid if pid != os.getpid() else None


class Steering(Protocol):
    """What an operator can ask of a run, wherever it runs."""

    @property
    def paused(self) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def skip(self, model: str | None = None) -> None:
        """Skip `model`, or the model(s) in flight when None."""

    def retry(self, model: str) -> None: ...

    def request_stop(self, now: bool = False) -> None: ...

    def command(self, command: str, model: str | None = None) -> None:
        """An operator's command (one of COMMANDS): applied, and noted for the run's event log."""


class Control:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = threading.Event()
        self._running.set()
        self.stop_after_current = threading.Event()
        self.stop_now = threading.Event()
        self._skip: set[str] = set()
        self._skip_current = False
        self._retry: list[str] = []
        self._notes: list[tuple[str, str | None]] = []  # operators' commands not yet in the event log

    # --- operator side ---
    def command(self, command: str, model: str | None = None) -> None:
        """An operator's command: applied now, and noted so that the runner writes it to the event
        log (take_notes), whichever console or channel it came from."""
        self.apply(command, model)
        with self._lock:
            self._notes.append((command, model))

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def skip(self, model: str | None = None) -> None:
        """Skip `model`, or the model(s) in flight when None."""
        with self._lock:
            if model is None:
                self._skip_current = True
            else:
                self._skip.add(model)

    def retry(self, model: str) -> None:
        with self._lock:
            self._skip.discard(model)
            self._retry.append(model)

    def request_stop(self, now: bool = False) -> None:
        self.stop_after_current.set()
        if now:
            self.stop_now.set()
        self._running.set()  # a paused run must wake up to stop

    def apply(self, command: str, model: str | None = None) -> None:
        if command == "pause":
            self.pause()
        elif command == "resume":
            self.resume()
        elif command == "skip":
            self.skip(model)
        elif command == "retry":
            if not model:
                raise ValueError("retry needs a model name")
            self.retry(model)
        elif command == "stop_after_current":
            self.request_stop(now=False)
        elif command == "stop_now":
            self.request_stop(now=True)
        else:
            raise ValueError(f"unknown control command {command!r}; expected one of {COMMANDS}")

    # --- pipeline side ---
    def wait_while_paused(self, timeout: float | None = None) -> bool:
        """Block while paused; True when running (or stopping)."""
        return self._running.wait(timeout)

    def should_skip(self, model: str) -> bool:
        with self._lock:
            return model in self._skip

    def take_skip_current(self) -> bool:
        """True once per request to skip whatever is in flight."""
        with self._lock:
            asked, self._skip_current = self._skip_current, False
            return asked

    def take_notes(self) -> list[tuple[str, str | None]]:
        """The operators' commands since the last call, in order (the runner emits them as RunControl)."""
        with self._lock:
            out, self._notes = self._notes, []
            return out

    def take_retries(self) -> list[str]:
        with self._lock:
            out, self._retry = self._retry, []
            return out

    @property
    def stopping(self) -> bool:
        return self.stop_after_current.is_set()


class ControlChannel:
    """Commands to a run owned by another process: appended JSON lines in RUN_DIR/control.jsonl."""

    def __init__(self, run_dir: str | os.PathLike):
        self.path = Path(run_dir) / CONTROL_FILE
        self._offset = 0

    def send(self, command: str, model: str | None = None) -> None:
        if command not in COMMANDS:
            raise ValueError(f"unknown control command {command!r}; expected one of {COMMANDS}")
        line = json.dumps({"command": command, "model": model, "ts": time.time()}) + "\n"
        # One write() of a short line in append mode lands whole, so a reader never sees half a command.
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def skip_existing(self) -> None:
        """Ignore commands written before this runner started (they were meant for an earlier one)."""
        self._offset = self.path.stat().st_size if self.path.exists() else 0

    def poll(self) -> list[tuple[str, str | None]]:
        """Commands appended since the last poll; a partial last line is left for the next poll."""
        if not self.path.exists():
            return []
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self._offset += end
        commands = []
        for raw in data[:end].splitlines():
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a line mangled by a crashed writer must not stop the run; the rest still apply
            if item.get("command") in COMMANDS:
                commands.append((item["command"], item.get("model")))
        return commands


class RemoteControl:
    """Steering for a run owned by another process, through its control channel."""

    def __init__(self, run_dir: str | os.PathLike):
        self.channel = ControlChannel(run_dir)
        self._paused = False

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        self.channel.send("pause")
        self._paused = True

    def resume(self) -> None:
        self.channel.send("resume")
        self._paused = False

    def skip(self, model: str | None = None) -> None:
        self.channel.send("skip", model)

    def retry(self, model: str) -> None:
        self.channel.send("retry", model)

    def request_stop(self, now: bool = False) -> None:
        self.channel.send("stop_now" if now else "stop_after_current")

    def command(self, command: str, model: str | None = None) -> None:
        self.channel.send(command, model)  # the owning runner applies it, and writes it to its event log
        if command in ("pause", "resume"):
            self._paused = command == "pause"
