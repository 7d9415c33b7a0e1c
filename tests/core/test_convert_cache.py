"""The conversion cache with real files: LRU eviction, locks across processes, concurrent writers,
and a filesystem that fills up (a small tmpfs mounted by the test)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from nnlite_tui.core.convert.cache import TMP, CacheWriteError, ConversionCache
from nnlite_tui.core.convert.cache_scan import cache_usage
from nnlite_tui.core.disk import GB

MB = 10**6
SUFFIX = ".tflite"  # the artifacts these entries hold: LiteRT's (the cache keeps each under its runtime's suffix)
REPO = Path(__file__).resolve().parents[2]


def _key(n: int) -> str:
    return hashlib.sha256(f"model-{n}".encode()).hexdigest()


def _payload(key: str, size: int) -> bytes:
    """Content that a reader can check against the key alone (any writer of a key writes the same)."""
    block = hashlib.sha256(key.encode()).digest()
    return (block * (size // len(block) + 1))[:size]


def _store(cache: ConversionCache, key: str, size: int) -> dict:
    staging = cache.staging(key, SUFFIX)
    data = _payload(key, size)
    staging.artifact.write_bytes(data)
    result = {"ok": True, "stage": "done", "artifact_bytes": size, "artifact_sha256": hashlib.sha256(data).hexdigest()}
    try:
        return cache.commit(staging, result)
    finally:
        staging.discard()


def _keys_on_disk(cache: ConversionCache) -> set[str]:
    return {e.key for e in cache.entries()}


def test_least_recently_used_entries_go_first_and_a_hit_counts_as_use(tmp_path):
    cache = ConversionCache(tmp_path / "c", max_gb=3.5 * MB / GB)
    a, b, c, d, e = (_key(i) for i in range(5))
    for key in (a, b, c):
        _store(cache, key, MB)
        time.sleep(0.01)  # distinct mtimes even on a coarse clock
    assert _keys_on_disk(cache) == {a, b, c}
    assert cache.fetch(a, tmp_path / "a.tflite") is not None  # a is now the most recently used
    assert (tmp_path / "a.tflite").read_bytes() == _payload(a, MB)
    time.sleep(0.01)
    _store(cache, d, MB)  # 4 MB > 3.5 MB: the least recently used one (b) goes
    assert _keys_on_disk(cache) == {a, c, d}
    time.sleep(0.01)
    _store(cache, e, MB)
    assert _keys_on_disk(cache) == {a, d, e}
    assert cache.fetch(b) is None and cache.fetch(c) is None
    usage = cache_usage(cache.root)
    assert usage.entries == 3 and usage.total_bytes <= 3.5 * MB
    assert not list((cache.root / TMP).iterdir())


def test_an_entry_bigger_than_the_cap_is_kept_until_the_next_write(tmp_path):
    cache = ConversionCache(tmp_path / "c", max_gb=0.5 * MB / GB)
    big, small = _key(1), _key(2)
    _store(cache, big, 2 * MB)  # the entry just written is never its own victim
    assert cache.fetch(big, tmp_path / "big.tflite") is not None
    _store(cache, small, 1000)
    assert _keys_on_disk(cache) == {small}
    assert (tmp_path / "big.tflite").read_bytes() == _payload(big, 2 * MB)  # the run's copy survives


HOLD_LOCK = textwrap.dedent("""
    import fcntl, sys
    f = open(sys.argv[1], "rb")
    fcntl.flock(f, fcntl.LOCK_SH)
    print("locked", flush=True)
    sys.stdin.readline()
""")


def test_an_entry_another_process_is_reading_is_never_evicted(tmp_path):
    cache = ConversionCache(tmp_path / "c", max_gb=100)
    held, other = _key(1), _key(2)
    _store(cache, held, 1000)
    _store(cache, other, 1000)
    reader = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(cache.meta_path(held))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "locked"
        pruned = cache.clear()
        assert pruned.busy == 1 and [e.key for e in pruned.removed] == [other]
        assert _keys_on_disk(cache) == {held}
        assert cache.fetch(held) is not None  # readers share the lock
    finally:
        reader.communicate("\n", timeout=10)
    assert cache.clear().removed[0].key == held
    assert _keys_on_disk(cache) == set()


WORKER = textwrap.dedent("""
    import hashlib, random, sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from tests.core.test_convert_cache import _key, _payload, _store
    from nnlite_tui.core.convert.cache import ConversionCache
    cache = ConversionCache(Path(sys.argv[2]), max_gb=float(sys.argv[3]))
    out = Path(sys.argv[4])
    rng = random.Random(int(sys.argv[5]))
    bad = hits = 0
    deadline = time.monotonic() + 60
    for i in range(40):
        if time.monotonic() > deadline:
            break
        key = _key(rng.randrange(12))
        size = 50_000 + int(key[:4], 16) % 50_000
        dest = out / f"{i}.tflite"
        hit = cache.fetch(key, dest)
        if hit is None:
            _store(cache, key, size)
            continue
        hits += 1
        data = dest.read_bytes()
        if data != _payload(key, size) or hashlib.sha256(data).hexdigest() != hit["artifact_sha256"]:
            bad += 1
    print(hits, bad)
