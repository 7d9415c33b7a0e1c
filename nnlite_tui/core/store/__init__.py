"""Run state, the only tinydb importer: RunStore (run_store.py) over its file format (files.py)."""

from nnlite_tui.core.store.files import STATE_FILE, StoreError, load_snapshot, state_path
from nnlite_tui.core.store.run_store import DEFAULTS, RunStore

__all__ = ["DEFAULTS", "STATE_FILE", "RunStore", "StoreError", "load_snapshot", "state_path"]
