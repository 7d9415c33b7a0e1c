#!/usr/bin/env python3
"""Time to the first result: `nnlite run` on one model against a plain script doing the same work.

    .venv/bin/python bench/first_result.py [--source sample_models] [--model plain_cnn] [--pairs 4]
                                           [--runs 50] [--warmup 5] [-- extra nnlite run args]

The plain script is bench/naive_reference.py: one process that imports torch and litert-torch,
converts the model, loads it in LiteRT's interpreter, warms up and times it. `nnlite run` does the
same measurement (`--runs N --min-seconds 0 --warmup W --warmup-seconds 0`), from a cold start
(a fresh process, an empty conversion cache), headless. Both are timed from the process's start to
its exit, in pairs whose order alternates (plain, nnlite / nnlite, plain / ...: ABBA), so that a
machine whose load drifts weighs on both sides alike; the figure is each pair's ratio
nnlite/plain and their median.

For nnlite it also prints where the seconds went, read from the run's events.jsonl and the
conversion's phases: the CLI's start (imports, discovery, the store) up to RunStarted, the
conversion's wait for its worker (still importing torch and the converter) up to the worker's first
phase line, the worker's job, the wait for the benchmark, the benchmark, and what is left after the
result (shutting the workers and the spare benchmark process down, summary.csv) up to the exit; and
the worker's own start, which overlaps the first two.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_plain(args, work: Path) -> dict:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "naive_reference.py"), str(work / "plain"), args.source,
                           "--include", args.model, "--runs", str(args.runs), "--min-seconds", "0",
                           "--warmup", str(args.warmup)], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 or "1 ok" not in done.stdout:
        raise SystemExit(f"plain script failed:\n{done.stdout}\n{done.stderr}")
    line = re.search(r"convert ([\d.]+) s bench ([\d.]+) s", done.stdout)
    inside = re.search(r"wall ([\d.]+) s", done.stdout)
    return {"wall": wall, "convert": float(line[1]), "bench": float(line[2]), "inside": float(inside[1])}


def run_nnlite(args, work: Path) -> dict:
    run_dir = work / "run"
    started_at, started = time.time(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nnlite_tui", "run", args.source, "--include", args.model,
                           "--out", str(run_dir), "--cache-dir", str(work / "cache"), "--headless",
                           "--runs", str(args.runs), "--min-seconds", "0", "--warmup", str(args.warmup),
                           "--warmup-seconds", "0", *args.extra], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 or "done 1" not in done.stdout:
        raise SystemExit(f"nnlite run failed:\n{done.stdout}\n{done.stderr}")
    return {"wall": wall, **breakdown(run_dir / "events.jsonl", started_at, wall)}


def breakdown(events_path: Path, started_at: float, wall: float) -> dict:
    """Seconds from the process's start: to RunStarted; from the conversion's start to its worker's first
    phase (the worker still importing, or busy); the worker's job; waiting for the benchmark; the
    benchmark; from the result to the exit. Also the worker's own start (it overlaps the first two)."""
    events = [json.loads(line) for line in events_path.read_text().splitlines() if line.strip()]
    at = {}
    for e in events:
        key = (e["type"], e.get("stage") or e.get("status"))
        if e["type"] == "ModelLog" and e["line"].startswith("[nnlite] phase build "):
            key = ("first phase", None)
        at.setdefault(key, e)
    ts = {key: e["ts"] - started_at for key, e in at.items()}
    convert = at[("StageFinished", "convert")]
    phases = convert.get("phases") or {}
    # A release before the live phase lines: the job's start is the conversion's end less its phases.
    ts.setdefault(("first phase", None), ts[("StageFinished", "convert")] - sum(
        (v or {}).get("s", 0.0) for k, v in phases.items() if k not in ("worker_start", "cache_fetch", "cache_write")))
    return {"to RunStarted": ts[("RunStarted", None)],
            "to first phase": ts[("first phase", None)] - ts[("StageStarted", "convert")],
            "conversion job": ts[("StageFinished", "convert")] - ts[("first phase", None)],
            "to benchmark": ts[("StageStarted", "benchmark")] - ts[("StageFinished", "convert")],
            "benchmark": ts[("StageFinished", "benchmark")] - ts[("StageStarted", "benchmark")],
            "result": ts[("ModelStatus", "done")], "after the result": wall - ts[("ModelStatus", "done")],
            "worker's start": (phases.get("worker_start") or {}).get("s", 0.0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default="sample_models")
    ap.add_argument("--model", default="plain_cnn")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("extra", nargs="*", help="after --: more `nnlite run` arguments")
    args = ap.parse_args()
    env_note = f"load average {os.getloadavg()[0]:.1f} at the start, {os.cpu_count()} cores"
    print(f"one model ({args.model} from {args.source}), {args.warmup} warm-up + {args.runs} timed runs, "
          f"cold cache, {args.pairs} pairs in ABBA order; {env_note}")
    pairs, plains, nnlites = [], [], []
    for i in range(args.pairs):
        order = ("plain", "nnlite") if i % 2 == 0 else ("nnlite", "plain")
        got = {}
        for side in order:
            work = Path(tempfile.mkdtemp(prefix=f"nnlite-first-{side}-"))
            try:
                got[side] = run_plain(args, work) if side == "plain" else run_nnlite(args, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        plains.append(got["plain"])
        nnlites.append(got["nnlite"])
        ratio = got["nnlite"]["wall"] / got["plain"]["wall"]
        pairs.append(ratio)
        print(f"pair {i + 1} ({' then '.join(order)}): plain {got['plain']['wall']:.2f} s   "
              f"nnlite {got['nnlite']['wall']:.2f} s (result at {got['nnlite']['result']:.2f} s)   "
              f"ratio {ratio:.3f}", flush=True)
    print(f"\nplain  median {statistics.median(p['wall'] for p in plains):.2f} s   "
          f"(convert {statistics.median(p['convert'] for p in plains):.2f} s, "
          f"bench {statistics.median(p['bench'] for p in plains):.3f} s, "
          f"interpreter start and exit {statistics.median(p['wall'] - p['inside'] for p in plains):.2f} s)")
    print(f"nnlite median {statistics.median(n['wall'] for n in nnlites):.2f} s, of which (medians):")
    for key in ("to RunStarted", "to first phase", "conversion job", "to benchmark", "benchmark",
                "after the result", "worker's start"):
        print(f"    {key:<18} {statistics.median(n[key] for n in nnlites):6.2f} s")
    print(f"ratio nnlite/plain: median of the pairs {statistics.median(pairs):.3f} "
          f"(pairs: {', '.join(f'{r:.3f}' for r in pairs)}; target <= 1.25)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
