"""`nnlite compare --remeasure` on identical runs made far apart, and on a real 1.3x and 1.05x change.

    python bench/cross_session_remeasure.py --work DIR [--rounds 6] [--min-seconds 0.3] [--tries 3]
                                            [--cache-dir DIR] [--run-pairs 1-2,3-4]

1. Identical runs: every pair of the runs bench/cross_session.py left in DIR (run-1 ... run-N, or the
   --run-pairs given) is re-measured side by side on the host (`nnlite compare A B --remeasure`):
   every verdict other than "within noise" is a false one.
2. A real change, as bench/repeatability.py makes one: a copy of sample_models in which plain_cnn
   takes a 36x36 input (about 1.3x the work) and resnet18_mini a 32x34 one (about 1.05x); one run of
   the originals and one of the copy, then --tries re-measurements of that pair, each a fresh session:
   plain_cnn should be "slower" every time, resnet18_mini never "faster".
Prints the verdicts, the share of intervals containing 1.0, and the load average.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SLOW_MODEL, SLOW_SHAPE = "plain_cnn", (1, 3, 36, 36)  # (36/32)^2 = 1.27x the convolution work
SLIGHT_MODEL, SLIGHT_SHAPE = "resnet18_mini", (1, 3, 32, 34)  # 34/32 = 1.06x the rows; about 1.04x measured


def nnlite(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"nnlite {' '.join(args[:5])} ... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def slowed_copy(source: Path, dest: Path) -> Path:
    if dest.exists():
        return dest
    shutil.copytree(source, dest)
    for model, shape in ((SLOW_MODEL, SLOW_SHAPE), (SLIGHT_MODEL, SLIGHT_SHAPE)):
        path = dest / f"{model}.py"
        text = re.sub(r"^DEFAULT_IN_SHAPE = .*$\n?", "", path.read_text(), flags=re.M)
        path.write_text(text + f"\nDEFAULT_IN_SHAPE = {shape}\n")
    return dest


def remeasured(before: Path, after: Path, out: Path, args, cache: list[str]) -> list[dict]:
    if not (out / "remeasure.json").exists():
        started = time.time()
        nnlite("compare", str(before), str(after), "--remeasure", "--rounds", str(args.rounds),
               "--min-seconds", str(args.min_seconds), "--out", str(out), *cache)
        print(f"  {before.name} vs {after.name}: {time.time() - started:.0f} s, load average {loadavg()}", flush=True)
    return json.loads((out / "remeasure.json").read_text())["units"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--rounds", type=int, default=6, help="ABBA pairs per unit")
    ap.add_argument("--min-seconds", type=float, default=0.3)
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--cache-dir")
    ap.add_argument("--run-pairs", help="e.g. 1-2,3-4 (default: every pair)")
    ap.add_argument("--skip-identical", action="store_true")
    ap.add_argument("--skip-change", action="store_true")
    args = ap.parse_args()
    work = Path(args.work)
    cache = ["--cache-dir", args.cache_dir] if args.cache_dir else []
    print(f"load average at start: {loadavg()}", flush=True)
    if not args.skip_change:
        changed = slowed_copy(REPO / "sample_models", work / "changed-models")
        runs = {}
        for label, folder in (("sm-base", REPO / "sample_models"), ("sm-changed", changed)):
            runs[label] = work / label
            if not (runs[label] / "summary.csv").exists():
                nnlite("run", str(folder), "--include", SLOW_MODEL, "--include", SLIGHT_MODEL, "--out",
                       str(runs[label]), "--headless", *cache)
        print(f"\na real change ({args.tries} re-measurements of sample_models vs its slowed copy, "
              f"{args.rounds} ABBA pairs each):", flush=True)
        for model, shape in ((SLOW_MODEL, SLOW_SHAPE), (SLIGHT_MODEL, SLIGHT_SHAPE)):
            print(f"  {model} at {shape[2]}x{shape[3]}:", flush=True)
        verdicts: dict[str, list[str]] = {SLOW_MODEL: [], SLIGHT_MODEL: []}
        for k in range(args.tries):
            for unit in remeasured(runs["sm-base"], runs["sm-changed"], work / f"rm-change-{k + 1}", args, cache):
                if unit["model"] in verdicts:
                    verdicts[unit["model"]].append(unit["change"])
                    print(f"    try {k + 1} {unit['model']}: {unit['change']} {unit['ratio']:.3f} "
                          f"[{unit['ci'][0]:.3f}, {unit['ci'][1]:.3f}] p {unit['wilcoxon_p']:.4f}", flush=True)
        print(f"  {SLOW_MODEL}: {verdicts[SLOW_MODEL].count('slower')} of {len(verdicts[SLOW_MODEL])} slower; "
              f"{SLIGHT_MODEL}: {verdicts[SLIGHT_MODEL].count('faster')} of {len(verdicts[SLIGHT_MODEL])} faster",
              flush=True)
    if not args.skip_identical:
        found = sorted((p for p in work.glob("run-*") if (p / "reports").is_dir()), key=lambda p: int(p.name[4:]))
        pairs = list(combinations(found, 2))
        if args.run_pairs:
            wanted = {tuple(x.split("-")) for x in args.run_pairs.split(",")}
            pairs = [(a, b) for a, b in pairs if (a.name[4:], b.name[4:]) in wanted]
        units = []
        print(f"\nidentical runs re-measured ({len(pairs)} pairs of runs, {args.rounds} ABBA pairs per unit):", flush=True)
        for a, b in pairs:
            units += remeasured(a, b, work / f"rm-{a.name}-{b.name}", args, cache)
        judged = [u for u in units if u["ci"]]
        false = [u for u in judged if u["change"] in ("slower", "faster")]
        contains = [u for u in judged if u["ci"][0] <= 1.0 <= u["ci"][1]]
        print(f"  comparisons: {len(judged)}; false verdicts: {len(false)}"
              + "".join(f"\n    {u['model']}: {u['change']} {u['ratio']:.3f}" for u in false))
        if judged:
            print(f"  95% interval contains 1.0: {len(contains)} of {len(judged)} ({len(contains) / len(judged):.0%})")
    print(f"load average at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
