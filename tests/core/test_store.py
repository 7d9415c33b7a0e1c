"""RunStore against a real TinyDB state file and real child processes that die mid-run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from tinydb import TinyDB

from nnlite_tui.core.store import files as state_files
from nnlite_tui.core.events import STATUSES, TERMINAL
from nnlite_tui.core.store.files import StoreError, load_snapshot
from nnlite_tui.core.store import RunStore


def child(code: str, run_dir: Path) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (argv[1] = run_dir); it ends with os._exit, i.e. no close()."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(run_dir)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


CRASH_AFTER_FIVE_DONE = """
    import os, sys
    from nnlite_tui.core.store import RunStore
    store = RunStore(sys.argv[1], flush_interval=60)
    store.add_models([{"name": f"m{i}"} for i in range(5)])
    for i in range(5):
        store.transition(f"m{i}", "done", median_ms=float(i))
    os._exit(0)
"""


def files(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.iterdir())


def test_round_trip(tmp_path):
    config = {"devices": ["host"], "runs": 50, "versions": {"torch": "2.13.0", "litert-torch": "0.10.0"}}
    error = {"stage": "convert", "type": "RuntimeError", "message": "unsupported op"}
    with RunStore(tmp_path) as store:
        assert store.get_config() is None
        store.set_config(config)
        assert store.add_models([{"name": "b", "spec": {"path": "b.py"}}, {"name": "a"}, {"name": "b"}]) == 2
        assert store.add_models([{"name": "a"}, {"name": "c"}]) == 1
        store.transition("b", "converting", stage="convert", attempts=1)
        store.update("b", timings={"convert": 1.5}, artifact="artifacts/b.tflite")
        store.transition("b", "done", report="reports/b.json", device="host", median_ms=2.5)
        store.transition("a", "failed", error=error, attempts=2)
        assert store.get("b")["spec"] == {"path": "b.py"}
        written = store.all()
    assert RunStore.exists(tmp_path) and not RunStore.exists(tmp_path / "other")
    assert files(tmp_path) == ["state.json", "state.json.lock"]  # no journal or temp file left
    with RunStore(tmp_path / "state.json") as store:
        assert store.get_config() == config
        assert store.all() == written
        assert [r["name"] for r in written] == ["b", "a", "c"]
        b = store.get("b")
        assert (b["status"], b["stage"], b["attempts"], b["timings"], b["artifact"], b["report"], b["median_ms"]) == (
            "done", "convert", 1, {"convert": 1.5}, "artifacts/b.tflite", "reports/b.json", 2.5)
        assert store.get("a")["error"] == error and store.get("c")["status"] == "queued"
        assert store.names("failed") == ["a"] and store.names() == ["b", "a", "c"]
        assert store.counts() == {**dict.fromkeys(STATUSES, 0), "queued": 1, "done": 1, "failed": 1}
        assert store.get("missing") is None
    # The file is plain TinyDB: any TinyDB reader sees the same records.
    assert [dict(d) for d in TinyDB(tmp_path / "state.json").table("models").all()] == written


def test_bad_calls_change_nothing(tmp_path):
    with RunStore(tmp_path) as store:
        store.add_models([{"name": "m"}])
        before = store.get("m")
        with pytest.raises(KeyError):
            store.update("nope", stage="convert")
        with pytest.raises(ValueError, match="unknown status"):
            store.transition("m", "finished")
        with pytest.raises(TypeError):
            store.update("m", spec={"not json": object()})
        with pytest.raises(TypeError):
            store.add_models([{"name": "n"}, {"name": "o", "spec": object()}])
        assert store.get("m") == before and store.names() == ["m"]
        store.get("m")["timings"]["convert"] = 9.0  # callers get copies
        assert store.get("m")["timings"] == {}
    with pytest.raises(StoreError, match="closed"):
        store.update("m", stage="x")
    store.close()  # idempotent


def test_failed_rename_leaves_old_file_whole(tmp_path, monkeypatch):
    store = RunStore(tmp_path)
    store.set_config({"version": 1})
    store.add_models([{"name": "m"}])
    state = tmp_path / "state.json"
    before = state.read_bytes()

    def crash(src, dst):
        raise OSError(28, "No space left on device (simulated)")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StoreError) as failed:
        store.set_config({"version": 2})
    assert failed.value.path == state
    assert state.read_bytes() == before
    assert not [name for name in files(tmp_path) if name.endswith(".tmp")]
    monkeypatch.undo()
    store.transition("m", "done")
    store.close()
    assert RunStore.read_only(tmp_path).get("m")["status"] == "done"


@pytest.mark.parametrize("content", [
    b'{"meta": {"1": {"schema_ver', b"", b"\xff\xfe\x00garbage", b"[1, 2]", b'{"models": {}}',
    b'{"meta": {"1": {"schema_version": 1, "journal_seq": 0}}, "config": {}, "models": {"1": {"status": "done"}}}',
], ids=["truncated", "empty", "binary", "list", "no-meta", "nameless-record"])
def test_corrupt_state_file_is_an_error_and_kept(tmp_path, content):
    state = tmp_path / "state.json"
    state.write_bytes(content)
    with pytest.raises(StoreError) as failed:
        RunStore(tmp_path)
    assert failed.value.path == state and str(state) in str(failed.value)
    assert state.read_bytes() == content
    assert files(tmp_path) == ["state.json", "state.json.lock"]
    with pytest.raises(StoreError):
        load_snapshot(tmp_path)


def test_newer_schema_is_refused(tmp_path):
    RunStore(tmp_path).close()
    state = tmp_path / "state.json"
    data = json.loads(state.read_text())
    data["meta"]["1"]["schema_version"] = RunStore.SCHEMA_VERSION + 1
    state.write_text(json.dumps(data))
    content = state.read_bytes()
    with pytest.raises(StoreError, match="newer") as failed:
        RunStore(tmp_path)
    assert failed.value.path == state and state.read_bytes() == content


def test_second_writer_is_refused(tmp_path):
    with RunStore(tmp_path):
        with pytest.raises(StoreError, match="another nnlite process"):
            RunStore(tmp_path)
    RunStore(tmp_path).close()


def test_journal_replayed_and_torn_tail_ignored(tmp_path):
    child(CRASH_AFTER_FIVE_DONE, tmp_path)
    journal = tmp_path / "state.json.journal.1"
    journal.write_bytes(journal.read_bytes() + b'{"seq": 11, "put": {"name": "m0", "sta')  # cut short by a crash
    config, records = load_snapshot(tmp_path)
    assert [(r["name"], r["status"], r["median_ms"]) for r in records] == [
        (f"m{i}", "done", float(i)) for i in range(5)]
    with RunStore(tmp_path) as store:
        assert store.all() == records
        store.transition("m0", "failed")
    assert RunStore.read_only(tmp_path).get("m0")["status"] == "failed"


def test_damaged_journal_is_an_error_and_kept(tmp_path):
    child(CRASH_AFTER_FIVE_DONE, tmp_path)
    journal = tmp_path / "state.json.journal.1"
    lines = journal.read_bytes().split(b"\n")
    lines[2] = b"\x00garbage"
    journal.write_bytes(b"\n".join(lines))
    content = journal.read_bytes()
    with pytest.raises(StoreError, match="corrupt journal line 3") as failed:
        RunStore(tmp_path)
    assert failed.value.path == journal and journal.read_bytes() == content


def test_journal_without_state_file_is_refused(tmp_path):
    child(CRASH_AFTER_FIVE_DONE, tmp_path)
    (tmp_path / "state.json").unlink()
    with pytest.raises(StoreError, match="journal files exist"):
        RunStore(tmp_path)
    assert (tmp_path / "state.json.journal.1").stat().st_size > 0 and not (tmp_path / "state.json").exists()


def test_concurrent_transitions_stay_consistent(tmp_path, monkeypatch):
    monkeypatch.setattr(RunStore, "COMPACT_MIN", 10)  # background compactions race the writers too
    names = [f"m{i:03d}" for i in range(240)]
    with RunStore(tmp_path, flush_interval=0.005) as store:
        store.add_models([{"name": "shared"}] + [{"name": n} for n in names])

        def work(k: int) -> None:
            for i, name in enumerate(names[k::8]):
                store.transition(name, "converting", attempts=1)
                store.update(name, timings={"convert": 0.1 * i})
                store.transition(name, TERMINAL[i % 3], attempts=2)
                store.update("shared", **{f"thread{k}": i})

        def compact_meanwhile() -> None:
            while any(worker.is_alive() for worker in workers) or store.compactions < 4:
                store.compact()

        workers = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        threads = [*workers, threading.Thread(target=compact_meanwhile)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sum(store.counts().values()) == 241
        assert store.counts()["queued"] == 1 and store.counts()["converting"] == 0
        for k in range(8):
            assert store.get("shared")[f"thread{k}"] == 29
        for k in range(8):
            for i, name in enumerate(names[k::8]):
                record = store.get(name)
                assert (record["status"], record["attempts"], record["timings"]) == (
                    TERMINAL[i % 3], 2, {"convert": 0.1 * i})
        in_memory = store.all()
    with RunStore(tmp_path) as reopened:
        assert reopened.all() == in_memory


KILLED_MID_RUN = """
    import sys, threading
    from nnlite_tui.core.store import RunStore
    RunStore.COMPACT_MIN = 20
    store = RunStore(sys.argv[1], flush_interval=0.005)
    names = [f"m{i:04d}" for i in range(300)]
    store.add_models([{"name": n} for n in names])

    def churn():
        i = 0
        while True:
            store.update(names[i % 60], stage="benchmark", attempts=i)
            i += 1

    threading.Thread(target=churn, daemon=True).start()
    for i, name in enumerate(names):
        store.transition(name, "converting")
        status = ("done", "failed", "skipped")[i % 3]
        store.transition(name, status, median_ms=float(i))
        print(name, status, flush=True)
    threading.Event().wait()
