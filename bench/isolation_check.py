#!/usr/bin/env python3
"""Measurement integrity on the host: per-model medians with overlap on and off must agree.

    .venv/bin/python bench/isolation_check.py MODELS [--limit N] [--runs 200] [--min-seconds 1]

Run A: a cold cache, so conversions run while the host benchmarks (overlap on; the pipeline keeps
conversions off the CPU while a host benchmark runs). Runs B and C: the same models again with the
cache now warm, so nothing converts while they are benchmarked (overlap off), twice: B vs C is the
machine's own run-to-run noise, the floor any A vs B comparison stands on. Prints each model's
medians and differences; PASS when every model's A vs B difference is within --tolerance (10%).
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
        for name in ("overlap", "alone", "alone-again"):
            subprocess.run([sys.executable, "-m", "nnlite_tui", "run", *common, "--out", str(Path(tmp) / name)],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        a, b, c = (medians(Path(tmp) / n) for n in ("overlap", "alone", "alone-again"))
    models = sorted(set(a) & set(b) & set(c))
    worst = worst_noise = 0.0
    diffs, noises = [], []
    print(f"{'model':<44} {'overlap ms':>11} {'alone ms':>9} {'again ms':>9} {'A vs B':>7} {'B vs C':>7}")
    for model in models:
        diff = (a[model] - b[model]) / b[model]
        noise = (c[model] - b[model]) / b[model]
        diffs.append(diff)
        noises.append(noise)
        worst, worst_noise = max(worst, abs(diff)), max(worst_noise, abs(noise))
        print(f"{model[:44]:<44} {a[model]:>11.4f} {b[model]:>9.4f} {c[model]:>9.4f} {diff:>+7.1%} {noise:>+7.1%}")
    ok = worst <= args.tolerance
    mean = sum(diffs) / len(diffs)
    print(f"\n{len(models)} models. overlap vs alone: worst {worst:.1%}, mean {mean:+.1%}. "
          f"alone vs alone again (noise floor): worst {worst_noise:.1%}, mean {sum(noises) / len(noises):+.1%}.")
    print(f"{'PASS' if ok else 'FAIL'}: tolerance {args.tolerance:.0%} per model")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
