"""A hand-made /sys/class/powercap for the host's RAPL energy (core/devices/host_energy.py): a package
zone (plus a subzone and a psys zone that must not be counted) and a thread that advances its
energy_uj as a meter would, wrapping past max_energy_range_uj."""

from __future__ import annotations

import threading
import time
from pathlib import Path


def powercap_tree(root: Path, max_range: int) -> Path:
    zone = root / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text(f"{max_range}\n")
    (zone / "energy_uj").write_text("0\n")
    sub = root / "intel-rapl:0:0"  # a subzone (core): part of the package, never counted on its own
    sub.mkdir()
    (sub / "name").write_text("core\n")
    (sub / "energy_uj").write_text("0\n")
    psys = root / "intel-rapl:1"  # psys includes the package: not counted either
    psys.mkdir()
    (psys / "name").write_text("psys\n")
    (psys / "energy_uj").write_text("0\n")
    (psys / "max_energy_range_uj").write_text("1000\n")
    return zone / "energy_uj"


class Meter(threading.Thread):
    """A RAPL counter advanced every millisecond at `idle_w`, or `busy_w` while `busy` is set, wrapping
    past `max_range` as the kernel's does."""

    def __init__(self, path: Path, max_range: int, idle_w: float, busy_w: float):
        super().__init__(daemon=True)
        self.path, self.max_range, self.idle_w, self.busy_w = path, max_range, idle_w, busy_w
        self.busy, self.stop, self.wraps = threading.Event(), threading.Event(), 0

    def run(self):
        total, last = 0.0, time.monotonic()
        while not self.stop.is_set():
            time.sleep(0.001)
            now = time.monotonic()
            total += (self.busy_w if self.busy.is_set() else self.idle_w) * 1e6 * (now - last)  # W*s -> µJ
            last = now
            value = int(total)
            if value > self.max_range:
                total -= self.max_range
                value -= self.max_range
                self.wraps += 1
            tmp = self.path.with_name("energy_uj.tmp")
            tmp.write_text(f"{value}\n")
            tmp.replace(self.path)