""")


def test_concurrent_writers_and_readers_only_ever_see_whole_entries(tmp_path):
    """Four processes read and write twelve keys under a cap that forces eviction all the time."""
    root = tmp_path / "c"
    cap_gb = 0.3 * MB / GB  # about four entries
    procs = []
    for n in range(4):
        out = tmp_path / f"out{n}"
        out.mkdir()
        procs.append(subprocess.Popen([sys.executable, "-c", WORKER, str(REPO), str(root), str(cap_gb), str(out),
                                       str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    totals = [0, 0]
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        hits, bad = map(int, stdout.split())
        totals[0] += hits
        totals[1] += bad
    assert totals[1] == 0, f"{totals[1]} reads saw a partial or foreign file"
    assert totals[0] > 0, "no process ever hit the cache: the test did not test reads"
    cache = ConversionCache(root, max_gb=cap_gb)
    for entry in cache.entries():  # every stored entry is whole and consistent
        meta = json.loads((entry.path / "meta.json").read_text())
        data = (entry.path / "model.tflite").read_bytes()
        assert hashlib.sha256(data).hexdigest() == meta["artifact_sha256"] and data == _payload(entry.key, len(data))
    assert cache_usage(root).total_bytes <= 0.3 * MB + 100_000  # at most one entry over: the last written
    assert not list((root / TMP).iterdir()), "a writer left its staging directory behind"


def test_a_dead_writers_staging_directory_is_cleaned_and_never_read(tmp_path):
    cache = ConversionCache(tmp_path / "c", max_gb=1)
    key = _key(7)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = cache.root / TMP / f"{key}.{dead.stdout.strip()}.abcd1234"
    leftover.mkdir(parents=True)
    (leftover / "model.tflite.part").write_bytes(b"half a model")
    assert cache.fetch(key) is None
    _store(cache, _key(8), 1000)  # any write cleans up after dead processes
    assert not leftover.exists()


# ----- a full filesystem -----
@pytest.fixture
def small_fs(tmp_path):
    """An 8 MB tmpfs; needs mount permission (root, or a user namespace)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"this machine does not let the test mount a tmpfs ({done.stderr.strip()}); "
                    "the full-disk case needs one")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=True)


def _fill(path: Path, leave: int = 0) -> Path:
    """Write a filler file until the filesystem is full (less `leave` bytes)."""
    filler = path / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def _no_partial_entry(cache: ConversionCache, key: str) -> None:
    assert cache.fetch(key) is None
    assert not cache.entry_dir(key).exists()
    assert not list((cache.root / TMP).iterdir())


def test_a_model_that_does_not_fit_leaves_no_entry_and_a_clear_error(small_fs):
    cache = ConversionCache(small_fs / "cache", max_gb=1)
    key = _key(1)
    filler = _fill(small_fs, leave=256 * 1024)
    staging = cache.staging(key, SUFFIX)
    with pytest.raises(OSError) as exc:  # what the converter meets while writing the .tflite
        staging.artifact.write_bytes(_payload(key, 2 * MB))
    worker_said = {"ok": False, "stage": "serialize", "error_type": "OSError", "error_message": str(exc.value)}
    result = cache.commit(staging, worker_said)
    assert result["ok"] is False and result["stage"] == "crash" and result["error_type"] == "DiskFull"
    assert "no space left" in result["error_message"] and "nnlite cache prune" in result["error_message"]
    assert str(cache.root) in result["error_message"]
    _no_partial_entry(cache, key)
    filler.unlink()  # with room again, the same key stores whole
    _store(cache, key, 2 * MB)
    assert cache.fetch(key, small_fs / "out.tflite")["artifact_bytes"] == 2 * MB


