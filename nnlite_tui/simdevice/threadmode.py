"""SimDevice in a background thread, for synchronous tests and tools.

Every method here may be called from any thread: it hops onto the device's event loop.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice


class ThreadMode:
    """Mixed into SimDevice; relies on its serve(), loop, boot, faults and fault methods."""

    _thread: threading.Thread | None = None
    stop_reason: str | None = None  # why serving ended: stop(), the console's kill, a crash

    def start(self, wait_for: str | None = "ready", timeout: float = 30.0) -> "SimDevice":
        """Serve in a background thread; return once listening (and booted to `wait_for`)."""
        self._thread = threading.Thread(target=self._thread_main, name="nnlite-sim-device", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("simulated device did not start listening")
        if self._error is not None:
            raise self._error
        if wait_for:
            self.wait_phase(wait_for, timeout)
        return self

    def _thread_main(self) -> None:
        try:
            asyncio.run(self.serve())
        except BaseException as exc:  # reported to start()'s caller; the thread has no one else to tell
            self._error = exc
            self.stop_reason = f"crashed: {exc!r}"
            self._ready.set()

    def call(self, func, *args):
        """Run func(*args) on the device's loop and return its result (from any thread)."""
        if self._thread is None or not self._thread.is_alive() or self.loop is None or self.loop.is_closed():
            raise RuntimeError(f"simulated device {self.serial} is not running ({self.stop_reason or 'not started'})")

        async def run():
            return func(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def wait_phase(self, phase: str, timeout: float = 30.0) -> None:
        asyncio.run_coroutine_threadsafe(self.boot.wait_phase(phase), self.loop).result(timeout)

    def wait_online(self, timeout: float = 30.0) -> None:
        """Until the adb server has completed a handshake with us (so `adb devices` says device)."""
        deadline = time.monotonic() + timeout
        while not any(c.online for c in list(self.connections)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.serial} did not come online in {timeout}s")
            time.sleep(0.05)

    def drop(self, duration: float = 1.0) -> None:
        self.call(self.drop_now, duration)

    def go_offline(self, duration: float = 5.0) -> None:
        self.call(self.offline_now, duration)

    def reboot(self) -> None:
        self.call(self.reboot_now)

    def hang_shell(self, prefix: str) -> None:
        self.call(self.faults.hang_shell, prefix)

    def fail_installs(self, code: str | None) -> None:
        self.call(setattr, self.faults, "install_fail", code)

    def crash_app(self, times: int = 1) -> None:
        self.call(setattr, self.faults, "app_crashes", times)

    def truncate_reports(self, times: int = 1) -> None:
        self.call(setattr, self.faults, "truncated_reports", times)

    def clear_faults(self) -> None:
        self.call(self.faults.clear)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and remove the temp sandbox (also for a device that was never started)."""
        if self.loop is not None and self._stop is not None and self._thread is not None:
            if self._thread.is_alive():
                self.stop_reason = self.stop_reason or "stopped by stop()"
                self.loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout)
        elif self._thread is None and self._own_root:
            shutil.rmtree(self.fs.root, ignore_errors=True)

    def __enter__(self) -> "SimDevice":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
