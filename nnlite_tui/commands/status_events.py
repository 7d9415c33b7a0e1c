"""What `nnlite status` needs of RUN_DIR/events.jsonl, read from its end: a run of days leaves
a log of hundreds of megabytes, and status must answer in well under a second.

Lines are parsed only when they are wanted: the last few notable events, and the latest
pause/resume of the current session (found by a byte search, not by parsing the log).
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path

from nnlite_tui.core.events import Event, RunControl, event_from_dict
from nnlite_tui.core.run_files import EVENTS_FILE

CHUNK = 256 << 10
LOG_MARK = b'"type": "ModelLog"'  # JsonlReporter writes "type" first, as json.dumps(to_dict())


def _parse(line: bytes) -> Event | None:
    try:
        return event_from_dict(json.loads(line))
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError, TypeError):
        return None  # a line cut short by kill -9, or from a newer writer: it carries nothing we need


def last_events(run_dir: Path, count: int) -> list[Event]:
    """The last `count` events other than log lines, oldest first."""
    path = Path(run_dir) / EVENTS_FILE
    if count <= 0 or not path.exists():
        return []
    found: list[Event] = []
    with open(path, "rb") as f:
        end = f.seek(0, 2)
        carry = b""
        while end > 0 and len(found) < count:
            start = max(0, end - CHUNK)
            f.seek(start)
            data = f.read(end - start) + carry
            lines = data.split(b"\n")
            carry = lines.pop(0) if start > 0 else b""  # may be cut: joined to the next chunk read
            for line in reversed(lines):
                if line.strip() and LOG_MARK not in line[:40]:
                    event = _parse(line)
                    if event is not None:
                        found.append(event)
                        if len(found) == count:
                            break
            end = start
    return found[::-1]


def paused(run_dir: Path) -> bool:
    """Was the latest session paused (its last pause/resume a pause, after its RunStarted)?"""
    path = Path(run_dir) / EVENTS_FILE
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        started = data.rfind(b'"type": "RunStarted"')
        at = len(data)
        while True:
            at = data.rfind(b'"type": "RunControl"', 0, at)
            if at < 0 or at < started:
                return False
            begin = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at)
            event = _parse(data[begin:stop if stop >= 0 else len(data)])
            if isinstance(event, RunControl) and event.action in ("pause", "resume"):
                return event.action == "pause"