def test_a_result_that_cannot_be_recorded_leaves_no_entry(small_fs):
    cache = ConversionCache(small_fs / "cache", max_gb=1)
    key = _key(2)
    staging = cache.staging(key, SUFFIX)
    _fill(staging.dir)  # the .tflite itself took the last byte: meta.json cannot be written
    staging.dir.joinpath("filler").rename(staging.artifact)
    result = cache.commit(staging, {"ok": True, "stage": "done", "artifact_sha256": "x"}, small_fs / "run" / "m.tflite")
    assert result["error_type"] == "DiskFull" and result["stage"] == "crash"
    _no_partial_entry(cache, key)
    assert not (small_fs / "run" / "m.tflite").exists()
    with pytest.raises(CacheWriteError):  # the plain put() says so with an exception
        _fill(small_fs)
        cache.put(key, {"ok": False, "stage": "export", "error_message": "x" * 10000})
    _no_partial_entry(cache, key)


def test_the_default_cap_is_a_quarter_of_the_free_space_at_first_use_and_stays(small_fs, monkeypatch):
    monkeypatch.delenv("NNLITE_CACHE_MAX_GB", raising=False)
    root = small_fs / "cache"
    cap = ConversionCache(root).cap
    assert cap.max_bytes == 8 * 1024 * 1024 // 4 and "25%" in cap.source
    _fill(small_fs)
    assert ConversionCache(root).cap.max_bytes == cap.max_bytes  # not shrunk by the disk filling up
    monkeypatch.setenv("NNLITE_CACHE_MAX_GB", "0.5")
    assert ConversionCache(root).cap.max_bytes == GB // 2
    assert ConversionCache(root, max_gb=2).cap.max_bytes == 2 * GB
    monkeypatch.setenv("NNLITE_CACHE_MAX_GB", "lots")
    with pytest.raises(ValueError, match="NNLITE_CACHE_MAX_GB='lots'"):
        ConversionCache(root)


@pytest.mark.slow
def test_a_real_conversion_on_a_full_disk_fails_transiently_then_converts_and_caches(small_fs, good_models, tmp_path):
    from nnlite_tui.core.convert.options import ConvertOptions
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.sources.discover import discover

    spec = next(s for s in discover([str(good_models)]) if s.name == "tiny_conv")
    options = ConvertOptions(cache_dir=small_fs / "cache", workers=1, timeout_s=120, cache_max_gb=1)
    with Converter(options, n_workers=1) as converter:
        filler = _fill(small_fs)
        failed = converter.convert(spec, tmp_path / "run" / "tiny.tflite")
        assert (failed["ok"], failed["stage"], failed["error_type"]) == (False, "crash", "DiskFull"), failed
        assert "no space left" in failed["error_message"]
        _no_partial_entry(converter.cache, failed["key"])
        assert not (tmp_path / "run" / "tiny.tflite").exists()
        filler.unlink()
        done = converter.convert(spec, tmp_path / "run" / "tiny.tflite")
        assert done["ok"] and not done["cached"], done
        again = converter.convert(spec, tmp_path / "run" / "again.tflite")
        assert again["cached"] and (tmp_path / "run" / "again.tflite").read_bytes() == \
            (tmp_path / "run" / "tiny.tflite").read_bytes()


def test_an_entry_of_the_older_flat_layout_is_counted_then_moved_in_when_asked_for(tmp_path):
    root = tmp_path / "c"
    key, stale = _key(1), _key(2)
    for k in (key, stale):
        (root / k[:2]).mkdir(parents=True, exist_ok=True)
        data = _payload(k, 5000)
        (root / k[:2] / f"{k}.tflite").write_bytes(data)
        (root / k[:2] / f"{k}.json").write_text(json.dumps({"ok": True, "stage": "done",
                                                            "artifact_sha256": hashlib.sha256(data).hexdigest()}))
    cache = ConversionCache(root, max_gb=1)
    assert {(e.key, e.legacy, e.ok) for e in cache.entries()} == {(key, True, True), (stale, True, True)}
    hit = cache.fetch(key, tmp_path / "run" / "m.tflite")
    assert hit["artifact_path"] == str(tmp_path / "run" / "m.tflite")
    assert (tmp_path / "run" / "m.tflite").read_bytes() == _payload(key, 5000)
    assert not (root / key[:2] / f"{key}.json").exists() and cache.artifact_of(key) is not None
    assert {(e.key, e.legacy) for e in cache.entries()} == {(key, False), (stale, True)}
    assert [e.key for e in cache.evict(max_bytes=6000).removed] == [stale]  # never used since: first out
    assert not list((root / stale[:2]).glob(stale + ".*"))


