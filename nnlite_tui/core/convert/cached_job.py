"""One job through the conversion cache: fetch -> stage -> run -> commit, wherever the job runs.

The local converter runs the job on a borrowed worker process, the cluster's on an actor; both hand
`through_cache` a `run(staged_artifact_path)` callable and get the same caching, disk-full handling
and phase accounting.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from nnlite_tui.core.convert.cache import CacheWriteError, ConversionCache, disk_full_failure, explain_crash
from nnlite_tui.core.convert.cache_files import place_file
from nnlite_tui.core.convert.options import DETERMINISTIC_STAGES
from nnlite_tui.core.convert.phases import PhaseClock, merged
from nnlite_tui.core.convert.record import ConversionRecord


_in_flight: dict[tuple[str, str], threading.Event] = {}  # (cache, key) whose job runs now -> set when it ends
_in_flight_lock = threading.Lock()


@contextlib.contextmanager
def only_one(cache_root: Path, key: str, log_path: Path | None = None) -> Iterator[None]:
    """One job per key at a time in this process: a second caller waits for the first, then finds its
    result in the cache. A derived precision converts its fp32 model first; taken while that model's
    own unit converts it, it converted the same model again beside it (a worker and a core for as long
    as the model takes, 20 s to minutes for LEMUR's larger ones). Per cache: another cache (another
    run in this process) has its own entries to fill."""
    slot = (str(cache_root), key)
    noted = False
    while True:
        with _in_flight_lock:
            running = _in_flight.get(slot)
            if running is None:
                mine = _in_flight[slot] = threading.Event()
                break
        if log_path and not noted:
            noted = True
            with open(log_path, "a") as f:
                f.write(f"[nnlite] waiting for the same job {key[:16]}, in flight for another unit\n")
        running.wait()
    try:
        yield
    finally:
        with _in_flight_lock:
            _in_flight.pop(slot, None)
        mine.set()


def through_cache(cache: ConversionCache, key: str, dest: Path, run: Callable[[Path], ConversionRecord], *,
                  suffix: str, use_cache: bool = True, log_path: Path | None = None,
                  what: str = "result") -> ConversionRecord:
    """The cached result under `key` (its artifact linked to dest), or `run`'s result stored under it.

    `run` writes the artifact to the staged path it is given (ending in `suffix`, the artifact's
    runtime's) and returns the worker's result dict;
    a success or a deterministic failure is stored, a transient one is not. Returns the result with
    `cached` and `key` set."""
    if not use_cache:
        return _through_cache(cache, key, dest, run, suffix=suffix, use_cache=False, log_path=log_path, what=what)
    with only_one(cache.root, key, log_path):
        return _through_cache(cache, key, dest, run, suffix=suffix, use_cache=True, log_path=log_path, what=what)


def _through_cache(cache: ConversionCache, key: str, dest: Path, run: Callable[[Path], ConversionRecord], *,
                   suffix: str, use_cache: bool, log_path: Path | None, what: str) -> ConversionRecord:
    clock = PhaseClock(time.thread_time)  # this thread's CPU: other threads run other jobs
    if use_cache:
        with clock.phase("cache_fetch"):
            hit = cache.fetch(key, dest)
        if hit is not None:
            if log_path:
                with open(log_path, "a") as f:
                    f.write(f"[nnlite] cached {what} {key[:16]} ({hit.get('stage')})\n")
            # The phases of the conversion that made the entry are the cost it saved.
            return {**hit, "cached": True, "key": key, "cached_phases": hit.get("phases"),
                    "phases": clock.to_dict()}
    try:
        staging = cache.staging(key, suffix)
    except CacheWriteError as exc:
        return {**disk_full_failure(cache.root, str(exc)), "cached": False, "key": key}
    try:
        result = explain_crash(cache.root, run(staging.artifact))
        with clock.phase("cache_write"):  # the entry, and the artifact linked (or copied) to dest
            if use_cache and (result.get("ok") or result.get("stage") in DETERMINISTIC_STAGES):
                result = cache.commit(staging, result, dest)
            elif result.get("ok"):
                place_file(staging.artifact, dest)
                result["artifact_path"] = str(dest)
        result = merged(result, clock.to_dict())
    finally:
        staging.discard()
    return {**result, "cached": False, "key": key}
