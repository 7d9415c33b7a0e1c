"""PyTorch -> .tflite conversion in isolated worker processes, with validation and a cache.

The orchestrator never imports torch or litert_torch: conversions run in spawned worker processes
(convert_worker.py) that import them once and serve many jobs. A worker that exceeds the per-model
timeout or memory cap, or dies, is killed as a process group and replaced; a worker is also
recycled after `recycle_after` jobs so that a leak cannot grow without bound.

Results are plain dicts (JSON-ready): `ok`, `stage` ("done" or the failing stage), `error_type`,
`error_message`, and on success the .tflite path, bytes, sha256, params, layout, max_abs_diff.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from nnlite_tui.core.convert_cache import CacheWriteError, ConversionCache, default_cache_dir, disk_full_failure, \
    explain_crash
from nnlite_tui.core.convert_cache_files import place_file as _place  # the name callers import
from nnlite_tui.core.convert_phases import PhaseClock, merged
from nnlite_tui.core.convert_pool import PauseGate, _failure, _killpg, _signal_group, _Worker  # noqa: F401
from nnlite_tui.core.orphans import reap_orphans
from nnlite_tui.core.spec import ModelSpec

# Bump when the worker's output for the same inputs changes (invalidates the cache).
CONVERT_FORMAT = 4  # 4: task inputs (task, input_signature), failure cause; 3: two validation inputs
# Stages whose failure is a property of the model, not of the machine: cached, never retried in a loop.
DETERMINISTIC_STAGES = ("import", "instantiate", "export", "lower", "serialize", "validate", "filtered",
                        "calibrate", "quantize")
TRANSIENT_STAGES = ("timeout", "out-of-memory", "crash")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def converter_versions() -> dict[str, str]:
    return {name: _version(name) for name in ("litert-torch", "torch", "ai-edge-litert")}


@dataclass(frozen=True)
class ConvertOptions:
    timeout_s: float = 300.0
    mem_cap_mb: int = 0  # 0: from available memory (memory_cap.default_mem_cap_mb)
    recycle_after: int = 50
    nhwc: bool = True
    workers: int = 0  # 0 = choose from cores and free memory
    # Torch threads per worker; 0: adaptive (a job gets the cores the running jobs leave it). A
    # conversion is serial Python and MLIR: a 2-thread worker spends ~94% of its CPU on one thread,
    # so one 1-thread worker per core converts the most (bench/convert_parallelism.py, bench/README.md).
    threads_per_worker: int = 1
    cache_dir: Path | None = None
    use_cache: bool = True
    cache_max_gb: float | None = None  # None: $NNLITE_CACHE_MAX_GB, else the cache's default cap
    start_timeout_s: float = 180.0
    max_params: int | None = None
    # Full int8 (core/precision.py): synthetic representative inputs, or a directory of .npy/.npz arrays.
    calibration_samples: int = 32
    calibration_dir: Path | None = None

    def cap_mb(self) -> int:
        if self.mem_cap_mb > 0:
            return self.mem_cap_mb
        from nnlite_tui.core.memory_cap import default_mem_cap_mb

        return default_mem_cap_mb()

    def worker_count(self, n_models: int | None = None) -> int:
        if self.workers > 0:
            return self.workers
        import psutil

        by_cpu = max(1, (os.cpu_count() or 1))
        by_mem = max(1, int(psutil.virtual_memory().available / (self.cap_mb() * 2**20)))
        count = min(by_cpu, by_mem)
        return max(1, min(count, n_models)) if n_models else count


def cache_key(spec: ModelSpec, options: ConvertOptions, versions: dict[str, str]) -> str:
    import hashlib

    # The task picks the inputs and alt_in_shapes the retry size: both change the result.
    payload = json.dumps([CONVERT_FORMAT, spec.key(), spec.task, [list(s) for s in spec.alt_in_shapes],
                          options.nhwc, options.max_params, versions], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Converter:
    """Thread-safe front of the worker pool: each convert() call borrows one worker."""

    options: ConvertOptions = field(default_factory=ConvertOptions)
    log_dir: Path | None = None
    n_workers: int = 1

    def __post_init__(self) -> None:
        self.versions = converter_versions()
        if self.log_dir is not None:
            reap_orphans(self.log_dir)
        self.cache = ConversionCache(self.options.cache_dir or default_cache_dir(), self.options.cache_max_gb)
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self.gate = PauseGate()
        self._all = [_Worker(self.options, self.log_dir, self.gate) for _ in range(self.n_workers)]
        for w in self._all:
            self._idle.put(w)
        self._closed = False
        self._close_lock = threading.Lock()
        self._running = 0  # jobs on a worker right now (adaptive threads)
        self._running_lock = threading.Lock()

    def prestart(self) -> None:
        """Start the workers in the background so their heavy import overlaps other work."""
        def start() -> None:
            worker = self._idle.get()  # borrowed like a job does, so no convert() starts it twice
            try:
                if not worker.alive:
                    worker.start()
            except (RuntimeError, OSError):
                pass  # convert() starts it again and reports the failure against the model at hand
            finally:
                self._idle.put(worker)
        for _ in self._all:
            threading.Thread(target=start, daemon=True, name="convert-prestart").start()

    def _begin_job(self) -> int:
        """Torch threads for the job about to start: the fixed setting, or (adaptive) the cores left
        to it by the jobs already running, so a job running alone at the end of a run uses them all."""
        with self._running_lock:
            self._running += 1
            running = self._running
        if self.options.threads_per_worker > 0:
            return self.options.threads_per_worker
        return max(1, (os.cpu_count() or 1) // running)

    def _end_job(self) -> None:
        with self._running_lock:
            self._running -= 1

    def key(self, spec: ModelSpec) -> str:
        return cache_key(spec, self.options, self.versions)

    def convert(self, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                cancel: threading.Event | None = None) -> dict[str, Any]:
        """Convert (or take from cache) one model to `dest`; returns the result dict."""
        if spec.precision != "fp32":  # derived from the fp32 .tflite
            from nnlite_tui.core.precision import derive_variant

            return derive_variant(self, spec, dest, log_path, cancel)
        job = {"spec": spec.to_dict(), "nhwc": self.options.nhwc, "max_params": self.options.max_params,
               "log_path": str(log_path) if log_path else None}
        return {**self.cached_job(self.key(spec), job, dest, log_path, cancel, what="conversion"), "model": spec.name}

    def cached_job(self, key: str, job: dict[str, Any], dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None, what: str = "result") -> dict[str, Any]:
        """A worker job whose result is cached under `key` (a conversion, or a derived precision's):
        taken from the cache, or run on a borrowed worker writing the cache's staged .tflite, then
        placed at dest. Returns the result with cached and key set."""
        clock = PhaseClock(time.thread_time)  # this thread's CPU: other threads run other jobs
        if self.options.use_cache:
            with clock.phase("cache_fetch"):
                hit = self.cache.fetch(key, dest)
            if hit is not None:
                if log_path:
                    with open(log_path, "a") as f:
                        f.write(f"[nnlite] cached {what} {key[:16]} ({hit.get('stage')})\n")
                # The phases of the conversion that made the entry are the cost it saved.
                return {**hit, "cached": True, "key": key, "cached_phases": hit.get("phases"),
                        "phases": clock.to_dict()}
        try:
            staging = self.cache.staging(key)
        except CacheWriteError as exc:
            return {**disk_full_failure(self.cache.root, str(exc)), "cached": False, "key": key}
        try:
            worker = self._idle.get()
            threads = self._begin_job()
            try:
                try:
                    result = worker.run({**job, "out_path": str(staging.tflite), "threads": threads}, cancel)
                except RuntimeError as exc:
                    result = _failure("crash", "WorkerStart", str(exc))
            finally:
                self._end_job()
                self._idle.put(worker)
            result = explain_crash(self.cache.root, result)
            with clock.phase("cache_write"):  # the entry, and the .tflite linked (or copied) to dest
                if self.options.use_cache and (result.get("ok") or result.get("stage") in DETERMINISTIC_STAGES):
                    result = self.cache.commit(staging, result, dest)
                elif result.get("ok"):
                    _place(staging.tflite, dest)
                    result["tflite_path"] = str(dest)
            result = merged(result, clock.to_dict())
        finally:
            staging.discard()
        return {**result, "cached": False, "key": key}

    def convert_many(self, specs: list[ModelSpec], out_dir: Path, log_dir: Path | None = None,
                     on_result: Callable[[ModelSpec, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
        """Convert specs to out_dir/<name>.tflite on every worker at once; results in completion order.

        on_result runs under a lock, so it may print or count without its own. Ctrl-C in the
        calling thread kills the workers and propagates.
        """
        from nnlite_tui.core.report import safe_name

        todo = list(specs)
        results: list[dict[str, Any]] = []
        lock = threading.Lock()

        def work() -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    spec = todo.pop(0)
                name = safe_name(spec.name)
                result = self.convert(spec, out_dir / f"{name}.tflite",
                                      log_dir / f"{name}.log" if log_dir else None)
                with lock:
                    results.append(result)
                    if on_result is not None:
                        on_result(spec, result)

        self.prestart()
        threads = [threading.Thread(target=work, daemon=True) for _ in range(self.n_workers)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)  # short joins so that Ctrl-C reaches this thread
        except KeyboardInterrupt:
            self.kill_all()
            raise
        return results

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        for w in self._all:
            w.stop()

    def pause_workers(self) -> None:
        """Stop every worker's process group (a host benchmark is about to be timed)."""
        self.gate.set(True)
        for pid in self.worker_pids():
            _signal_group(pid, signal.SIGSTOP)

    def resume_workers(self) -> None:
        for pid in self.worker_pids():
            _signal_group(pid, signal.SIGCONT)
        self.gate.set(False)

    def busy_workers(self) -> int:
        """Workers that are up and have been handed a job since they started."""
        return sum(1 for w in self._all if w.alive and w.jobs > 0)

    def worker_pids(self) -> list[int]:
        return [w.process.pid for w in self._all if w.process is not None and w.alive]

    def kill_all(self) -> None:
        """Kill every worker's process group now (operator quit / stop now).

        Only signals: the thread that owns a busy worker notices the death and reaps it, so no
        thread ever finds its worker's handles closed under it.
        """
        for w in self._all:
            proc = w.process
            if proc is not None:
                _killpg(proc)

    def __enter__(self) -> "Converter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
