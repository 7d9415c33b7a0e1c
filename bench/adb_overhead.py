"""What one adb benchmark costs beyond the timed work: push, `am start`, polling, pull, clean-up,
and the two analytics snapshots the pipeline takes around it, on N simulated devices in parallel
(one thread per device, as the pipeline runs them) through a private adb server.

    .venv/bin/python bench/adb_overhead.py [--devices 2] [--models 10] [--tflite PATH]

Prints per device the median wall time of benchmark() and of snapshot(), minus the app's timed
work, and exits 1 if the median overhead of one benchmark exceeds --max-overhead seconds (2.0).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--tflite", help="model to benchmark (default: convert a tiny conv with litert_torch)")
    ap.add_argument("--max-overhead", type=float, default=2.0)
    args = ap.parse_args()

    from nnlite_tui.simdevice.adb_server import ADB_ENV, TINY_MODEL, start_adb_server

    server = start_adb_server()
    os.environ.update({**ADB_ENV, "ANDROID_ADB_SERVER_PORT": str(server.port), "ADBUTILS_ADB_PATH": server.adb})
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.devices.adb import AdbDevice
    from nnlite_tui.core.events import RecordingReporter
    from nnlite_tui.simdevice import SimConfig, SimDevice
    from nnlite_tui.simdevice.apk import build_test_apk

    tmp = Path(tempfile.mkdtemp(prefix="nnlite-adb-bench-"))
    os.environ["NNLITE_APK"] = build_test_apk(str(tmp / "bench.apk"))
    tflite = args.tflite
    if tflite is None:
        import subprocess

        tflite = str(tmp / "tiny.tflite")
        subprocess.run([sys.executable, "-c", TINY_MODEL, tflite], check=True, capture_output=True, timeout=300)
    sims = [SimDevice(SimConfig(adb_server_port=server.port)).start() for _ in range(args.devices)]
    settings = BenchSettings(warmup=1, runs=10, min_seconds=0.0)
    rows: dict[str, dict[str, list[float]]] = {}
    try:
        for sim in sims:
            server.wait_state(sim.serial, "device")
        devices = [AdbDevice(sim.serial) for sim in sims]
        for d in devices:
            d.prepare(RecordingReporter())

        def work(device: AdbDevice) -> None:
            r = rows.setdefault(device.serial, {"benchmark": [], "overhead": [], "snapshot": []})
            for i in range(args.models):
                t0 = time.perf_counter()
                device.snapshot()
                r["snapshot"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                result = device.benchmark(tflite, settings, f"bench{i}")
                wall = time.perf_counter() - t0
                r["benchmark"].append(wall)
                r["overhead"].append(wall - result["timed_seconds"])

        threads = [threading.Thread(target=work, args=(d,)) for d in devices]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for sim in sims:
            sim.stop()
        server.kill()
    worst = 0.0
    for serial, r in rows.items():
        med = {k: statistics.median(v) for k, v in r.items()}
        worst = max(worst, med["overhead"])
        print(f"{serial}: benchmark {med['benchmark']:.3f} s, overhead {med['overhead']:.3f} s, "
              f"snapshot {med['snapshot'] * 1000:.1f} ms (median of {args.models})")
    ok = worst <= args.max_overhead
    print(f"median overhead {worst:.3f} s per benchmark {'<=' if ok else '>'} {args.max_overhead} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
