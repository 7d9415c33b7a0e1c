"""Resume: which models of a run are still to do, from what its store recorded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.outcomes import StageError
from nnlite_tui.core.run.unit_faults import is_environmental
from nnlite_tui.core.results import RunResults
from nnlite_tui.core.run_dir import REPORTS_DIR, safe_name
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import RunStore


def models_to_do(store: RunStore, specs: list[ModelSpec], *, retry_failed: bool = False,
                 warn: Callable[[str], None] = lambda msg: None) -> list[str]:
    """Add the run's models to the store and return, in order, those not yet terminal.

    A model that was in flight when the last run stopped is redone from the start (its
    conversion comes back from the cache). With `retry_failed`, failed models start again.
    A model that failed because of the environment (a full disk, a device gone offline: unit_faults.py)
    starts again without it. A done model whose report cannot be read is measured again (the bad file is kept aside, named).
    """
    run_dir = store.path.parent
    unreadable = _unreadable_by_unit(run_dir)
    store.add_models([{"name": s.name, "spec": s.to_dict()} for s in specs])
    queued = []
    for spec in specs:
        record = store.get(spec.name) or {}
        status = record.get("status", "queued")
        error = record.get("error") or {}
        if status == "failed" and (retry_failed or is_environmental(StageError.from_dict(error))):
            if not retry_failed:
                warn(f"{spec.name} failed for want of disk or device ({error.get('message')}); retrying it")
            store.update(spec.name, attempts=0, error=None, devices={})
            status = "queued"
        if status == "done" and _set_aside_bad_reports(unreadable.get(safe_name(spec.name), []), spec.name, warn):
            store.update(spec.name, attempts=0, error=None, devices={})
            status = "queued"
        if status in TERMINAL:
            continue
        if status != "queued":
            store.transition(spec.name, "queued")
        queued.append(spec.name)
    return queued


def _unreadable_by_unit(run_dir: Path) -> dict[str, list[tuple[Path, str]]]:
    """Each unit's unreadable report files (`<unit>__<serial>__<backend>.json`) and why, by safe name: the
    results index reads only what it has not read before, so a resume of 10,000 units stays quick."""
    out: dict[str, list[tuple[Path, str]]] = {}
    for name, problem in sorted(RunResults(run_dir).problems.items()):
        parts = name[:-len(".json")].rsplit("__", 2)
        if len(parts) == 3:
            out.setdefault(parts[0], []).append((run_dir / REPORTS_DIR / name, problem))
    return out


def _set_aside_bad_reports(bad: list[tuple[Path, str]], unit: str, warn: Callable[[str], None]) -> bool:
    """Rename the unit's unreadable reports to <name>.corrupt (kept for the user to look at); True if any."""
    for path, problem in bad:
        aside = path.with_name(path.name + ".corrupt")
        path.replace(aside)
        warn(f"{problem}; kept as {aside.name}, and {unit} is measured again")
    return bool(bad)
