"""A run directory's layout, in one place: its files' names, where a unit's report and artifact go.

Importable by every reader (the console, `nnlite status`, the result views) without what writes the
run (tinydb, the converter). Reports are read, written and found through core.results.RunResults,
which keeps the run's report index beside these files.
"""

from __future__ import annotations

import re
from pathlib import Path

STATE_FILE = "state.json"  # core.store: the TinyDB state and its journals beside it
EVENTS_FILE = "events.jsonl"  # core.run.jsonl: every event of every run in this directory
CONTROL_FILE = "control.jsonl"  # core.run.control: operator commands to the process that owns the run
PID_FILE = "runner.pid"  # written by the process that owns a run, removed when it ends
REPORTS_DIR = "reports"  # one JSON report per (unit, device, backend)
REPORT_INDEX_FILE = "report_index.jsonl"  # core.results.index: one summary line per report written
REPORT_PAGES_FILE = "report_pages.jsonl"  # core.report.html_parts: each report's share of the HTML page
ARTIFACTS_DIR = "artifacts"  # the run's copies of converted models (kept by --keep-artifacts)
LEGACY_ARTIFACTS_DIR = "tflite"  # where releases before runtimes existed kept them (compare --remeasure reads it)
LOGS_DIR = "logs"  # one log per unit, and the workers' start-up log


def safe_name(text: str) -> str:
    # "@" stays: a derived precision's unit is "<model>@<precision>" (sources/units.py).
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text).strip("_") or "x"


def report_filename(unit: str, serial: str, backend: str) -> str:
    return f"{safe_name(unit)}__{safe_name(serial)}__{safe_name(backend)}.json"


def artifact_path(run_dir: Path, unit: str, suffix: str) -> Path:
    return Path(run_dir) / ARTIFACTS_DIR / f"{safe_name(unit)}{suffix}"


def log_path(run_dir: Path, unit: str) -> Path:
    return Path(run_dir) / LOGS_DIR / f"{unit}.log"
