#!/usr/bin/env python3
"""Measurement integrity on the host: per-model medians with overlap on and off must agree.

    .venv/bin/python bench/isolation_check.py MODELS [--limit N] [--runs 200] [--min-seconds 1]

Run A: a cold cache, so conversions run while the host benchmarks (overlap on; the pipeline pins
the conversions off the benchmark's cores). Run B: the same models again with the cache now warm,
so nothing converts while they are benchmarked (overlap off). Prints each model's two medians and
their difference; PASS when every model agrees within --tolerance (default 10%).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def medians(run_dir: Path) -> dict[str, float]:
    with open(run_dir / "summary.csv", newline="") as f:
        return {r["model"]: float(r["median_ms"]) for r in csv.DictReader(f) if r.get("median_ms")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--tolerance", type=float, default=0.10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nnlite-isolation-") as tmp:
        env = {**os.environ, "NNLITE_CACHE_DIR": str(Path(tmp) / "cache")}
        common = [*args.models, "--headless", "--runs", str(args.runs), "--min-seconds", str(args.min_seconds),
                  *(["--limit", str(args.limit)] if args.limit else [])]
        for name in ("overlap", "sequential"):
            subprocess.run([sys.executable, "-m", "nnlite_tui", "run", *common, "--out", str(Path(tmp) / name)],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        a, b = medians(Path(tmp) / "overlap"), medians(Path(tmp) / "sequential")
    worst = 0.0
    print(f"{'model':<48} {'overlap ms':>11} {'alone ms':>10} {'diff':>7}")
    for model in sorted(set(a) & set(b)):
        diff = (a[model] - b[model]) / b[model]
        worst = max(worst, abs(diff))
        print(f"{model[:48]:<48} {a[model]:>11.4f} {b[model]:>10.4f} {diff:>+7.1%}")
    ok = worst <= args.tolerance
    print(f"\n{len(set(a) & set(b))} models, worst difference {worst:.1%}: "
          f"{'PASS' if ok else 'FAIL'} (tolerance {args.tolerance:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