def test_two_units_asking_for_one_conversion_at_once_convert_it_once(tmp_path):
    """An int8 unit taken while its fp32 unit converts waits for that conversion instead of doing it again."""
    from nnlite_tui.core.convert.cached_job import through_cache

    cache = ConversionCache(tmp_path / "c", max_gb=1)
    key, release, calls = _key(41), threading.Event(), []

    def run(staged: Path) -> dict:
        calls.append(threading.current_thread().name)
        release.wait(30)  # the first job is still running while the second unit asks
        data = _payload(key, 1000)
        staged.write_bytes(data)
        return {"ok": True, "stage": "done", "artifact_bytes": 1000, "artifact_sha256": hashlib.sha256(data).hexdigest()}

    results = {}
    threads = [threading.Thread(target=lambda n=n: results.__setitem__(n, through_cache(
        cache, key, tmp_path / f"dest{n}.tflite", run, suffix=SUFFIX, log_path=tmp_path / f"unit{n}.log")), name=f"unit{n}")
        for n in (0, 1)]
    def wait_until(condition) -> bool:
        deadline = time.monotonic() + 20
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        return condition()

    threads[0].start()
    assert wait_until(lambda: calls)  # the first unit's job has begun
    threads[1].start()
    waited = wait_until(lambda: (tmp_path / "unit1.log").exists() or len(calls) > 1)  # the second waits, or runs
    release.set()
    for t in threads:
        t.join(30)
    assert waited and calls == ["unit0"]
    assert results[0]["cached"] is False and results[1]["cached"] is True
    assert (tmp_path / "dest1.tflite").read_bytes() == _payload(key, 1000)
    assert "waiting for the same job" in (tmp_path / "unit1.log").read_text()


# ----- each runtime's suffix -----

def test_an_artifact_is_stored_under_its_runtimes_suffix_and_served_from_it(tmp_path):
    cache = ConversionCache(tmp_path / "c", max_gb=1)
    key, data = _key(51), b"an ExecuTorch program"
    staging = cache.staging(key, ".pte")
    staging.artifact.write_bytes(data)
    cache.commit(staging, {"ok": True, "stage": "done", "artifact_sha256": hashlib.sha256(data).hexdigest()})
    assert sorted(p.name for p in cache.entry_dir(key).iterdir()) == ["meta.json", "model.pte"]
    assert cache.artifact_of(key) == cache.entry_dir(key) / "model.pte"
    assert cache.fetch(key, tmp_path / "run" / "m.pte")["artifact_path"] == str(tmp_path / "run" / "m.pte")
    assert (tmp_path / "run" / "m.pte").read_bytes() == data
    assert [(e.key, e.ok) for e in cache.entries()] == [(key, True)]


def test_an_entry_written_before_artifacts_carried_their_suffix_is_still_served(tmp_path):
    """Earlier releases stored every artifact as model.tflite, an ExecuTorch program too: such an entry,
    made by hand here as they wrote it, is found, checked against its sha256 and placed at the unit's
    .pte path, and counts as a whole entry for the size cap."""
    root = tmp_path / "c"
    key, program = _key(52), b"PTE bytes stored under the old name"
    entry = root / key[:2] / key
    entry.mkdir(parents=True)
    (entry / "model.tflite").write_bytes(program)
    (entry / "meta.json").write_text(json.dumps({"ok": True, "stage": "done", "runtime": "executorch",
                                                 "artifact_sha256": hashlib.sha256(program).hexdigest()}))
    cache = ConversionCache(root, max_gb=1)
    assert [(e.key, e.ok, e.legacy, e.bytes) for e in cache.entries()] == \
        [(key, True, False, len(program) + (entry / "meta.json").stat().st_size)]
    hit = cache.fetch(key, tmp_path / "run" / "m@executorch.pte")
    assert hit is not None and hit["artifact_path"] == str(tmp_path / "run" / "m@executorch.pte")
    assert (tmp_path / "run" / "m@executorch.pte").read_bytes() == program
    (entry / "model.tflite").write_bytes(b"altered")  # and it is checked like any entry
    assert cache.fetch(key) is None


def test_a_flat_layout_entry_keeps_its_own_suffix_when_moved_in(tmp_path):
    root = tmp_path / "c"
    key, data = _key(53), b"a program of the flat layout"
    (root / key[:2]).mkdir(parents=True)
    (root / key[:2] / f"{key}.pte").write_bytes(data)
    (root / key[:2] / f"{key}.json").write_text(json.dumps({"ok": True, "stage": "done",
                                                           "artifact_sha256": hashlib.sha256(data).hexdigest()}))
    cache = ConversionCache(root, max_gb=1)
    assert [(e.key, e.legacy, e.ok) for e in cache.entries()] == [(key, True, True)]
    assert cache.fetch(key, tmp_path / "m.pte") is not None and (tmp_path / "m.pte").read_bytes() == data
    assert cache.artifact_of(key) == cache.entry_dir(key) / "model.pte"
    assert not list((root / key[:2]).glob(f"{key}.*"))
