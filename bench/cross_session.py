"""Do verdicts survive a change of session? Four identical runs of unseen LEMUR models, far apart in time.

    python bench/cross_session.py TREE --work DIR [--select-from RUN_DIR] [--models 22] [--runs 4]
                                  [--gap-minutes 10] [--cache-dir DIR] [--compare-only]

1. Picks the models: the valid units of a first run of TREE (`--select-from` an existing run of it,
   else one is made in DIR/select) whose median is 1-100 ms, up to --models of them spread over
   that range, at their recorded input sizes (nnlite's LEMUR default).
2. Makes --runs identical default `nnlite run TREE --include ...` runs of them, each starting at
   least --gap-minutes after the previous one started, with other work in between (a memory-heavy
   numpy job for a minute, beside whatever else the machine runs). A run already complete in DIR is
   kept, so the script can be started again after an interruption.
3. Compares every pair of runs (`compare_runs`, as `nnlite compare` does) and prints, over all pairs:
   the share of comparisons whose 95% interval contains 1.0, the false verdicts (anything "slower" or
   "faster" between identical runs), the median half-width of the intervals, the within-session
   interval's share for contrast, and how far the host moved between the runs (its references).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nnlite_tui.core.report.compare import FASTER, SLOWER, compare_runs  # noqa: E402


def nnlite(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"nnlite {' '.join(args[:4])} ... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def medians_of(run: Path) -> dict[str, float]:
    out = {}
    for path in sorted((run / "reports").glob("*.json")):
        report = json.loads(path.read_text())
        median = (report.get("benchmark") or {}).get("median_ns") or ((report.get("benchmark") or {}).get("stats")
                                                                       or {}).get("median_ns")
        if report.get("valid") and median:
            out[report["model_name"]] = median / 1e6
    return out


def pick(medians: dict[str, float], n: int) -> list[str]:
    """Up to n models with medians 1-100 ms, spread evenly over that range by median."""
    eligible = sorted((ms, name) for name, ms in medians.items() if 1.0 <= ms <= 100.0)
    if len(eligible) <= n:
        return [name for _, name in eligible]
    step = len(eligible) / n
    return [eligible[int(i * step)][1] for i in range(n)]


def other_work(seconds: float) -> None:
    """A neighbour: a numpy job that streams through 512 MB, for `seconds`."""
    import numpy as np

    a = np.ones(64 * 1024 * 1024)  # 512 MB
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        a *= 1.0000001


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--work", required=True)
    ap.add_argument("--select-from", help="an existing run of TREE to pick the models from")
    ap.add_argument("--models", type=int, default=22)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--gap-minutes", type=float, default=10.0)
    ap.add_argument("--cache-dir", help="conversion cache (default: nnlite's)")
    ap.add_argument("--compare-only", action="store_true", help="only compare the runs already in --work")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cache = ["--cache-dir", args.cache_dir] if args.cache_dir else []
    select = Path(args.select_from) if args.select_from else work / "select"
    if not args.select_from and not args.compare_only:
        nnlite("run", args.tree, "--out", str(select), "--headless", *cache)
    models = pick(medians_of(select), args.models)
    print(f"{len(models)} models with medians 1-100 ms in {select.name}: {', '.join(models)}", flush=True)
    runs = [work / f"run-{i + 1}" for i in range(args.runs)]
    last_start = None
    for run in runs:
        if args.compare_only or (run / "summary.csv").exists():
            continue
        if last_start is not None:
            other_work(60)
            time.sleep(max(0.0, last_start + args.gap_minutes * 60 - time.time()))
        last_start = time.time()
        load = loadavg()
        include = [a for m in models for a in ("--include", m)]
        nnlite("run", args.tree, *include, "--out", str(run), "--headless", *cache)
        print(f"  {run.name}: started {time.strftime('%H:%M:%S', time.gmtime(last_start))} UTC, "
              f"{time.time() - last_start:.0f} s, load average at start {load}, at end {loadavg()}", flush=True)
    runs = [r for r in runs if (r / "reports").is_dir()]
    pairs, moves = [], []
    for a, b in combinations(runs, 2):
        cmp = compare_runs(a, b)
        chosen = [p for p in cmp.pairs if p.before.model in models and p.ci is not None]
        pairs += chosen
        move = next((p.host for p in chosen if p.host), None)
        moves.append(f"{a.name}->{b.name}: {move.text() if move else 'no references'}")
    if not pairs:
        print("no comparable pairs")
        return 1
    contains = [p for p in pairs if p.ci[0] <= 1.0 <= p.ci[1]]
    within = [p for p in pairs if p.ci_within and p.ci_within[0] <= 1.0 <= p.ci_within[1]]
    false = [p for p in pairs if p.change in (SLOWER, FASTER)]
    half = [(p.ci[1] - p.ci[0]) / 2 for p in pairs]
    print(f"\n{len(runs)} identical runs, {len(pairs)} comparisons ({len(models)} models x {len(runs) * (len(runs) - 1) // 2}"
          " pairs of runs):")
    print(f"  95% interval (within and between sessions) contains 1.0: {len(contains)} of {len(pairs)} "
          f"({len(contains) / len(pairs):.0%})")
    print(f"  within-session interval alone contains 1.0: {len(within)} of {len(pairs)} ({len(within) / len(pairs):.0%})")
    print(f"  false verdicts: {len(false)} of {len(pairs)}"
          + "".join(f"\n    {p.before.model}: {p.change} {p.ratio:.3f} [{p.ci[0]:.3f}, {p.ci[1]:.3f}]" for p in false))
    print(f"  median half-width of the interval: {statistics.median(half):.4f}; max {max(half):.4f}")
    print("  host between runs: " + "; ".join(moves))
    print(f"  load average now: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
