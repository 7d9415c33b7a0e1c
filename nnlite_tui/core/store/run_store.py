"""Run state: RUN_DIR/state.json (a TinyDB file) plus an append-only journal; its file format is files.py.

state.json holds three TinyDB tables: meta (schema version, last journal seq folded in), config
(run settings and tool versions) and models (one record per model, in insertion order). Changes
between rewrites go to RUN_DIR/state.json.journal.<first seq> as one JSON line per record.

Why a journal: TinyDB rewrites a whole table on every write (Table._update_table), so an atomic
rewrite of state.json costs in proportion to the records, while appending one line and fsyncing it
costs the same at any size (bench/store_scale.py times a transition at 100 and 10,000 records
and fails past a 3x ratio). So records live in memory,
non-terminal changes are appended at most `flush_interval` later, terminal ones are appended and
fsynced before transition() returns, and a background compaction folds the journal into
state.json (temp file, fsync, rename) once the journal is as long as the table. A kill -9 at any
instant leaves state.json whole and every acknowledged terminal transition in a journal.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypedDict

from nnlite_tui import __version__
from nnlite_tui.core.disk import fsync_path
from nnlite_tui.core.events import STATUSES, TERMINAL
from nnlite_tui.errors import environment_cause
from nnlite_tui.core.store.files import (
    SCHEMA_VERSION,
    AtomicJSONStorage,
    JournalGap,
    RunLocked,
    StoreError,
    fdatasync,
    journal_path,
    journals,
    load_snapshot,
    load_state,
    replay,
    state_path,
    write_all,
)

try:
    import fcntl
except ImportError:  # Windows has no flock; one writer per run dir is then the caller's promise
    fcntl = None  # type: ignore[assignment]


class ModelRecord(TypedDict, total=False):
    """One model's record in state.json and its journal, as the run writes it. The store keeps any
    other field it is given; nested blocks are the run's JSON, which the store only saves."""

    name: str
    spec: Mapping[str, object]  # ModelSpec.to_dict()
    status: str  # one of STATUSES
    stage: str | None
    attempts: int
    timings: Mapping[str, object]  # seconds per stage
    artifact: str | None
    report: str | None
    error: Mapping[str, object] | None  # StageError.to_dict()
    device: str | None
    median_ms: float | None
    updated_at: float
    conversion: Mapping[str, object]
    devices: Mapping[str, object]  # per device (or the shared target): its benchmark's outcome


DEFAULTS: ModelRecord = {"spec": {}, "status": "queued", "stage": None, "attempts": 0, "timings": {},
                         "artifact": None, "report": None, "error": None, "device": None, "median_ms": None}


