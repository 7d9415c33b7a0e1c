"""Where a session's reference figures are kept: the run's references.json and the device history.

references.json (in the run directory) holds, per device and per session of the run (a resumed run
has several), every figure of every reference with its wall time; `compare` reads it to say how far
each device moved between two runs (core/report/compare_sessions.py). A run written before it
existed has no such file: its comparisons are marked "single session".

    {"version": 1, "devices": {"<serial>": {"<session>": {"started": epoch,
      "references": {"compute": {"median_ns": ..., "figures": 3, "values_ns": [...], ...}, "memory": {...}}}}}}
"""

from __future__ import annotations

import json
import statistics
import threading
from pathlib import Path
from typing import TypedDict

from nnlite_tui.core.json_file import write_json_atomic
from nnlite_tui.core.bench import reference_history
from nnlite_tui.core.bench.reference import ReferenceClock

RUN_FILE = "references.json"
_lock = threading.Lock()  # the device threads of one run share the run's file


class RunReference(TypedDict):
    """One reference's figures on one device over all the sessions of a run."""

    median_ns: float
    values_ns: list[float]
    sessions: list[str]  # their ids


def keep(run_dir: Path, cache_root: Path, serial: str, run_id: str, clock: ReferenceClock) -> None:
    """Write the session's figures so far to the run's file and to the device history."""
    session = clock.session()
    if not session:
        return
    with _lock:
        devices = _read(run_dir / RUN_FILE)
        sessions = devices.get(serial)
        if not isinstance(sessions, dict):
            sessions = devices[serial] = {}
        sessions[clock.session_id] = {"started": clock.wall_started, "references": session}
        write_json_atomic(run_dir / RUN_FILE, {"version": 1, "devices": devices})
    reference_history.record_session(reference_history.history_path(cache_root), serial, clock.session_id, run_id,
                                     clock.wall_started, max(f["last_at"] for f in session.values()), session)


def between_session(cache_root: Path, serial: str) -> reference_history.BetweenSession:
    """The device's between-session spread from its history (the default until there is enough)."""
    try:
        sessions = reference_history.load(reference_history.history_path(cache_root)).get(serial, [])
    except ValueError:
        sessions = []
    return reference_history.between_session(sessions)


def _read(path: Path) -> dict[str, object]:
    """The file's devices, each as the file has it (a reader checks what it uses)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable references file ({exc})") from None
    devices = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(devices, dict):
        raise ValueError(f"{path}: not a references file (no 'devices' object)")
    return devices


def run_references(run_dir: str | Path) -> dict[str, dict[str, RunReference]] | None:
    """Per device, per reference of a run: {median_ns, values_ns, sessions (their ids)} over all the run's sessions;
    None when the run has no references.json (written by an earlier release)."""
    path = Path(run_dir) / RUN_FILE
    if not path.exists():
        return None
    out: dict[str, dict[str, RunReference]] = {}
    for serial, sessions in _read(path).items():
        if not isinstance(sessions, dict):
            sessions = {}
        values: dict[str, list[float]] = {}
        for session in sessions.values():
            for name, ref in ((session or {}).get("references") or {}).items():
                values.setdefault(name, []).extend(float(v) for v in ref.get("values_ns") or [] if v and v > 0)
        out[serial] = {name: {"median_ns": statistics.median(v), "values_ns": v, "sessions": sorted(sessions)}
                       for name, v in values.items() if v}
    return out