"""


@pytest.mark.parametrize("kill_after", [random.Random(seed).randint(20, 250) for seed in (1, 2)])
def test_kill_9_loses_no_reported_terminal_transition(tmp_path, kill_after):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(KILLED_MID_RUN), str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported = []
    while len(reported) < kill_after:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        reported.append(line.split())
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    # Lines printed before the kill were reported too; a cut-off last line was not.
    reported += [line.split() for line in rest.splitlines(keepends=True) if line.endswith("\n")]
    assert proc.returncode == -signal.SIGKILL
    _, snapshot = load_snapshot(tmp_path)
    with RunStore(tmp_path) as store:
        assert store.all() == snapshot and len(snapshot) == 300
        for name, status in reported:
            assert store.get(name)["status"] == status, name


def test_read_only_snapshot_while_writer_is_open(tmp_path):
    with RunStore(tmp_path, flush_interval=60) as writer:
        writer.set_config({"runs": 5})
        writer.add_models([{"name": "a"}, {"name": "b"}])
        writer.transition("a", "failed", error={"stage": "deploy", "type": "AdbError", "message": "offline"})
        listing = {name: (tmp_path / name).read_bytes() for name in files(tmp_path)}
        with writer._lock:  # a reader needs neither the writer's lock nor its flock
            config, records = load_snapshot(tmp_path)
            reader = RunStore.read_only(tmp_path)
        assert config == {"runs": 5}
        assert [(r["name"], r["status"]) for r in records] == [("a", "failed"), ("b", "queued")]
        assert reader.all() == records and reader.counts()["failed"] == 1
        with pytest.raises(StoreError, match="read-only"):
            reader.transition("b", "done")
        assert {name: (tmp_path / name).read_bytes() for name in files(tmp_path)} == listing


def test_snapshots_never_miss_reported_transitions_during_compactions(tmp_path, monkeypatch):
    monkeypatch.setattr(RunStore, "COMPACT_MIN", 5)
    names = [f"m{i}" for i in range(20)]
    reported: dict[str, int] = {}
    failures: list[str] = []
    stop = threading.Event()
    reads = 0

    def read() -> None:
        nonlocal reads
        while not stop.is_set():
            before = dict(reported)
            rounds = {r["name"]: r.get("round", -1) for r in load_snapshot(tmp_path)[1]}
            failures.extend(n for n, r in before.items() if rounds[n] < r)
            reads += 1

    with RunStore(tmp_path, flush_interval=0.002) as store:
        store.add_models([{"name": n} for n in names])
        reader = threading.Thread(target=read)
        reader.start()
        for round_ in range(6):
            for name in names:
                store.transition(name, "converting")
                store.transition(name, "done", round=round_)
                reported[name] = round_
            store.compact()  # besides the background ones, so that every run races a few
        stop.set()
        reader.join()
    assert reads > 5 and not failures


def test_snapshot_reads_again_when_a_compaction_races_it(tmp_path, monkeypatch):
    with RunStore(tmp_path, flush_interval=60) as store:
        store.add_models([{"name": "a"}, {"name": "b"}])
        store.transition("a", "done")  # in the journal only
        real_load_state, loads = state_files.load_state, []

        def load_then_compact(path):
            state = real_load_state(path)
            if not loads:  # between our read of state.json and of the journals, the writer compacts
                store.transition("b", "done")
                store.compact()
            loads.append(path)
            return state

        monkeypatch.setattr(state_files, "load_state", load_then_compact)
        _, records = load_snapshot(tmp_path)
        assert [r["status"] for r in records] == ["done", "done"] and len(loads) == 2


def test_write_behind_reaches_disk_within_flush_interval(tmp_path):
    with RunStore(tmp_path, flush_interval=60) as store:
        store.add_models([{"name": "m"}])
        store.transition("m", "converting", stage="convert")
        assert load_snapshot(tmp_path)[1][0]["status"] == "queued"  # written behind, not yet
        store.flush()
        assert load_snapshot(tmp_path)[1][0]["status"] == "converting"
    with RunStore(tmp_path, flush_interval=0.1) as store:
        store.update("m", stage="validate")
        started = time.monotonic()
        while load_snapshot(tmp_path)[1][0]["stage"] != "validate":
            assert time.monotonic() - started < 0.5, "update not on disk within flush_interval"
            time.sleep(0.01)


def test_flush_interval_zero_writes_through(tmp_path):
    with RunStore(tmp_path, flush_interval=0) as store:
        store.add_models([{"name": "m"}])
        store.transition("m", "converting")
        assert load_snapshot(tmp_path)[1][0]["status"] == "converting"
        store.update("m", stage="validate")
        assert load_snapshot(tmp_path)[1][0]["stage"] == "validate"
