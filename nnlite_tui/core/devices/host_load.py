"""What disturbs a host measurement, sampled: CPU used by processes outside the run, load, temperature.

A host benchmark shares the machine with the run's own conversions (held or pinned by
--isolation) and with whatever else runs there; the second is what the operator cannot see from
the run's events. Each sample compares CPU time since the previous one: the whole machine's busy
time (psutil.cpu_times) less the CPU time of the run's process tree (the runner and its children,
including the children it has reaped) is the others' share.

Pure core (no Textual): the console's host card samples it every few seconds.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class HostLoad:
    cores: int
    load_1m: float
    busy_percent: float | None  # of all cores, since the previous sample (None: first sample)
    run_percent: float | None  # the run's process tree, same scale
    others_percent: float | None  # the rest: what disturbs the measurement from outside the run
    temperature_c: float | None  # the hottest readable sensor; None where none is readable


@dataclass(frozen=True)
class CpuSample:
    wall: float
    busy_s: float  # machine-wide CPU seconds not idle, all cores
    run_s: dict[int, float]  # pid -> its CPU seconds (own + reaped children)


def shares(before: CpuSample, after: CpuSample, cores: int) -> tuple[float, float, float] | None:
    """(busy, run, others) in percent of all cores between two samples; None when no time passed."""
    span = (after.wall - before.wall) * cores
    if span <= 0:
        return None
    busy = max(0.0, after.busy_s - before.busy_s) / span * 100
    run = sum(max(0.0, seconds - before.run_s.get(pid, 0.0)) for pid, seconds in after.run_s.items()) / span * 100
    run = min(run, busy)  # rounding of the two clocks apart
    return busy, run, max(0.0, busy - run)


def hottest_sensor() -> float | None:
    reader = getattr(psutil, "sensors_temperatures", None)  # absent on some platforms
    if reader is None:
        return None
    try:
        readings = [t.current for sensors in reader().values() for t in sensors if t.current]
    except (OSError, RuntimeError):
        return None
    return max(readings) if readings else None


class HostLoadSampler:
    """Samples the machine and the process tree of `run_pid` (the runner: this process for a local run)."""

    def __init__(self, run_pid: int | None = None):
        self.run_pid = run_pid if run_pid is not None else os.getpid()
        self.cores = psutil.cpu_count() or 1
        self._last: CpuSample | None = None

    def _cpu_sample(self) -> CpuSample:
        times = psutil.cpu_times()
        busy = sum(times) - times.idle - getattr(times, "iowait", 0.0)
        run: dict[int, float] = {}
        try:
            root = psutil.Process(self.run_pid)
            for proc in [root, *root.children(recursive=True)]:
                try:
                    t = proc.cpu_times()
                    run[proc.pid] = t.user + t.system + t.children_user + t.children_system
                except psutil.Error:
                    continue  # ended between the listing and the reading: its parent's reaped time has it
        except psutil.Error:
            pass  # the runner has gone: all the load is others'
        return CpuSample(time.monotonic(), busy, run)

    def sample(self) -> HostLoad:
        now = self._cpu_sample()
        split = shares(self._last, now, self.cores) if self._last is not None else None
        self._last = now
        busy, run, others = split if split is not None else (None, None, None)
        return HostLoad(self.cores, os.getloadavg()[0], busy, run, others, hottest_sensor())
