#!/usr/bin/env python3
"""nnlite vs the naive sequential reference, on the same models with the same benchmark settings.

    .venv/bin/python bench/pipeline_vs_naive.py MODELS [--rounds 1] [--runs 50] [--min-seconds 1]
                                                [--warmup 5] [--limit N] [-- extra nnlite run args]

Alternates naive and nnlite runs (naive first), each from a cold start (fresh process, empty
conversion cache), and prints both wall times, models/hour and the ratio nnlite/naive.
Extra arguments after `--` go to `nnlite run` (e.g. `--device emulator-5554`).
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
    args = ap.parse_args(argv)
    bench = ["--runs", str(args.runs), "--min-seconds", str(args.min_seconds), "--warmup", str(args.warmup)]
    limit = ["--limit", str(args.limit)] if args.limit else []
    naive_w, ours_w = [], []
    n_models = None
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="nnlite-vs-naive-") as tmp:
            env = {**os.environ, "NNLITE_CACHE_DIR": str(Path(tmp) / "cache")}
            wall, out = timed([sys.executable, str(ROOT / "bench" / "naive_reference.py"), str(Path(tmp) / "naive"),
                               *args.models, *bench, *limit], env)
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
