"""A simulated Android device that the real adb server talks to.

    from nnlite_tui.simdevice import SimDevice, SimConfig, BootTimings, FaultSpec
    with SimDevice(SimConfig(adb_server_port=port)) as sim:   # thread mode; booted on return
        print(sim.serial)                                     # emulator-<port-1>

A private adb server for it: nnlite_tui.simdevice.adb_server (the test suite's fixtures are in
tests/sim_plugin.py).
"""

from nnlite_tui.simdevice.boot import BootTimings
from nnlite_tui.simdevice.device import SimConfig, SimDevice
from nnlite_tui.simdevice.faults import FaultSpec

__all__ = ["BootTimings", "FaultSpec", "SimConfig", "SimDevice"]
