#!/usr/bin/env python3
"""nnlite vs the naive sequential reference, on the same models with the same benchmark settings.

    .venv/bin/python bench/pipeline_vs_naive.py MODELS [--rounds 1] [--skip N] [--limit N] [--include GLOB]
                                                [--runs 50] [--min-seconds 0] [--warmup 5] [--warmup-seconds 0]
                                                [--default-timing] [--sim] [--naive-without-rewrites] [--keep DIR]
                                                [-- extra nnlite run args]

Runs naive and nnlite in turn (naive first, then alternating over --rounds), each from a cold start (fresh process, empty
conversion cache), and prints both wall times, models/hour, the ratio nnlite/naive and each side's
timeline (bench/run_timeline.py): conversion seconds and their efficiency vs the naive's, benchmark
seconds, the pause of the conversions per host benchmark, the tail after the last conversion.

Models: the sources' models in discovery order, after `--include` globs, minus the first `--skip`,
at most `--limit`; both sides get exactly these. Use `--skip` to measure on models not used while tuning.

Timing: by default both sides do the same measurement, 50 timed runs after 5 warm-up runs, no time
floor (nnlite with `--rounds 1`: one process per model, as the naive script). `--default-timing`:
nnlite with its own defaults (three rounds in fresh benchmark processes sharing >= 1 s timed and
>= 0.5 s warm-up) against a naive script doing >= 1 s / >= 0.5 s in one process.
Extra arguments after `--` go to `nnlite run`.

Same work on both sides: the naive script exports under nnlite's exact rewrites, so it converts the
models nnlite converts (`--naive-without-rewrites`: the plain export, which fails on adaptive max
pooling and the like; the ratio then counts nnlite's extra conversions against it). With two rounds
or more, the order alternates (naive, nnlite, nnlite, naive, ...) so the machine's drift weighs on
both sides alike; the figures are the medians over rounds.

With `--sim`, both sides benchmark on a simulated adb device (`nnlite sim-device`, started here on a
private adb server and stopped at the end): the naive side converts and benchmarks one model after
the other on it, nnlite overlaps conversion with the device's benchmarks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from run_timeline import Timeline, from_naive, from_run  # noqa: E402

DEFAULTS = {"runs": 50, "min_seconds": 1.0, "warmup": 5, "warmup_seconds": 0.5}  # nnlite run's


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
    ap.add_argument("--min-seconds", type=float, default=0.0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--warmup-seconds", type=float, default=0.0)
    ap.add_argument("--default-timing", action="store_true",
                    help="nnlite with its default timing vs a naive script doing the same timing")
    ap.add_argument("--include", action="append", default=[], help="only models matching this glob")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first N models (those tuned on)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--keep", type=Path, help="keep both sides' output in this directory")
    ap.add_argument("--sim", action="store_true", help="benchmark on a simulated adb device")
    ap.add_argument("--naive-without-rewrites", action="store_true",
                    help="the naive script exports the plain way (fails where nnlite rewrites an op)")
    args = ap.parse_args(argv)
    if args.sim:
        return with_simulator(args, extra)
    return compare(args, extra, naive_extra=[], env_extra={})


def chosen_models(args) -> list[str]:
    from nnlite_tui.core.sources.discover import discover

    names = [s.name for s in discover(args.models, include=args.include)][args.skip:]
    return names[:args.limit] if args.limit else names


def _glob_exact(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]" else c for c in name)


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
    names = chosen_models(args)
    if not names:
        raise SystemExit("no models chosen")
    pick = [arg for name in names for arg in ("--include", _glob_exact(name))]
    if args.default_timing:
        naive_bench = [f"--{k.replace('_', '-')}={v}" for k, v in DEFAULTS.items()]
        ours_bench: list[str] = []
    else:
        naive_bench = ["--runs", str(args.runs), "--min-seconds", str(args.min_seconds),
                       "--warmup", str(args.warmup), "--warmup-seconds", str(args.warmup_seconds)]
        ours_bench = [*naive_bench, "--rounds", "1"]  # the same measurement: one process per model
    print(f"{len(names)} models: {names[0]} .. {names[-1]} (skipped the first {args.skip}); timing "
          f"{'nnlite defaults vs the same in the naive script' if args.default_timing else ' '.join(ours_bench)}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    naive_w, ours_w = [], []
    n_models = None
    if args.naive_without_rewrites:
        naive_extra = [*naive_extra, "--no-rewrites"]
    for r in range(args.rounds):
        tmp = tempfile.mkdtemp(prefix="nnlite-vs-naive-", dir=args.keep)
        try:
            env = {**os.environ, **env_extra}

            def run_naive() -> Timeline:
                nonlocal n_models
                wall, out = timed([sys.executable, str(ROOT / "bench" / "naive_reference.py"),
                                   str(Path(tmp) / "naive"), *args.models, *naive_bench, *pick, *naive_extra],
                                  {**env, "NNLITE_CACHE_DIR": str(Path(tmp) / "cache")})
                n_models = sum(1 for line in out.splitlines() if line.startswith(("ok ", "failed ")))
                naive_w.append(wall)
                print(f"round {r + 1}: naive  {wall:8.1f} s  ({out.strip().splitlines()[-1]})", flush=True)
                for line in out.splitlines():
                    if line.startswith("failed "):
                        print(f"  naive {line}", flush=True)
                return from_naive(out, wall)

            def run_ours() -> Timeline:
                wall, out = timed([sys.executable, "-m", "nnlite_tui", "run", *args.models, "--out",
                                   str(Path(tmp) / "run"), "--headless", *ours_bench, *pick, *extra],
                                  {**env, "NNLITE_CACHE_DIR": str(Path(tmp) / "cache-nnlite")})
                ours_w.append(wall)
                totals = next((line for line in out.splitlines() if line.startswith("totals:")), "")
                print(f"round {r + 1}: nnlite {wall:8.1f} s  ({totals})", flush=True)
                return from_run(Path(tmp) / "run")

            # naive, nnlite, nnlite, naive, ...: a drift over the rounds weighs on both sides alike.
            if r % 2 == 0:
                naive = run_naive()
                ours = run_ours()
            else:
                ours = run_ours()
                naive = run_naive()
            print_timelines(naive, ours, load=os.getloadavg()[0])
        finally:
            if args.keep is None:
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                print(f"kept in {tmp}")
    naive_s, ours_s = statistics.median(naive_w), statistics.median(ours_w)
    print(f"\nmodels          {n_models} (rounds {args.rounds})")
    print(f"naive  wall     {naive_s:.1f} s   {n_models / naive_s * 3600:.0f} models/hour")
    print(f"nnlite wall     {ours_s:.1f} s   {n_models / ours_s * 3600:.0f} models/hour")
    print(f"ratio           {ours_s / naive_s:.2f}x  (nnlite / naive; lower is better)")
    return 0


def print_timelines(naive: Timeline, ours: Timeline, load: float) -> None:
    print("  " + naive.line("naive"))
    print("  " + ours.line("nnlite", naive))
    cost = ours.host_cost()
    if cost:
        print(f"  nnlite {cost}")
    print(f"  load average at the end {load:.1f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
