"""How far the console's ETA is from the time that was actually left, at 25%, 50% and 75% of a run.

Runs a real LEMUR run (`nnlite run --headless`, host device, a fresh conversion cache so that every
model converts), or reads the events.jsonl of one that exists (--events), and folds its events
into core/run/eta.py the way the console does, up to the moment a quarter, half and three quarters
of the units had finished. It prints the estimate (with its band), the time that was left, and
the error; and, for comparison, what a count-based rate (units finished per second so far) said.

    python bench/eta_accuracy.py LEMUR_TREE [--limit 20] [--events RUN_DIR/events.jsonl]

Target: within +-25% of the time that was left.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nnlite_tui.core.events import TERMINAL, ModelStatus, RunFinished, RunStarted  # noqa: E402
from nnlite_tui.core.run.eta import EtaEstimator  # noqa: E402
from nnlite_tui.core.run.event_log import parse_events  # noqa: E402

MARKS = (0.25, 0.50, 0.75)


def run(tree: str, limit: int, out: Path) -> Path:
    cmd = [sys.executable, "-m", "nnlite_tui", "run", tree, "--limit", str(limit), "--out", str(out / "run"),
           "--headless", "--device", "host", "--cache-dir", str(out / "cache"), "--rounds", "1"]
    print("running:", " ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    return out / "run" / "events.jsonl"


def clock(seconds: float) -> str:
    sign = "-" if seconds < 0 else ""
    seconds = abs(round(seconds))
    return f"{sign}{seconds // 60}:{seconds % 60:02d}"


def evaluate(events_path: Path) -> int:
    events, bad = parse_events(events_path.read_bytes())
    start = next(e for e in events if isinstance(e, RunStarted))
    end = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    if end is None or bad:
        print(f"{events_path}: the run did not finish ({bad} unreadable lines)")
        return 1
    total = len(start.models)
    finished, marks, estimator = set(), list(MARKS), EtaEstimator()
    print(f"{total} units, {end.seconds:.0f} s from start to end; counts {end.counts}")
    print(f"{'at':>4} {'elapsed':>8} {'left':>7} {'ETA':>7} {'band':>15} {'error':>7}   {'count-based':>11} {'error':>7}")
    worst = 0.0
    for event in events:
        estimator.fold(event)
        if not isinstance(event, ModelStatus) or event.status not in TERMINAL or event.model in finished:
            continue
        finished.add(event.model)
        if not marks or len(finished) < marks[0] * total:
            continue
        mark = marks.pop(0)
        now, left = event.ts, end.ts - event.ts
        eta = estimator.estimate(now)
        elapsed = now - start.ts
        by_count = elapsed / len(finished) * (total - len(finished))
        if eta is None:
            print(f"{mark:>4.0%} {clock(elapsed):>8} {clock(left):>7}     --")
            worst = float("inf")
            continue
        error = (eta.seconds - left) / left if left > 0 else 0.0
        worst = max(worst, abs(error))
        print(f"{mark:>4.0%} {clock(elapsed):>8} {clock(left):>7} {clock(eta.seconds):>7} "
              f"{clock(eta.low) + '..' + clock(eta.high):>15} {error:>+7.0%}   {clock(by_count):>11} "
              f"{(by_count - left) / left if left > 0 else 0.0:>+7.0%}")
    print(f"worst ETA error {worst:.0%} (target within 25%): {'met' if worst <= 0.25 else 'NOT met'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", help="a LEMUR tree (ab/nn/...)")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--events", type=Path, help="evaluate this events.jsonl instead of running")
    args = parser.parse_args()
    if args.events:
        return evaluate(args.events)
    if not args.tree:
        parser.error("give a LEMUR tree, or --events")
    with tempfile.TemporaryDirectory(prefix="nnlite-eta-") as tmp:
        return evaluate(run(args.tree, args.limit, Path(tmp)))


if __name__ == "__main__":
    sys.exit(main())
