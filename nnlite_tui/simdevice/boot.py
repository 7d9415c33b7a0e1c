"""Boot phases, in the order a real emulator goes through them:

  absent    not registered with the adb server; connections are refused
  offline   the server is connected but the device withholds CNXN (`adb devices` says offline)
  booting   `device`, but sys.boot_completed is empty
  booted    sys.boot_completed=1, the package manager not answering yet
  ready     the package manager answers (pm/cmd package work)
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

PHASES = ("absent", "offline", "booting", "booted", "ready")


@dataclass(frozen=True)
class BootTimings:
    absent: float = 0.0
    offline: float = 0.0
    booting: float = 0.0
    pm_delay: float = 0.0

    @classmethod
    def total(cls, seconds: float) -> "BootTimings":
        """Split a total boot time the way an emulator roughly spends it."""
        return cls(absent=0.1 * seconds, offline=0.2 * seconds, booting=0.55 * seconds, pm_delay=0.15 * seconds)


class Boot:
    def __init__(self, timings: BootTimings):
        self.timings = timings
        self.phase = "absent"
        self.changed_at = time.monotonic()
        self._cnxn_allowed = asyncio.Event()
        self._phase_changed = asyncio.Event()
        self.held_offline_until = 0.0  # fault: withhold CNXN until then even when booted

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.changed_at = time.monotonic()
        self.update_gate()
        self._phase_changed.set()
        self._phase_changed = asyncio.Event()

    def update_gate(self) -> None:
        online = PHASES.index(self.phase) >= PHASES.index("booting") and time.monotonic() >= self.held_offline_until
        if online:
            self._cnxn_allowed.set()
        else:
            self._cnxn_allowed.clear()

    async def wait_cnxn_allowed(self) -> None:
        await self._cnxn_allowed.wait()

    def at_least(self, phase: str) -> bool:
        return PHASES.index(self.phase) >= PHASES.index(phase)

    async def wait_phase(self, phase: str) -> None:
        while not self.at_least(phase):
            await self._phase_changed.wait()

    async def run(self, on_phase) -> None:
        """Go through the phases; `on_phase(phase)` runs at each change (props, registration)."""
        for phase, delay in (("absent", self.timings.absent), ("offline", self.timings.offline),
                             ("booting", self.timings.booting), ("booted", self.timings.pm_delay)):
            self.set_phase(phase)
            on_phase(phase)
            await asyncio.sleep(delay)
        self.set_phase("ready")
        on_phase("ready")
