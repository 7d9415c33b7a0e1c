"""Measurement integrity on the host: a host benchmark never shares the CPU with a conversion.

Methods (RunConfig.isolation, `nnlite run --isolation`):
  pause     (default) conversion workers are stopped (SIGSTOP) for the length of each host
            benchmark and continued (SIGCONT) after it; their timeouts do not count the pause.
            Pinning alone can leave medians far too high where virtual CPUs share more than a
            core's affinity separates: bench/isolation_check.py --isolation affinity measures it.
  affinity  every thread of every conversion worker is pinned to the cores the benchmark does not
            use while it runs (sched_setaffinity per thread: a pid's mask covers only its main thread).
  none      conversions run as they please; the report says so.
The benchmark process itself is always pinned to the last `threads` cores, so every model of a
run is measured on the same cores.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import TypedDict

METHODS = ("pause", "affinity", "none")


class _IsolationCommon(TypedDict):
    method: str
    bench_cpus: list[int]


class IsolationInfo(_IsolationCommon, total=False):
    """How a host benchmark was kept apart from the conversions (the report's `isolation`)."""

    detail: str
    convert_cpus_during_benchmark: list[int]


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
    def __init__(self, converter, threads: int, method: str = "pause"):
        if method not in METHODS:
            raise ValueError(f"isolation method {method!r} not one of {METHODS}")
        self.converter = converter
        self.method = method
        self.all_cpus = sorted(os.sched_getaffinity(0))
        self._lock = threading.Lock()
        n = max(1, threads)
        spare = len(self.all_cpus) > n
        if method == "affinity" and not spare:
            self.method = "pause"  # no core to move the conversions to
        self.bench_cpus = self.all_cpus[-n:] if spare else self.all_cpus
        self.convert_cpus = self.all_cpus[:-n] if spare else self.all_cpus

    @property
    def pins_benchmark(self) -> bool:
        return len(self.bench_cpus) < len(self.all_cpus)

    def describe(self) -> IsolationInfo:
        info: IsolationInfo = {"method": self.method, "bench_cpus": self.bench_cpus}
        if self.method == "pause":
            info["detail"] = "conversion workers stopped (SIGSTOP) during each host benchmark"
        elif self.method == "affinity":
            info["convert_cpus_during_benchmark"] = self.convert_cpus
        else:
            info["detail"] = "conversions may run beside the benchmark"
        return info

    @contextlib.contextmanager
    def benchmarking(self) -> Iterator[None]:
        if self.method == "none":
            yield
            return
        with self._lock:  # one host benchmark at a time holds the conversions back
            if self.method == "pause":
                self.converter.pause_workers()
                try:
                    yield
                finally:
                    self.converter.resume_workers()
                return
            for pid in self.converter.worker_pids():
                _pin_tree(pid, set(self.convert_cpus))
            try:
                yield
            finally:
                for pid in self.converter.worker_pids():
                    _pin_tree(pid, set(self.all_cpus))
