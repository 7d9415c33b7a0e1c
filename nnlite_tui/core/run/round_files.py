"""A unit's finished rounds on one device, kept on disk until its report is written.

Each round's whole result (the protocol's block with its raw samples, the device around it) is one
file, written atomically: a run killed between two rounds resumes with the rounds it finished and
times only the rest. The folder goes once the unit's report holds what its rounds measured. The
store keeps only the count and medians (a 10,000-model run's raw samples would bloat its TinyDB file).

    RUN_DIR/rounds/<unit>__<serial>__<backend>/<k>.json
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from nnlite_tui.core.outcomes import BenchResult
from nnlite_tui.core.json_file import write_json_atomic
from nnlite_tui.core.run_dir import report_filename

ROUNDS_DIR = "rounds"


def folder(run_dir: Path, unit: str, serial: str, backend: str) -> Path:
    return Path(run_dir) / ROUNDS_DIR / report_filename(unit, serial, backend)[: -len(".json")]


def save(run_dir: Path, unit: str, serial: str, backend: str, index: int, result: BenchResult,
         started_at: float) -> None:
    write_json_atomic(folder(run_dir, unit, serial, backend) / f"{index}.json",
                      {"index": index, "started_at": started_at, **result.to_dict()})


def load(run_dir: Path, unit: str, serial: str, backend: str) -> list[tuple[BenchResult, float]]:
    """The unit's finished rounds on the device, in order: (result, started_at). A round file that
    cannot be read is a round not finished (written atomically, it is whole or absent)."""
    out: list[tuple[BenchResult, float]] = []
    base = folder(run_dir, unit, serial, backend)
    index = 1
    while True:
        path = base / f"{index}.json"
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except (OSError, ValueError):
            return out
        out.append((BenchResult.from_dict(data), float(data.get("started_at") or 0.0)))
        index += 1


def remove(run_dir: Path, unit: str, serial: str, backend: str) -> None:
    shutil.rmtree(folder(run_dir, unit, serial, backend), ignore_errors=True)
