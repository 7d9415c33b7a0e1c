"""Measurement integrity on the host: keep conversions off the cores a host benchmark runs on.

While a host benchmark runs, every thread of every conversion worker is pinned to the other cores;
afterwards they get all cores back. Threads are pinned one by one because sched_setaffinity on a
pid changes only that pid's main thread.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any


def _pin_tree(pid: int, cpus: set[int]) -> None:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return  # the worker exited; nothing to pin
    for tid in tids:
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            continue  # a thread that ended between listing and pinning


class HostIsolation:
    def __init__(self, worker_pids: Callable[[], list[int]], threads: int, enabled: bool = True):
        self.all_cpus = sorted(os.sched_getaffinity(0))
        self.worker_pids = worker_pids
        self._lock = threading.Lock()
        n = max(1, threads)
        self.enabled = enabled and len(self.all_cpus) > n
        self.bench_cpus = self.all_cpus[-n:] if self.enabled else self.all_cpus
        self.convert_cpus = self.all_cpus[:-n] if self.enabled else self.all_cpus

    def describe(self) -> dict[str, Any]:
        if not self.enabled:
            return {"method": "none", "reason": "fewer cores than benchmark threads + 1",
                    "bench_cpus": self.bench_cpus}
        return {"method": "cpu-affinity", "bench_cpus": self.bench_cpus,
                "convert_cpus_during_benchmark": self.convert_cpus}

    @contextlib.contextmanager
    def benchmarking(self) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        with self._lock:
            for pid in self.worker_pids():
                _pin_tree(pid, set(self.convert_cpus))
            try:
                yield
            finally:
                for pid in self.worker_pids():
                    _pin_tree(pid, set(self.all_cpus))
