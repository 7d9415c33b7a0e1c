"""The run's queues: models waiting to convert, converted models waiting for a device, and who is in flight.

Conversions run ahead of the benchmarks through a bounded lookahead: a model holds a slot from
the start of its conversion until it is terminal (or put back), so at most `slots` converted
models wait for the devices. The pipeline's parts alone call these methods; they only move names and jobs.

Conversions are taken costliest first (convert/ranking.py), ties and unmeasured models in the
order they were queued; the user's order of the models (the console's queue) is not this one.

A device takes its jobs first come, first served, but a job may be held until a time (a unit's next
round waits ROUND_GAP_S after its last one, so that rounds are separated in time even when no other
unit is waiting for the device).
"""

from __future__ import annotations

import heapq
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TypeVar

from nnlite_tui.core.convert.ranking import UNKNOWN
from nnlite_tui.core.outcomes import BenchJob

SHARED = "*"  # the target of a model that any device may take (--distribute)
WAIT_S = 0.1  # how long next_job waits for a job before it gives the caller its turn again
T = TypeVar("T")


class WorkQueue:
    def __init__(self, serials: Iterable[str], slots: int):
        self._lock = threading.Lock()
        self._pending: Counter[str] = Counter()  # names waiting to convert (a heap entry each)
        self._heap: list[tuple[float, int, str]] = []  # (-cost, rank, name); stale entries skipped
        self._device_q: dict[str, list[tuple[float, BenchJob]]] = {s: [] for s in serials}  # (ready at, job)
        self._jobs_changed = threading.Condition(self._lock)
        self._shared_q: queue.Queue[BenchJob] = queue.Queue()
        self._slots = threading.Semaphore(max(1, slots))
        self._holding: set[str] = set()  # models holding a lookahead slot
        self._active: set[str] = set()  # models in a step right now (converting or benchmarking)
        self._open: set[str] = set()  # models not yet terminal in this run
        self._cancel: dict[str, threading.Event] = {}
        self._cost: dict[str, float] = {}  # estimated conversion cost: the costliest pending goes first
        self._rank: dict[str, int] = {}  # queueing order, for ties
        self.all_done = threading.Event()

    # ----- conversions -----
    def enqueue(self, name: str) -> None:
        with self._lock:
            self._open.add(name)
            self._cancel[name] = threading.Event()
            self._rank.setdefault(name, len(self._rank))
            self._push(name)
        self.all_done.clear()

    def set_costs(self, costs: dict[str, float]) -> None:
        with self._lock:
            for name, cost in costs.items():
                if self._cost.get(name) == cost:
                    continue
                self._cost[name] = cost
                for _ in range(self._pending[name]):  # the old entries go stale
                    heapq.heappush(self._heap, (-cost, self._rank.get(name, 0), name))

    def _push(self, name: str) -> None:
        self._pending[name] += 1
        heapq.heappush(self._heap, (-self._cost.get(name, UNKNOWN), self._rank.get(name, 0), name))

    def requeue(self, name: str) -> None:
        """Back into the conversion queue, at its cost's place (a retry after its back-off)."""
        with self._lock:
            self._push(name)

    def next_pending(self) -> str | None:
        """The pending model with the highest estimated cost (the first queued among equals)."""
        with self._lock:
            while self._heap:
                neg_cost, _, name = heapq.heappop(self._heap)
                if self._pending[name] <= 0 or -neg_cost != self._cost.get(name, UNKNOWN):
                    continue  # taken already, or its cost changed (a newer entry stands for it)
                self._pending[name] -= 1
                return name
            return None

    def take_slot(self, name: str, give_up: Callable[[], bool]) -> bool:
        """Wait for a lookahead slot for `name`; False (and no slot) if `give_up()` turns true."""
        while not self._slots.acquire(timeout=0.2):
            if give_up():
                return False
        with self._lock:
            self._holding.add(name)
        return True

    def release_slot(self, name: str) -> None:
        with self._lock:
            if name in self._holding:
                self._holding.discard(name)
                self._slots.release()

    # ----- benchmarks -----
    def put_job(self, target: str, job: BenchJob, ready_at: float | None = None) -> None:
        """Queue a job for a device (or any device: SHARED), not to be taken before `ready_at` (monotonic)."""
        if target == SHARED:
            self._shared_q.put(job)
            return
        with self._jobs_changed:
            self._device_q[target].append((ready_at or 0.0, job))
            self._jobs_changed.notify_all()

    def next_job(self, serial: str) -> BenchJob | None:
        """The device's first ready job, else a shared one; None after about WAIT_S without either."""
        deadline = time.monotonic() + WAIT_S
        with self._jobs_changed:
            while True:
                now = time.monotonic()
                jobs = self._device_q[serial]
                for i, (ready_at, job) in enumerate(jobs):
                    if ready_at <= now:
                        del jobs[i]
                        return job
                if now >= deadline:
                    break
                upcoming = min((ready_at for ready_at, _ in jobs), default=deadline)
                self._jobs_changed.wait(max(0.0, min(deadline, upcoming) - now))
        try:
            return self._shared_q.get(timeout=WAIT_S / 2)
        except queue.Empty:
            return None

    # ----- in flight, terminal -----
    def cancel_event(self, name: str) -> threading.Event:
        with self._lock:
            return self._cancel.setdefault(name, threading.Event())

    def cancel_all(self) -> None:
        with self._lock:
            events = list(self._cancel.values())
        for event in events:
            event.set()

    def started(self, name: str) -> None:
        with self._lock:
            self._active.add(name)

    def stopped(self, name: str) -> None:
        with self._lock:
            self._active.discard(name)

    def while_in_flight(self, name: str, step: Callable[[], T]) -> T:
        """`step` with `name` in flight meanwhile (what a stopped run finds in flight, it leaves as it is)."""
        self.started(name)
        try:
            return step()
        finally:
            self.stopped(name)

    def in_flight(self) -> list[str]:
        with self._lock:
            return list(self._active)

    def finish(self, name: str) -> None:
        """`name` is terminal: free its slot; when nothing is open, the run is done."""
        with self._lock:
            self._open.discard(name)
            if name in self._holding:
                self._holding.discard(name)
                self._slots.release()
            if not self._open:
                self.all_done.set()

    def open_names(self) -> list[str]:
        with self._lock:
            return sorted(self._open)

    def has_open(self) -> bool:
        with self._lock:
            return bool(self._open)
