"""What the sandbox costs a whole run: `nnlite run` on the same models with model code in the sandbox
and with `--no-sandbox`, cold conversion caches, in ABBA order, and the wall times side by side.

    python bench/sandbox_throughput.py [SOURCE] [--include GLOB ...] [--limit N] [--pairs 1] [--run-args "..."]

SOURCE defaults to ../shared/lemur-mini with the models not tuned on (`ga-mut-*`, `rl-init*`).
Each run gets a fresh run directory and cache, so every conversion happens, with its worker's start.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def one_run(source: str, includes: list[str], limit: int | None, sandbox: bool, extra: list[str]) -> float:
    work = Path(tempfile.mkdtemp(prefix="sandbox-throughput-"))
    cmd = [sys.executable, "-m", "nnlite_tui", "run", source, "--headless", "--out", str(work / "run"),
           "--cache-dir", str(work / "cache"), *extra]
    for glob in includes:
        cmd += ["--include", glob]
    if limit:
        cmd += ["--limit", str(limit)]
    if not sandbox:
        cmd.append("--no-sandbox")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"nnlite run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    totals = next((line for line in proc.stdout.splitlines() if line.startswith("totals:")), "totals: ?")
    print(f"  {'sandbox   ' if sandbox else 'no sandbox'}  {wall:7.1f} s  {totals.split('(')[0].strip()}", flush=True)
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?", default=str(REPO.parent / "shared" / "lemur-mini"))
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--limit", type=int)
    ap.add_argument("--pairs", type=int, default=1, help="ABBA groups (each: sandbox, none, none, sandbox)")
    ap.add_argument("--run-args", default="", help="extra `nnlite run` options, as one string")
    args = ap.parse_args()
    includes = args.include or ["ga-mut-*", "rl-init*"]
    extra = shlex.split(args.run_args)
    shown = os.path.relpath(args.source, REPO)  # no machine path in what gets quoted
    print(f"{shown} {' '.join(includes)}; load average {os.getloadavg()[0]:.1f}", flush=True)
    walls: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.pairs):
        for sandbox in (True, False, False, True):
            walls[sandbox].append(one_run(args.source, includes, args.limit, sandbox, extra))
    on, off = statistics.median(walls[True]), statistics.median(walls[False])
    print(f"median wall: sandbox {on:.1f} s, no sandbox {off:.1f} s, ratio {on / off:.3f} "
          f"(n = {len(walls[True])} each); load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
