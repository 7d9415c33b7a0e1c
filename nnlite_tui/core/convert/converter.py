"""Model -> artifact conversion in isolated worker processes, with validation and a cache.

The orchestrator never imports torch or a converter: conversions run in spawned worker processes
(worker/main.py) that import them once and serve many jobs, whatever the unit's runtime. A worker
that exceeds the per-model timeout or memory cap, or dies, is killed as a process group and
replaced; a worker is also recycled after `recycle_after` jobs so that a leak cannot grow without
bound. Workers run in the sandbox (convert/sandbox) unless the machine cannot make one (then with
what it can, said once at start by the CLI) or the options say "off".

Results are plain dicts (JSON-ready): `ok`, `stage` ("done" or the failing stage), `error_type`,
`error_message`, and on success the artifact's path, bytes, sha256, params, layout, max_abs_diff.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nnlite_tui.core.convert.cache import ConversionCache, default_cache_dir
from nnlite_tui.core.convert.cache_files import TMP
from nnlite_tui.core.convert.cached_job import through_cache
from nnlite_tui.core.convert.derive import derive_variant, unit_key
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.orphans import reap_orphans
from nnlite_tui.core.convert.pool import PauseGate, Worker, failure, killpg, signal_group
from nnlite_tui.core.convert.record import ConversionJob, ConversionRecord
from nnlite_tui.core.convert.sandbox import process_cap
from nnlite_tui.core.convert.sandbox.availability import in_effect
from nnlite_tui.core.convert.sandbox.launch import SandboxSetup
from nnlite_tui.core.convert.sandbox.sources import from_options
from nnlite_tui.core.convert.sandbox.worker import SandboxedWorker
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME, get_runtime
from nnlite_tui.core.spec import ModelSpec


@dataclass
class Converter:
    """Thread-safe front of the worker pool: each convert() call borrows one worker."""

    options: ConvertOptions = field(default_factory=ConvertOptions)
    log_dir: Path | None = None
    n_workers: int = 1

    runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)  # the run's runtimes: imported when a worker starts

    def __post_init__(self) -> None:
        if self.log_dir is not None:
            reap_orphans(self.log_dir)
        self.cache = ConversionCache(self.options.cache_dir or default_cache_dir(), self.options.cache_max_gb)
        self._idle: queue.Queue[Worker] = queue.Queue()
        self.gate = PauseGate()
        # Where model code runs (convert/sandbox): SandboxUnavailable here for "require" without it.
        self.isolation = in_effect(self.options.sandbox)
        self.sandbox: SandboxSetup | None = None
        if self.isolation.mechanism != "off":
            process_cap.sweep()  # the empty per-sandbox cgroups a killed runner left
            hidden = (self.cache.root, *([self.log_dir.parent] if self.log_dir else []))
            self.sandbox = SandboxSetup.for_run(self.isolation, from_options(self.options),
                                                self.options.calibration_dir, hidden)
        self._all = [self._worker() for _ in range(self.n_workers)]
        for w in self._all:
            self._idle.put(w)
        self._closed = False
        self._close_lock = threading.Lock()
        self._running = 0  # jobs on a worker right now (adaptive threads)
        self._running_lock = threading.Lock()

    def _worker(self) -> Worker:
        if self.sandbox is None:
            return Worker(self.options, self.log_dir, self.gate, self.runtimes)
        return SandboxedWorker(self.options, self.log_dir, self.sandbox, self.cache.root / TMP, self.gate,
                               self.runtimes)

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

    def versions_of(self, runtime: str) -> dict[str, str]:
        """The package versions a unit of `runtime` was made with (cache key, report)."""
        return get_runtime(runtime).versions()

    def key(self, spec: ModelSpec) -> str:
        return unit_key(spec, self.options)

    def convert(self, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                cancel: threading.Event | None = None) -> ConversionRecord:
        """Convert (or take from cache) one model to `dest`; returns its record."""
        if spec.precision != "fp32":  # derived from the fp32 artifact
            return derive_variant(self, spec, dest, log_path, cancel)
        job: ConversionJob = {"spec": spec.to_dict(), "runtime": spec.runtime, "nhwc": self.options.nhwc,
                              "max_params": self.options.max_params, "weights": self.options.weights,
                              "strict_weights": self.options.strict_weights,
                              "log_path": str(log_path) if log_path else None}
        return {**self.cached_job(self.key(spec), job, dest, log_path, cancel, what="conversion"), "model": spec.name}

    def cached_job(self, key: str, job: ConversionJob, dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None, what: str = "result") -> ConversionRecord:
        """A worker job whose result is cached under `key` (a conversion, or a derived precision's):
        taken from the cache, or run on a borrowed worker writing the cache's staged artifact, then
        placed at dest. Returns the result with cached and key set."""
        def run(staged: Path) -> ConversionRecord:
            worker = self._idle.get()
            threads = self._begin_job()
            try:
                result = worker.run({**job, "out_path": str(staged), "threads": threads}, cancel)
                return {**result, "sandbox": self.isolation.to_dict()}  # where its model code ran
            except RuntimeError as exc:
                return failure("crash", "WorkerStart", str(exc))
            finally:
                self._end_job()
                self._idle.put(worker)

        suffix = get_runtime(job.get("runtime") or DEFAULT_RUNTIME).suffix
        return through_cache(self.cache, key, dest, run, suffix=suffix, use_cache=self.options.use_cache,
                             log_path=log_path, what=what)

    def convert_many(self, specs: list[ModelSpec], out_dir: Path, log_dir: Path | None = None,
                     on_result: Callable[[ModelSpec, ConversionRecord], None] | None = None) -> list[ConversionRecord]:
        """Convert specs to out_dir/<name><suffix> on every worker at once; results in completion order.

        on_result runs under a lock, so it may print or count without its own. Ctrl-C in the
        calling thread kills the workers and propagates.
        """
        from nnlite_tui.core.run_dir import safe_name

        todo = list(specs)
        results: list[ConversionRecord] = []
        lock = threading.Lock()

        def work() -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    spec = todo.pop(0)
                name = safe_name(spec.name)
                result = self.convert(spec, out_dir / f"{name}{get_runtime(spec.runtime).suffix}",
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
        """End every worker now. Not asked to leave: a worker's exit unwinds torch and the converter,
        seconds of CPU that nothing needs (results and logs are written), which the end of every run
        waited for (a second per worker, then the kill anyway)."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        for w in self._all:
            w.kill()

    def pause_workers(self) -> None:
        """Stop every worker's process group (a host benchmark is about to be timed)."""
        self.gate.set(True)
        for pid in self._groups():
            signal_group(pid, signal.SIGSTOP)

    def resume_workers(self) -> None:
        for pid in self._groups():
            signal_group(pid, signal.SIGCONT)
        self.gate.set(False)

    def _groups(self) -> list[int]:
        """The workers' process groups: in the sandbox, bwrap's, which holds the worker and all it started."""
        return [w.process.pid for w in self._all if w.process is not None and w.alive]

    def busy_workers(self) -> int:
        """Workers that are up and have been handed a job since they started."""
        return sum(1 for w in self._all if w.alive and w.jobs > 0)

    def worker_pids(self) -> list[int]:
        """The worker processes (inside a sandbox too) and the job processes forked from them, e.g. to
        pin their threads."""
        import psutil

        pids = [w.worker_pid() for w in self._all if w.process is not None and w.alive]
        found: list[int] = []
        for pid in pids:
            if pid is None:
                continue
            found.append(pid)
            try:
                found += [c.pid for c in psutil.Process(pid).children(recursive=True)]
            except psutil.Error:
                continue  # it ended meanwhile
        return found

    def kill_all(self) -> None:
        """Kill every worker's process group now (operator quit / stop now).

        Only signals: the thread that owns a busy worker notices the death and reaps it, so no
        thread ever finds its worker's handles closed under it.
        """
        for w in self._all:
            proc = w.process
            if proc is not None:
                killpg(proc)

    def __enter__(self) -> "Converter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
