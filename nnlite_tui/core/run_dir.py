"""A run directory's layout, in one place: its files' names, where a unit's report and artifact go,
and how readers find a unit's reports (by its exact name, never by a prefix).

Importable by every reader (the console, `nnlite status`, the result views) without what writes the
run (tinydb, the converter). Reports of earlier releases are read through `read_report`, which gives
them this release's key names.
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from typing import Any

from nnlite_tui.core.outcomes import conversion_record

STATE_FILE = "state.json"  # core.store: the TinyDB state and its journals beside it
EVENTS_FILE = "events.jsonl"  # core.run.jsonl: every event of every run in this directory
CONTROL_FILE = "control.jsonl"  # core.run.control: operator commands to the process that owns the run
PID_FILE = "runner.pid"  # written by the process that owns a run, removed when it ends
REPORTS_DIR = "reports"  # one JSON report per (unit, device, backend)
ARTIFACTS_DIR = "artifacts"  # the run's copies of converted models (kept by --keep-artifacts)
LEGACY_ARTIFACTS_DIR = "tflite"  # where releases before runtimes existed kept them
LOGS_DIR = "logs"  # one log per unit, and the workers' start-up log


class ReportError(ValueError):
    """A report file that cannot be read; the message names the file."""


def safe_name(text: str) -> str:
    # "@" stays: a derived precision's unit is "<model>@<precision>" (sources/units.py).
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text).strip("_") or "x"


def report_filename(unit: str, serial: str, backend: str) -> str:
    return f"{safe_name(unit)}__{safe_name(serial)}__{safe_name(backend)}.json"


def report_path(run_dir: Path, unit: str, serial: str, backend: str) -> Path:
    return Path(run_dir) / REPORTS_DIR / report_filename(unit, serial, backend)


def artifact_path(run_dir: Path, unit: str, suffix: str) -> Path:
    return Path(run_dir) / ARTIFACTS_DIR / f"{safe_name(unit)}{suffix}"


def log_path(run_dir: Path, unit: str) -> Path:
    return Path(run_dir) / LOGS_DIR / f"{unit}.log"


def read_report(path: Path) -> dict[str, Any]:
    """One report, with the key names of this release (ReportError names a file that is not one)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: unreadable report ({exc})") from exc
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not an nnlite report (a JSON {type(data).__name__}, not an object)")
    if isinstance(data.get("conversion"), dict):
        data["conversion"] = conversion_record(data["conversion"])
    return data


def load_reports(run_dir: Path) -> list[dict[str, Any]]:
    """Every report of a run, in file-name order; ReportError names the first unreadable one."""
    return [read_report(path) for path in sorted((Path(run_dir) / REPORTS_DIR).glob("*.json"))]


def reports_of(run_dir: str | Path | None, unit: str) -> list[tuple[Path, dict[str, Any]]]:
    """The reports of exactly `unit` (one per device and backend), in file-name order.

    A file's name starts with the unit's safe name and "__"; its `model_name` must be the unit itself,
    so `resnet` never finds the reports of `resnet18`, nor of a unit whose safe name collides with it.
    A report being written right now (unreadable) is left for the next look."""
    if not run_dir:
        return []
    folder = Path(run_dir) / REPORTS_DIR
    found = []
    for path in sorted(folder.glob(glob.escape(safe_name(unit) + "__") + "*.json")):
        try:
            data = read_report(path)
        except ReportError:
            continue
        if data.get("model_name", unit) == unit:
            found.append((path, data))
    return found


def reports_of_model(run_dir: str | Path | None, model: str) -> list[tuple[Path, dict[str, Any]]]:
    """The reports of every unit of `model` (its fp32 unit and each derived one, on every device):
    the units whose report names `model` as the model they measure (`model.base_name`)."""
    if not run_dir:
        return []
    found = []
    for path in sorted((Path(run_dir) / REPORTS_DIR).glob(glob.escape(safe_name(model)) + "*__*.json")):
        try:
            data = read_report(path)
        except ReportError:
            continue
        measured = data.get("model") if isinstance(data.get("model"), dict) else {}
        if (measured.get("base_name") or data.get("model_name")) == model:
            found.append((path, data))
    return found
