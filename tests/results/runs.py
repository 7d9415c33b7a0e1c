"""Real runs for the result views, and copies derived from them.

The runs are real (conversion, validation, host benchmark, store, reports); the second reuses the
first one's conversions through the session's cache, so it costs only its benchmarks. Variants
that no command produces yet (another precision, a profiled `ops` block, FLOPs) and an artificially
slower run are derived from these real reports by `derive_run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from nnlite_tui.core.bench.stats import summarize

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
RUN_ARGS = ["--headless", "--runs", "40", "--min-seconds", "0.2", "--warmup", "3", "--workers", "1"]


def nnlite(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)


def real_run(out: Path) -> Path:
    proc = nnlite("run", str(FIXTURES / "good_models"), str(FIXTURES / "bad_models" / "uses_topk.py"),
                  "--out", str(out), *RUN_ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def runtime_run(out: Path) -> Path:
    """The same good models in both runtimes (LiteRT's conversions come from the session's cache)."""
    proc = nnlite("run", str(FIXTURES / "good_models"), "--runtime", "all", "--out", str(out), *RUN_ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def set_samples(report: dict, samples: list[float]) -> None:
    """Replace a report's raw samples and keep every figure derived from them consistent."""
    stats = summarize(samples)
    report["benchmark"]["samples_ns"] = [int(s) for s in samples]
    report["benchmark"]["stats"] = stats
    report.update(iterations=stats["count"], duration=int(stats["median_ns"]), cpu_duration=int(stats["mean_ns"]),
                  cpu_min_duration=int(stats["min_ns"]), cpu_max_duration=int(stats["max_ns"]),
                  cpu_std_dev=int(stats["std_ns"]))


def scale(report: dict, factor: float) -> None:
    """Make a report `factor` times slower (or faster): every sample, round and figure derived from them."""
    bench = report["benchmark"]
    set_samples(report, [s * factor for s in bench["samples_ns"]])
    for rnd in bench.get("rounds") or []:
        rnd["median_ns"] *= factor
        rnd["stats"] = {k: (v if k == "count" else v * factor) for k, v in rnd["stats"].items()}
    if bench.get("median_ns") is not None:
        bench["median_ns"] *= factor
        report["duration"] = int(bench["median_ns"])
    interval = bench.get("interval") or {}
    for key in ("low_ns", "high_ns"):
        if interval.get(key) is not None:
            interval[key] *= factor


def derive_run(src: Path, dest: Path, edit: Callable[[str, dict], dict | None]) -> Path:
    """Copy a run; `edit(file name, report)` may change a report in place, or return a new report that is
    written beside it (a variant of the same model)."""
    shutil.copytree(src, dest)
    for path in sorted((dest / "reports").glob("*.json")):
        report = json.loads(path.read_text())
        extra = edit(path.name, report)
        path.write_text(json.dumps(report))
        if extra is not None:
            (path.parent / path.name.replace(".json", "__variant.json")).write_text(json.dumps(extra))
    return dest
