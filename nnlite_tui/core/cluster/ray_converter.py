"""RayConverter: the Converter's interface, with the conversions done by actors across the cluster.

The driver consults the conversion cache before any work leaves it, and stores what comes back,
so a resumed or repeated run converts nothing twice wherever it ran. A derived precision
(`model@int8`) goes as locally: its fp32 conversion through this converter (the driver's cache or an
actor), then the derivation on an actor, which gets the fp32 artifact with the job and keys nothing
differently, so local and cluster runs share the cache. A conversion whose actor or
node died is a transient failure of that model (stage "crash"): the Runner retries it, and a new
actor is placed wherever Ray finds a CPU.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
import ray

from nnlite_tui.core.cluster import transfer
from nnlite_tui.core.cluster.convert_actor import ConvertActor
from nnlite_tui.core.cluster.session import node_name
from nnlite_tui.core.convert import intake, messages, wire
from nnlite_tui.core.convert.cache import ConversionCache, default_cache_dir
from nnlite_tui.core.convert.cached_job import through_cache
from nnlite_tui.core.convert.derive import derive_variant, unit_key
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.pool import failure
from nnlite_tui.core.convert.record import ConversionJob, ConversionRecord
from nnlite_tui.core.runtimes import get_runtime
from nnlite_tui.core.spec import ModelSpec

POLL_S = 0.2
CALL_TIMEOUT_S = 10.0
PLACE_TIMEOUT_S = 60.0  # an actor Ray cannot place (no CPU left after a node died) is retired


class _Slot:
    """One conversion actor; replaced when it dies."""

    def __init__(self, options: ConvertOptions):
        self.options = options
        self._start()

    def _start(self) -> None:
        # A class that ray.remote decorates is an ActorClass; mypy keeps the class's own type.
        self.actor = ConvertActor.remote(self.options)  # type: ignore[attr-defined]
        self.placed = self.actor.where.remote()
        self.node_id: str | None = None

    def wait_placed(self, timeout_s: float, give_up: threading.Event) -> bool:
        """Whether the actor is up on some node (False: Ray found no place for it in time)."""
        waited = 0.0
        while not ray.wait([self.placed], timeout=POLL_S)[0]:
            waited += POLL_S
            if waited > timeout_s or give_up.is_set():
                return False
        try:
            self.node_id = ray.get(self.placed)["node_id"]
        except ray.exceptions.RayError:
            return False
        return True

    def kill(self) -> None:
        try:
            ray.kill(self.actor)
        except ray.exceptions.RayError:
            pass  # already dead with its node: nothing to kill

    def renew(self) -> None:
        self.kill()
        self._start()


class RayConverter:
    def __init__(self, options: ConvertOptions, n_workers: int, log_dir: Path | None = None):
        self.options = options
        self.n_workers = n_workers
        self.log_dir = log_dir
        self.cache = ConversionCache(options.cache_dir or default_cache_dir(), options.cache_max_gb)
        self._slots = [_Slot(options) for _ in range(n_workers)]
        self._idle: queue.Queue[_Slot] = queue.Queue()
        for slot in self._slots:
            self._idle.put(slot)
        self._live = len(self._slots)
        self._closed = False
        self._abandon = threading.Event()  # stop-now or close: every wait ends at once
        self.driver_node = ray.get_runtime_context().get_node_id()

    def key(self, spec: ModelSpec) -> str:
        return unit_key(spec, self.options)

    def versions_of(self, runtime: str) -> dict[str, str]:
        return get_runtime(runtime).versions()

    def prestart(self) -> None:
        for slot in self._slots:
            slot.actor.prestart.remote()

    def convert(self, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                cancel: threading.Event | None = None) -> ConversionRecord:
        if spec.precision != "fp32":  # fp32 through this converter (cache or actor), then cached_job
            return derive_variant(self, spec, dest, log_path, cancel)
        result = self._cached_remote(self.key(spec), get_runtime(spec.runtime).suffix, dest, log_path, cancel,
                                     lambda actor: actor.convert.remote(spec.to_dict()), "conversion")
        return {**result, "model": spec.name}

    def cached_job(self, key: str, job: ConversionJob, dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None) -> ConversionRecord:
        """A derivation job (convert.derive.derive_variant): from the driver's cache, or run by an actor
        that gets the fp32 artifact in pieces with the job, so it need not convert fp32 again."""
        pieces: list = []

        def call(actor):
            if not pieces:  # only on a cache miss, and once across retries on a renewed actor
                pieces.extend(transfer.put_file(job["fp32_path"]))
            return actor.run_job.remote(key, job, pieces)

        return self._cached_remote(key, get_runtime(job["runtime"]).suffix, dest, log_path, cancel, call, "result")

    def _cached_remote(self, key: str, suffix: str, dest: Path, log_path: Path | None,
                       cancel: threading.Event | None, call, what: str) -> ConversionRecord:
        def run(staged: Path) -> ConversionRecord:
            slot = self._placed_slot()
            if slot is None:
                return failure("crash", "NoConversionActor", "no conversion actor could be placed on the cluster")
            try:
                return self._remote(slot, call, staged, log_path, cancel)
            finally:
                self._idle.put(slot)

        return through_cache(self.cache, key, dest, run, suffix=suffix, use_cache=self.options.use_cache,
                             log_path=log_path, what=what)

    def _placed_slot(self) -> _Slot | None:
        """An idle slot whose actor is placed; slots Ray cannot place are retired, not waited on."""
        while self._live > 0 and not self._abandon.is_set():
            try:
                slot = self._idle.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if slot.node_id is not None or slot.wait_placed(PLACE_TIMEOUT_S, self._abandon):
                return slot
            slot.kill()
            self._live -= 1
        return None

    def _remote(self, slot: _Slot, call, out: Path, log_path: Path | None,
                cancel: threading.Event | None) -> ConversionRecord:
        ref = call(slot.actor)
        cancelled = False
        try:
            while not ray.wait([ref], timeout=POLL_S)[0]:
                if cancel is not None and cancel.is_set() and not cancelled:
                    slot.actor.cancel.remote()
                    cancelled = True
                if self._abandon.is_set():
                    return failure("cancelled", "Cancelled", "conversion abandoned: the run is stopping")
            text, chunks, log_text = ray.get(ref)
            _log(log_path, str(log_text))
            try:
                result = messages.actor_result(wire.decode(str(text).encode()))
            except wire.ProtocolError as exc:
                return messages.violation(str(exc))
            if result.get("ok"):
                out.parent.mkdir(parents=True, exist_ok=True)
                transfer.write_file(chunks, out)
                try:
                    taken = intake.hash_in_place(out)
                except intake.Refused as exc:
                    return intake.refused_result(str(exc))
                result.update({"artifact_path": str(out), "artifact_bytes": taken.bytes, "artifact_sha256": taken.sha256})
            return result
        except ray.exceptions.RayError as exc:
            # The actor, its node or the objects it owned are gone: a fault of the machine.
            _log(log_path, f"[nnlite] conversion actor lost: {type(exc).__name__}: {str(exc)[:500]}\n")
            if not self._abandon.is_set():
                slot.renew()
            return failure("crash", "NodeLost", f"conversion actor or its node was lost ({type(exc).__name__})")

    # ----- the Converter's housekeeping -----
    def _local_actors(self) -> list:
        """Actors on the driver's node: the ones whose CPU a host benchmark shares."""
        for slot in self._slots:
            if slot.node_id is None:
                slot.wait_placed(0, self._abandon)  # not up yet: not converting next to the benchmark either
        return [s.actor for s in self._slots if s.node_id == self.driver_node]

    def pause_workers(self) -> None:
        _wait_all([a.pause.remote() for a in self._local_actors()])

    def resume_workers(self) -> None:
        _wait_all([a.resume.remote() for a in self._local_actors()])

    def worker_pids(self) -> list[int]:
        return []  # remote processes: pausing goes through the actors, pinning does not apply

    def busy_workers(self) -> int:
        return self.n_workers - self._idle.qsize()

    def kill_all(self) -> None:
        self._abandon.set()
        for slot in self._slots:
            slot.actor.kill_all.remote()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._abandon.set()
        _wait_all([s.actor.close.remote() for s in self._slots])
        for slot in self._slots:
            try:
                ray.kill(slot.actor)
            except ray.exceptions.RayError:
                pass  # gone with its node

    def describe(self) -> str:
        return f"{self.n_workers} conversion actor(s) on the Ray cluster (driver on {node_name()})"


def _wait_all(refs: list) -> None:
    try:
        ray.wait(refs, num_returns=len(refs), timeout=CALL_TIMEOUT_S)
    except ray.exceptions.RayError:
        pass  # an actor that died meanwhile has no worker left to pause or close


def _log(log_path: Path | None, text: str) -> None:
    if log_path and text:
        with open(log_path, "a") as f:
            f.write(text)
