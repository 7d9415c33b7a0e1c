#!/usr/bin/env python3
"""nnlite vs the naive sequential reference, on the same models with the same benchmark settings.

    .venv/bin/python bench/pipeline_vs_naive.py MODELS [--rounds 1] [--runs 50] [--min-seconds 1]
                                                [--warmup 5] [--limit N] [-- extra nnlite run args]

Alternates naive and nnlite runs (naive first), each from a cold start (fresh process, empty
conversion cache), and prints both wall times, models/hour and the ratio nnlite/naive.
Extra arguments after `--` go to `nnlite run`.

With `--sim`, both sides benchmark on a simulated adb device (`nnlite sim-device`, started here on a
private adb server and stopped at the end): the naive side converts and benchmarks one model after
the other on it, nnlite overlaps conversion with the device's benchmarks.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if out.returncode != 0:
        sys.stderr.write(out.stdout[-2000:] + out.stderr[-2000:])
        raise SystemExit(f"command failed ({out.returncode}): {' '.join(cmd)}")
    return wall, out.stdout


def main() -> int:
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--sim", action="store_true", help="benchmark on a simulated adb device")
    args = ap.parse_args(argv)
    if args.sim:
        return with_simulator(args, extra)
    return compare(args, extra, naive_extra=[], env_extra={})


def with_simulator(args, extra: list[str]) -> int:
    from nnlite_tui.simdevice.apk import build_test_apk
    from nnlite_tui.simdevice.adb_server import free_port, start_adb_server

    server = start_adb_server()
    sim = None
    try:
        os.environ.update(server.env)
        port = free_port()
        sim = subprocess.Popen([sys.executable, "-m", "nnlite_tui", "sim-device", "--port", str(port),
                                "--boot-seconds", "1"], env={**os.environ, **server.env},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        serial = f"emulator-{port - 1}"
        server.wait_state(serial, "device", timeout=60)
        apk = build_test_apk(tempfile.mktemp(suffix=".apk"))
        print(f"simulated device {serial} on adb server port {server.env['ANDROID_ADB_SERVER_PORT']}", flush=True)
        return compare(args, [*extra, "--device", serial, "--apk", apk], naive_extra=["--adb", serial, "--apk", apk],
                       env_extra=server.env)
    finally:
        if sim is not None:
            sim.terminate()
            sim.wait(10)
        server.kill()


def compare(args, extra: list[str], naive_extra: list[str], env_extra: dict[str, str]) -> int:
    bench = ["--runs", str(args.runs), "--min-seconds", str(args.min_seconds), "--warmup", str(args.warmup)]
    limit = ["--limit", str(args.limit)] if args.limit else []
    naive_w, ours_w = [], []
    n_models = None
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="nnlite-vs-naive-") as tmp:
            env = {**os.environ, **env_extra, "NNLITE_CACHE_DIR": str(Path(tmp) / "cache")}
            wall, out = timed([sys.executable, str(ROOT / "bench" / "naive_reference.py"), str(Path(tmp) / "naive"),
                               *args.models, *bench, *limit, *naive_extra], env)
            n_models = sum(1 for line in out.splitlines() if line.startswith(("ok ", "failed ")))
            naive_w.append(wall)
            print(f"round {r + 1}: naive  {wall:8.1f} s  ({out.strip().splitlines()[-1]})", flush=True)
            wall, out = timed([sys.executable, "-m", "nnlite_tui", "run", *args.models, "--out", str(Path(tmp) / "run"),
                               "--headless", *bench, *limit, *extra], env)
            ours_w.append(wall)
            totals = next((line for line in out.splitlines() if line.startswith("totals:")), "")
            print(f"round {r + 1}: nnlite {wall:8.1f} s  ({totals})", flush=True)
    naive, ours = statistics.median(naive_w), statistics.median(ours_w)
    print(f"\nmodels          {n_models}")
    print(f"naive  wall     {naive:.1f} s   {n_models / naive * 3600:.0f} models/hour")
    print(f"nnlite wall     {ours:.1f} s   {n_models / ours * 3600:.0f} models/hour")
    print(f"ratio           {ours / naive:.2f}x  (nnlite / naive; lower is better)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
