"""Names of the files in a run directory, importable by readers without what writes them (tinydb)."""

STATE_FILE = "state.json"  # core.store: the TinyDB state and its journals beside it
EVENTS_FILE = "events.jsonl"  # core.jsonl: every event of every run in this directory
CONTROL_FILE = "control.jsonl"  # core.control: operator commands to the process that owns the run
PID_FILE = "runner.pid"  # written by the process that owns a run, removed when it ends
