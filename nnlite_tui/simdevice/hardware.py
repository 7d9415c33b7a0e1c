"""Live text of /proc/meminfo, /proc/cpuinfo, thermal zones, cpufreq and `dumpsys battery`.

Formats follow real Android kernels and services. Values move a little with load: while the
simulated app benchmarks, CPUs run at their top frequency, zones warm up and free memory drops.
With the `throttle_after` fault a launch that has run long enough throttles: zones 30 C hotter,
clocks halved, PowerManager's thermal status SEVERE (what the simulated app reports).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from nnlite_tui.simdevice.battery import BatterySpec
from nnlite_tui.simdevice.fs import DeviceFS
from nnlite_tui.simdevice.profiles import Profile

ARM_FEATURES = ("fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
                "lrcpc dcpop asimddp")
X86_FLAGS = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx "
             "fxsr sse sse2 ht syscall nx rdtscp lm constant_tsc rep_good nopl xtopology cpuid pni "
             "pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand "
             "hypervisor lahf_lm abm 3dnowprefetch avx2 bmi1 bmi2")


class Hardware:
    # PowerManager.THERMAL_STATUS_NONE / _SEVERE, and getThermalHeadroom's value at SEVERE
    STATUS_NONE, STATUS_SEVERE = 0, 3

    def __init__(self, profile: Profile, busy: Callable[[], bool],
                 busy_for: Callable[[], float | None] = lambda: None,
                 throttle_after: Callable[[], float | None] = lambda: None,
                 battery: BatterySpec | None = None):
        self.profile = profile
        self.battery_spec = battery or BatterySpec()
        self.busy = busy
        self.busy_for = busy_for  # seconds the current benchmark launch has run, None when idle
        self.throttle_after = throttle_after
        self.booted_at = time.monotonic()
        self._heat = 0.0  # degrees above idle, follows load with a time constant
        self._heat_at = time.monotonic()

    def heat(self) -> float:
        now = time.monotonic()
        dt, self._heat_at = now - self._heat_at, now
        target = 9.0 if self.busy() else 0.0
        self._heat += (target - self._heat) * min(1.0, dt / 20.0)
        return self._heat

    def throttled(self) -> bool:
        after, running = self.throttle_after(), self.busy_for()
        return after is not None and running is not None and running >= after

    def thermal_status(self) -> int:
        return self.STATUS_SEVERE if self.throttled() else self.STATUS_NONE

    def thermal_headroom(self) -> float:
        """Like getThermalHeadroom(0): a fraction of the way to SEVERE (1.0), from the zones' heat."""
        return 1.15 if self.throttled() else round(0.3 + self.heat() / 30, 3)

    def battery_temperature_c(self) -> float:
        return (250 + int(self.heat() * 10)) / 10

    def meminfo(self) -> bytes:
        total = self.profile.mem_total_kb
        used = int(total * (0.55 if self.busy() else 0.48))
        free = int(total * 0.12) - (150_000 if self.busy() else 0)
        cached = total - used - free - 60_000
        avail = free + cached // 2
        rows = [("MemTotal", total), ("MemFree", free), ("MemAvailable", avail), ("Buffers", 4_812),
                ("Cached", cached), ("SwapCached", 0), ("Active", used // 2), ("Inactive", cached // 2),
                ("Active(anon)", used // 3), ("Inactive(anon)", 18_000), ("Active(file)", used // 6),
                ("Inactive(file)", cached // 2), ("Unevictable", 3_460), ("Mlocked", 3_460),
                ("SwapTotal", total // 2), ("SwapFree", total // 2), ("Dirty", 120), ("Writeback", 0),
                ("AnonPages", used // 3), ("Mapped", 310_000), ("Shmem", 9_000),
                ("KReclaimable", 50_000), ("Slab", 120_000), ("SReclaimable", 50_000),
                ("SUnreclaim", 70_000), ("KernelStack", 18_000), ("PageTables", 40_000),
                ("CommitLimit", total), ("Committed_AS", total * 3), ("VmallocTotal", 263_061_440),
                ("VmallocUsed", 30_000), ("VmallocChunk", 0)]
        return "".join(f"{k + ':':<16}{v:>8} kB\n" for k, v in rows).encode()

    def cpuinfo(self) -> bytes:
        if self.profile.arch == "arm64":
            blocks = [f"processor\t: {i}\nBogoMIPS\t: 38.40\nFeatures\t: {ARM_FEATURES}\n"
                      f"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\n"
                      f"CPU part\t: {'0xd05' if i < 2 else '0xd0d'}\nCPU revision\t: 0\n"
                      for i in range(self.profile.cores)]
            return ("\n".join(blocks) + f"\nHardware\t: {self.profile.props['ro.hardware']}\n").encode()
        mhz = self.profile.max_freq_khz[0] / 1000
        blocks = [f"processor\t: {i}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
                  f"model name\t: Intel(R) Xeon(R) CPU @ {mhz / 1000:.2f}GHz\nstepping\t: 7\n"
                  f"microcode\t: 0x1\ncpu MHz\t\t: {mhz:.3f}\ncache size\t: 39424 KB\nphysical id\t: 0\n"
                  f"siblings\t: {self.profile.cores}\ncore id\t\t: {i}\ncpu cores\t: {self.profile.cores}\n"
                  f"fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 13\nwp\t\t: yes\n"
                  f"flags\t\t: {X86_FLAGS}\nbogomips\t: {2 * mhz:.2f}\nclflush size\t: 64\n"
                  f"cache_alignment\t: 64\naddress sizes\t: 46 bits physical, 48 bits virtual\n"
                  f"power management:\n" for i in range(self.profile.cores)]
        return "\n".join(blocks).encode() + b"\n"

    def loadavg(self) -> bytes:
        one = 0.4 + (1.0 if self.busy() else 0.0) + self.heat() / 20
        return f"{one:.2f} {one * 0.9:.2f} {one * 0.8:.2f} 2/1342 5678\n".encode()

    def zone_temp(self, idle_milli: int) -> bytes:
        hot = 30_000 if self.throttled() else 0
        return f"{idle_milli + int(self.heat() * 1000) + hot}\n".encode()

    def cur_freq(self, cpu: int) -> bytes:
        top = self.profile.max_freq_khz[cpu % len(self.profile.max_freq_khz)]
        if self.throttled():
            top //= 2
        return f"{top if self.busy() else top // 3}\n".encode()

    def battery(self) -> str:
        """`dumpsys battery`: the simulated battery's plug state, level and voltage (battery.py)."""
        temp = int(round(self.battery_temperature_c() * 10))
        b = self.battery_spec
        charge = int(b.capacity_mah * 10 * b.level)
        return ("Current Battery Service state:\n  AC powered: false\n"
                f"  USB powered: {'true' if b.charging else 'false'}\n"
                "  Wireless powered: false\n  Dock powered: false\n  Max charging current: 500000\n"
                f"  Max charging voltage: 5000000\n  Charge counter: {charge}\n  status: {3 - int(b.charging)}\n"
                f"  health: 2\n  present: true\n  level: {b.level}\n  scale: 100\n  voltage: {b.voltage_mv}\n"
                f"  temperature: {temp}\n  technology: Li-ion\n")

    def install(self, fs: DeviceFS) -> None:
        fs.add_generated("/proc/meminfo", self.meminfo)
        fs.add_generated("/proc/cpuinfo", self.cpuinfo)
        fs.add_generated("/proc/version", lambda: b"Linux version 6.1.23-android14-4-00257-g7e35917775b8"
                                                  b" (build-user@build-host) #1 SMP PREEMPT\n")
        fs.add_generated("/proc/loadavg", self.loadavg)
        fs.add_generated("/proc/uptime", lambda: f"{time.monotonic() - self.booted_at:.2f} 0.00\n".encode())
        for i, (kind, idle) in enumerate(self.profile.thermal_zones):
            base = f"/sys/class/thermal/thermal_zone{i}"
            fs.add_generated(f"{base}/type", lambda kind=kind: f"{kind}\n".encode())
            fs.add_generated(f"{base}/temp", lambda idle=idle: self.zone_temp(idle))
        for cpu in range(self.profile.cores):
            base = f"/sys/devices/system/cpu/cpu{cpu}/cpufreq"
            top = self.profile.max_freq_khz[cpu % len(self.profile.max_freq_khz)]
            fs.add_generated(f"{base}/scaling_cur_freq", lambda cpu=cpu: self.cur_freq(cpu))
            fs.add_generated(f"{base}/cpuinfo_max_freq", lambda top=top: f"{top}\n".encode())
            fs.add_generated(f"{base}/cpuinfo_min_freq", lambda top=top: f"{top // 4}\n".encode())
            fs.add_generated(f"{base}/scaling_governor", lambda: b"schedutil\n")
        fs.add_generated("/sys/devices/system/cpu/online", lambda: f"0-{self.profile.cores - 1}\n".encode())
