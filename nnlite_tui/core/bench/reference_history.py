"""A device's reference figures across runs: one entry per session, kept beside the conversion cache.

Each session (one `nnlite run` process on one device) adds or updates its entry with the median of
its reference figures so far (reference.py: "compute" and "memory"); the file outlives run
directories, so the spread of those session medians says how far a whole session of this device
moves, which no single session can see (between_session below). The file is JSON, small (the last
KEEP sessions per device), rewritten atomically under a lock file so that concurrent runs on one
machine do not lose each other's entries.

    {"version": 1, "devices": {"<serial>": [{"session": "...", "run_id": "...", "started": epoch,
      "updated": epoch, "references": {"compute": {"median_ns": ..., "figures": 3}, "memory": {...}}}]}}
"""

from __future__ import annotations

import fcntl
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from nnlite_tui.core.json_file import write_json_atomic

if TYPE_CHECKING:
    from nnlite_tui.core.bench.reference import SessionFigures

HISTORY_FILE = "device-history.json"
VERSION = 1
KEEP = 60  # sessions per device
MIN_SESSIONS = 3  # fewer sessions estimate no spread: the default holds until then
# Until a device has MIN_SESSIONS sessions: the spread of whole-session medians measured on a shared
# 2-core host (four identical default runs of 24 LEMUR models, one session ~20% faster than the other
# three on nearly every model above a few ms): the standard deviation of log session medians, 0.11.
DEFAULT_SD_LOG = 0.11
DEFAULT_SOURCE = ("default 0.11 (sd of log session medians): four identical runs of 24 LEMUR models on a shared "
                  "2-core host, one session 20% faster than the others; see docs/explanation/"
                  "measurement-across-sessions.md")


class KeptFigures(TypedDict):
    median_ns: float
    figures: int


class SessionEntry(TypedDict):
    """One session's entry, as record_session writes it."""

    session: str
    run_id: str
    started: float
    updated: float
    references: dict[str, KeptFigures]


class BetweenSessionBlock(TypedDict):
    sd_log: float
    sessions: int
    source: str


def history_path(cache_root: str | Path) -> Path:
    """Beside the conversion cache (its sibling: the cache's size cap never evicts it)."""
    return Path(cache_root).resolve().parent / HISTORY_FILE


def load(path: Path) -> dict[str, list[Mapping[str, object]]]:
    """The devices' sessions; {} for no file. A file that is not this format is a clear error. The
    entries are as the file has them (another release, or a hand, may have written it): readers check
    what they use."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable device history ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("devices"), dict):
        raise ValueError(f"{path}: not a device history (no 'devices' object)")
    return {serial: [s for s in sessions if isinstance(s, dict)] for serial, sessions in data["devices"].items()
            if isinstance(sessions, list)}


def record_session(path: Path, serial: str, session: str, run_id: str, started: float, updated: float,
                   references: Mapping[str, SessionFigures]) -> None:
    """Add or replace `session`'s entry for `serial` (its references' medians and figure counts)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    entry: SessionEntry = {"session": session, "run_id": run_id, "started": started, "updated": updated,
             "references": {name: {"median_ns": ref["median_ns"], "figures": ref["figures"]}
                            for name, ref in references.items()}}
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            devices = load(path)
        except ValueError:
            devices = {}  # an unreadable history is started again rather than stopping runs
        sessions = [s for s in devices.get(serial, []) if s.get("session") != session] + [entry]
        sessions.sort(key=_started)
        devices[serial] = sessions[-KEEP:]
        write_json_atomic(path, {"version": VERSION, "devices": devices})


def _started(entry: Mapping[str, object]) -> float:
    started = entry.get("started")
    return started if isinstance(started, (int, float)) else 0


def _references(entry: Mapping[str, object]) -> Mapping[str, object]:
    refs = entry.get("references")
    return refs if isinstance(refs, dict) else {}


@dataclass(frozen=True)
class BetweenSession:
    """How far a whole session of a device moves: the sd of the log of its session medians."""

    sd_log: float
    sessions: int  # sessions the estimate is from (0: the default)
    source: str

    def to_dict(self) -> BetweenSessionBlock:
        return {"sd_log": self.sd_log, "sessions": self.sessions, "source": self.source}


def sd_log(values: list[float]) -> float | None:
    if len(values) < 2 or min(values) <= 0:
        return None
    logs = [math.log(v) for v in values]
    mean = math.fsum(logs) / len(logs)
    return math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def between_session(sessions: Sequence[Mapping[str, object]]) -> BetweenSession:
    """The device's between-session spread: the largest over its references of the sd of log session
    medians, from MIN_SESSIONS sessions on; before that the stated default."""
    best: tuple[float, int, str] | None = None
    names = sorted({name for s in sessions for name in _references(s)})
    for name in names:
        values = [float(r["median_ns"]) for s in sessions
                  if isinstance(r := _references(s).get(name), dict) and r.get("median_ns")]
        sd = sd_log(values) if len(values) >= MIN_SESSIONS else None
        if sd is not None and (best is None or sd > best[0]):
            best = (sd, len(values), name)
    if best is None:
        return BetweenSession(DEFAULT_SD_LOG, 0, DEFAULT_SOURCE)
    sd, n, name = best
    return BetweenSession(sd, n, f"device history: sd of log session medians of the {name} reference over "
                                 f"{n} sessions")
