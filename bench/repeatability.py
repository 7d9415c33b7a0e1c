"""Do nnlite's numbers hold when measured again? Runs the same models several times and compares the runs.

    python bench/repeatability.py [SOURCE] [--runs 3] [--keep DIR] [--run-args "--rounds 1 ..."]

SOURCE defaults to sample_models. The script makes a copy of it in which two models do more work —
SLOW_MODEL at a larger input (about 1.3x the latency) and SLIGHT_MODEL at a slightly larger one
(about 1.05x) — converts both once (so the runs time cached conversions), then runs `nnlite run`
with default settings on the original and on the copy, alternating (A B A B ...), `--runs` times each.
It prints:
- identical runs: every pair of runs of the same models (the originals among themselves, the copies
  among themselves), pair by pair and model by model: the share of comparisons whose 95% interval of
  the ratio contains 1.0, the false verdicts ("slower"/"faster" between identical runs), and the median
  half-width of the intervals;
- a real change: each original run against the copy run made next to it, for SLOW_MODEL (should be
  "slower" every time) and SLIGHT_MODEL (should never be "faster"), with the latency ratio the
  interleaved runs themselves measured.
Timings move with the machine: run it with nothing else running.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nnlite_tui.core.report.compare import FASTER, SLOWER, compare_runs  # noqa: E402

SLOW_MODEL, SLOW_SHAPE = "plain_cnn", (1, 3, 36, 36)  # (36/32)^2 = 1.27x the convolution work
SLIGHT_MODEL, SLIGHT_SHAPE = "resnet18_mini", (1, 3, 32, 34)  # 34/32 = 1.06x the rows; about 1.04x measured


def nnlite(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"nnlite {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")


def slowed_copy(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest)
    for model, shape in ((SLOW_MODEL, SLOW_SHAPE), (SLIGHT_MODEL, SLIGHT_SHAPE)):
        path = dest / f"{model}.py"
        text = re.sub(r"^DEFAULT_IN_SHAPE = .*$\n?", "", path.read_text(), flags=re.M)
        path.write_text(text + f"\nDEFAULT_IN_SHAPE = {shape}\n")
    return dest


def identical_pairs(runs: list[Path]) -> list:
    return [p for a, b in combinations(runs, 2) for p in compare_runs(a, b).pairs if p.ci is not None]


def across_run_spread(runs: list[Path], rescale: bool) -> list[float]:
    """Per model: the relative std of its medians across the runs (optionally rescaled by the reference)."""
    import json

    medians: dict[str, list[float]] = {}
    refs = [r["reference"]["median_ns"] for run in runs for path in (run / "reports").glob("*.json")
            for r in json.loads(path.read_text())["benchmark"].get("rounds") or [] if r.get("reference")]
    mean_ref = statistics.fmean(refs) if refs else None
    for run in runs:
        for path in (run / "reports").glob("*.json"):
            report = json.loads(path.read_text())
            rounds = report["benchmark"].get("rounds") or []
            if not report.get("valid") or not rounds:
                continue
            values = [r["median_ns"] * (mean_ref / r["reference"]["median_ns"] if rescale and mean_ref and
                                        r.get("reference") else 1.0) for r in rounds]
            medians.setdefault(report["model_name"], []).append(statistics.median(values))
    return [statistics.stdev(v) / statistics.fmean(v) for v in medians.values() if len(v) > 1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?", default=str(REPO / "sample_models"))
    ap.add_argument("--runs", type=int, default=3, help="nnlite runs of each of the two model folders")
    ap.add_argument("--keep", help="keep the run directories here (default: a temporary folder)")
    ap.add_argument("--run-args", default="", help="extra `nnlite run` options, as one string")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="nnlite-repeat-"))
    work.mkdir(parents=True, exist_ok=True)
    original = Path(args.source)
    changed = slowed_copy(original, work / "changed-models")
    for folder in (original, changed):
        nnlite("convert", str(folder), "--out", str(work / f"convert-{folder.name}"))
    base_runs, changed_runs = [], []
    started = time.monotonic()
    for i in range(args.runs):
        for folder, runs in ((original, base_runs), (changed, changed_runs)):
            out = work / f"{'base' if folder is original else 'changed'}-{i + 1}"
            shutil.rmtree(out, ignore_errors=True)
            nnlite("run", str(folder), "--out", str(out), "--headless", *shlex.split(args.run_args))
            runs.append(out)
            print(f"  run {out.name} done ({time.monotonic() - started:.0f} s)", flush=True)

    pairs = identical_pairs(base_runs) + identical_pairs(changed_runs)
    contains = [p for p in pairs if p.ci[0] <= 1.0 <= p.ci[1]]
    false = [p for p in pairs if p.change in (SLOWER, FASTER)]
    half = [(p.ci[1] - p.ci[0]) / 2 for p in pairs]
    basis = sorted({p.basis for p in pairs})
    print(f"\nidentical runs ({len(base_runs)} + {len(changed_runs)} runs, {', '.join(basis)}):")
    print(f"  95% interval contains 1.0: {len(contains)} of {len(pairs)} ({len(contains) / len(pairs):.0%})")
    print(f"  false verdicts: {len(false)} of {len(pairs)}"
          + "".join(f"\n    {p.before.model}: {p.change} {p.ratio:.3f} [{p.ci[0]:.3f}, {p.ci[1]:.3f}]" for p in false))
    print(f"  median half-width of the interval: {statistics.median(half):.4f} (ratio units); "
          f"max {max(half):.4f}")
    unstable = sum(1 for p in pairs for r in (p.before, p.after) if r.stable is False)
    print(f"  unstable sides: {unstable} of {2 * len(pairs)}")

    print("\na real change (each original run against the copy run next to it):")
    for model, shape in ((SLOW_MODEL, SLOW_SHAPE), (SLIGHT_MODEL, SLIGHT_SHAPE)):
        verdicts, ratios = [], []
        for before, after in zip(base_runs, changed_runs):
            pair = next(p for p in compare_runs(before, after).pairs if p.before.model == model)
            verdicts.append(pair.change)
            ratios.append(pair.ratio)
            print(f"  {model} at {shape[2]}x{shape[3]}: {pair.change} {pair.ratio:.3f} "
                  f"[{pair.ci[0]:.3f}, {pair.ci[1]:.3f}] rank p {pair.p_value}")
        print(f"  {model}: {verdicts.count(SLOWER)} of {len(verdicts)} slower, {verdicts.count(FASTER)} faster; "
              f"median measured ratio {statistics.median(ratios):.3f}")
    print("\nrescaled by the reference model (each round's median times mean reference / its nearest reference):")
    for label, runs in (("originals", base_runs), ("copies", changed_runs)):
        raw, scaled = across_run_spread(runs, rescale=False), across_run_spread(runs, rescale=True)
        print(f"  {label}: median spread of a model's medians across runs {statistics.median(raw):.2%} raw, "
              f"{statistics.median(scaled):.2%} rescaled ({len(raw)} models)")
    print(f"\nrun directories: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