class RunStore:
    """The state of one run: thread-safe (one lock), one writer per run directory, kill -9 safe."""

    SCHEMA_VERSION = SCHEMA_VERSION  # files.py reads this version and refuses others
    COMPACT_MIN = 2000  # journal entries before a background compaction; fewer are cheaper to replay
    _lock_fd: int | None  # the run directory's lock (None: no flock here, or released)
    _thread: threading.Thread | None  # the background flusher (None: read-only)

    def __init__(self, path: str | Path, *, flush_interval: float = 1.0):
        """Open or create the run state; flush_interval <= 0 writes every change through at once."""
        self._setup(path, flush_interval)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd = self._take_lock()
        try:
            self._open()
        except BaseException:
            self._release()
            raise
        self._thread = threading.Thread(target=self._flusher, name=f"RunStore {self.path}", daemon=True)
        self._thread.start()

    def _setup(self, path: str | Path, flush_interval: float) -> None:
        self.path = state_path(path)
        self.flush_interval = flush_interval
        self.compactions, self.last_compact_s = 0, 0.0
        self._lock = threading.RLock()
        self._compact_lock = threading.Lock()  # taken before self._lock, never after it
        self._storage = AtomicJSONStorage(self.path)
        self._json: dict[str, str] = {}  # name -> the record as JSON text, its only copy
        self._status: dict[str, str] = {}
        self._counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
        self._dirty: dict[str, None] = {}  # names changed since the last journal append
        self._config = "null"
        self._seq = self._since_compact = self._journal_start = 0
        self._journal_fd: int | None = None
        self._lock_fd = None
        self._unsynced = self._closed = self._read_only = False
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = None

    def _open(self) -> None:
        if self.path.exists():
            seq, config, records = load_state(self.path)
            try:
                seq = replay(self.path, seq, records)
            except JournalGap as exc:
                raise StoreError(self.path, f"journal entries are missing ({exc}); files left untouched") from exc
        elif journals(self.path):
            raise StoreError(self.path, "is missing but its journal files exist; not starting a fresh run over them")
        else:
            seq, config, records = 0, None, {}
            self._write_state(0, "null", [])  # state.json before any journal, which alone would read as lost state
        self._config, self._seq = json.dumps(config), seq
        for name, record in records.items():
            self._set(name, record)
        self._dirty.clear()
        self._compact()

    @classmethod
    def exists(cls, run_dir: str | Path) -> bool:
        return state_path(run_dir).exists()

    @classmethod
    def read_only(cls, path: str | Path) -> RunStore:
        """The latest durable state of a run another process may be writing; writes raise StoreError."""
        store = cls.__new__(cls)
        store._setup(path, 0.0)
        config, records = load_snapshot(store.path)
        store._config, store._read_only = json.dumps(config), True
        for record in records:
            store._set(record["name"], record)
        store._dirty.clear()
        return store

    # -- reads -------------------------------------------------------------------------------------
    def get_config(self) -> dict | None:
        return json.loads(self._config)

    def get(self, name: str) -> dict | None:
        text = self._json.get(name)
        return None if text is None else json.loads(text)

    def all(self) -> list[dict]:
        with self._lock:
            texts = list(self._json.values())
        return [json.loads(text) for text in texts]

    def names(self, status: str | None = None) -> list[str]:
        with self._lock:
            return list(self._json) if status is None else [n for n, s in self._status.items() if s == status]

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    # -- writes ------------------------------------------------------------------------------------
    def set_config(self, config: dict) -> None:
        """Store the run settings and tool versions; durable when this returns."""
        text = json.dumps(config)
        with self._lock:
            self._writable()
            self._config = text
        self._compact()

    def add_models(self, records: list[ModelRecord]) -> int:
        """Queue the models whose names are new; durable when this returns. -> how many were added."""
        now = time.time()
        with self._lock:
            self._writable()
            new: dict[str, ModelRecord] = {}
            for record in records:
                name = record["name"]
                if not isinstance(name, str):
                    raise TypeError(f"model name must be a str, not {name!r}")
                if name not in self._json and name not in new:
                    new[name] = {"name": name, **DEFAULTS, "updated_at": now, **record}
                    _check_status(new[name].get("status"))
            json.dumps(list(new.values()))  # a record that cannot be saved must fail before any is added
            for name, record in new.items():
                self._set(name, record)
            if new:
                self._append(sync=True)
        return len(new)

    def update(self, name: str, **fields: Any) -> dict:
        """Change fields of a model; written behind (within flush_interval). -> the new record."""
        if "status" in fields:
            return self.transition(name, fields.pop("status"), **fields)
        with self._lock:
            record = self._change(name, fields)
            if self.flush_interval <= 0:  # write-through: other processes see every change at once
                self._append(sync=False)
            return record

    def transition(self, name: str, status: str, **fields: Any) -> dict:
        """Move a model to `status`; a terminal status is on disk (fsynced) when this returns."""
        _check_status(status)
        with self._lock:
            record = self._change(name, {**fields, "status": status})
            if status in TERMINAL or self.flush_interval <= 0:
                self._append(sync=status in TERMINAL)
        return record

    def flush(self) -> None:
        """Make every change so far durable."""
        with self._lock:
            self._writable()
            self._append(sync=True)

    def compact(self) -> None:
        """Fold the journal into state.json now (also done in the background, at open and at close)."""
        self._writable()
        self._compact()

    def close(self) -> None:
        with self._lock:
            if self._closed or self._read_only:
                self._closed = True
                return
            self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            if self._error is None:
                with self._lock:
                    self._append(sync=True)
                self._compact()
        finally:
            self._release()
        if self._error is not None:
            raise StoreError(self.path, f"writing the run state failed: {self._error}") from self._error
        journal_path(self.path, self._journal_start).unlink()  # empty after the compaction above

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------------------
    def _writable(self) -> None:
        if self._read_only:
            raise StoreError(self.path, "opened read-only")
        if self._closed:
            raise StoreError(self.path, "the store is closed")
        if self._error is not None:
            raise StoreError(self.path, f"writing the run state failed: {self._error}") from self._error

    def _change(self, name: str, fields: Mapping[str, object]) -> dict:
        self._writable()
        text = self._json.get(name)
        if text is None:
            raise KeyError(f"no model {name!r} in {self.path}")
        record = json.loads(text)
        record["updated_at"] = time.time()
        record.update(fields)
        self._set(name, record)
        return record

    def _set(self, name: str, record: Mapping[str, object]) -> None:
        text = json.dumps(record)  # raises before anything changed if a field cannot be saved
        old = self._status.get(name)
        if old is not None:
            self._counts[old] -= 1
        status = record.get("status", "queued")
        status = status if isinstance(status, str) else str(status)  # checked on the way in (_check_status)
        self._counts[status] = self._counts.get(status, 0) + 1
        self._status[name], self._json[name] = status, text
        self._dirty[name] = None

    def _append(self, sync: bool) -> None:
        """Append the dirty records to the journal (caller holds self._lock); fdatasync if `sync`."""
        try:
            if self._dirty:
                numbered = enumerate(self._dirty, self._seq + 1)
                lines = [f'{{"seq": {seq}, "put": {self._json[name]}}}\n' for seq, name in numbered]
                write_all(self._journal_fd, "".join(lines).encode())
                self._seq += len(lines)
                self._since_compact += len(lines)
                self._dirty.clear()
                self._unsynced = True
            if sync and self._unsynced and self._journal_fd is not None:  # unsynced: written to an open journal
                fdatasync(self._journal_fd)
                self._unsynced = False
        except OSError as exc:
            raise StoreError(journal_path(self.path, self._journal_start), f"cannot append: {exc}") from exc

    def _compact(self) -> None:
        with self._compact_lock:
            with self._lock:
                seq, texts, config = self._seq, list(self._json.values()), self._config
                if self._journal_start != seq + 1:
                    self._switch_journal(seq + 1)
                self._since_compact = 0
            started = time.perf_counter()
            self._write_state(seq, config, texts)
            for start, path in journals(self.path):
                if start <= seq:  # every entry in it is now in state.json
                    path.unlink(missing_ok=True)
            self.compactions += 1
            self.last_compact_s = time.perf_counter() - started

    def _switch_journal(self, start: int) -> None:
        # O_TRUNC: a leftover file of this name can only hold a cut-short, never-acknowledged tail.
        fd = os.open(journal_path(self.path, start), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        fsync_path(self.path.parent)  # its name must outlive a power cut before it holds acknowledged entries
        if self._journal_fd is not None:
            os.close(self._journal_fd)
        self._journal_fd, self._journal_start, self._unsynced = fd, start, False

    def _write_state(self, seq: int, config: str, texts: list[str]) -> None:
        meta = {"schema_version": self.SCHEMA_VERSION, "journal_seq": seq,
                "written_by": f"nnlite-tui {__version__}", "written_at": time.time()}
        config_table = "" if config == "null" else f'"1": {config}'

        def chunks() -> Iterable[str]:  # TinyDB's layout: {table: {doc_id: document}}
            yield f'{{"meta": {{"1": {json.dumps(meta)}}}, "config": {{{config_table}}}, "models": {{'
            for i in range(0, len(texts), 256):
                yield (", " if i else "") + ", ".join(f'"{i + k}": {t}' for k, t in enumerate(texts[i:i + 256], 1))
            yield "}}\n"

        try:
            self._storage.write_chunks(chunks())
        except OSError as exc:
            raise StoreError(self.path, f"cannot write the run state: {exc}") from exc

    def _flusher(self) -> None:
        while not self._stop.wait(self.flush_interval if self.flush_interval > 0 else 1.0):
            try:
                with self._lock:
                    self._append(sync=True)
                    due = self._since_compact >= max(self.COMPACT_MIN, len(self._json))
                if due:
                    self._compact()
            except StoreError as exc:
                if environment_cause(exc) is not None:  # full, read-only, I/O: the records stay dirty, written once it takes them
                    continue  # a transition's own append raises it to the run, which pauses (run/unit_faults.py)
                self._error = exc  # the next call raises it: a run must not go on with state it cannot save
                return

    def _take_lock(self) -> int | None:
        if fcntl is None:
            return None
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _read_pid(fd)
            os.close(fd)
            raise RunLocked(self.path, pid) from None
        try:  # the holder's pid, so that a second writer can name it
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # only the message of a second writer loses the pid; the lock itself holds
        return fd

    def _release(self) -> None:
        for fd in (self._journal_fd, self._lock_fd):
            if fd is not None:
                os.close(fd)
        self._journal_fd = self._lock_fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _check_status(status: object) -> None:
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
