"""Resume: which models of a run are still to do, from what its store recorded."""

from __future__ import annotations

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.spec import ModelSpec
from nnlite_tui.core.store import RunStore


def models_to_do(store: RunStore, specs: list[ModelSpec], *, retry_failed: bool = False) -> list[str]:
    """Add the run's models to the store and return, in order, those not yet terminal.

    A model that was in flight when the last run stopped is redone from the start (its
    conversion comes back from the cache). With `retry_failed`, failed models start again.
    """
    store.add_models([{"name": s.name, "spec": s.to_dict()} for s in specs])
    queued = []
    for spec in specs:
        status = (store.get(spec.name) or {}).get("status", "queued")
        if status == "failed" and retry_failed:
            store.update(spec.name, attempts=0, error=None, devices={})
            status = "queued"
        if status in TERMINAL:
            continue
        if status != "queued":
            store.transition(spec.name, "queued")
        queued.append(spec.name)
    return queued
