#!/usr/bin/env python3
"""Accuracy of the per-op latency predictor (nnlite predict) on the host, on held-out architectures.

    .venv/bin/python bench/predictor_accuracy.py LEMUR_ROOT [--work DIR] [--seed 0] [--test-fraction 0.3]
                                                 [--max-params 5000000] [--limit N] [--runs 50]

The models of LEMUR_ROOT are split by a fixed seed into disjoint train and test architectures: whole
families (`<family>-<md5>`: the files of a family are variants of one architecture), or with
--split model single files. One `nnlite run --profile-ops` over all of them (resumable: WORK/profiled) gives the
train profiles and the test models' measured medians; the table is built from the train reports
only, and each test model is predicted from its converted graph alone. A second plain run of the
test models (WORK/repeat) measures the noise floor: the same model measured twice.

Prints: split sizes, % of test models within ±10% and ±20% of the measured median, RMSPE, the share
of predicted op time from exact table hits, the same figures for the repeat measurement, and the
prediction against two references the host's load does not move: the fastest timed run, and the
test model's own per-op profile summed (what the table would give with every op an exact hit).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.predict.table import OpTable, ops_blocks  # noqa: E402
from nnlite_tui.core.report import load_reports, safe_name  # noqa: E402
from nnlite_tui.core.tflite_graph import read_graph  # noqa: E402


def nnlite(*args: str) -> None:
    cmd = [sys.executable, "-m", "nnlite_tui", "run", *args, "--headless"]
    print("$", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0,):
        sys.exit(f"nnlite run failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")


def family_of(name: str) -> str:
    """LEMUR names a model `<family>-<md5>`; the family is the architecture, its files are variants."""
    head, _, tail = name.rpartition("-")
    return head if head and re.fullmatch(r"[0-9a-f]{32}", tail) else name


def errors_summary(pairs: list[tuple[float, float]]) -> dict[str, float]:
    """pairs of (estimate, reference)."""
    rel = [(e - r) / r for e, r in pairs if r > 0]
    if not rel:
        return {"n": 0, "within10": math.nan, "within20": math.nan, "rmspe": math.nan}
    return {"n": len(rel), "within10": sum(abs(x) <= 0.10 for x in rel) / len(rel),
            "within20": sum(abs(x) <= 0.20 for x in rel) / len(rel),
            "rmspe": math.sqrt(sum(x * x for x in rel) / len(rel))}


def show(label: str, s: dict[str, float]) -> None:
    print(f"{label:<34} n={s['n']:<4} within ±10%: {s['within10']:6.1%}   within ±20%: {s['within20']:6.1%}"
          f"   RMSPE: {s['rmspe']:6.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--work", default="runs/predictor-accuracy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=5, help="splits to pool, seeds SEED..SEED+N-1")
    ap.add_argument("--test-fraction", type=float, default=0.3)
    ap.add_argument("--split", choices=["family", "model"], default="family",
                    help="hold out whole architecture families (default) or single model files")
    ap.add_argument("--max-params", type=int, default=5_000_000)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    work = Path(args.work)
    common = [args.root, "--max-params", str(args.max_params), "--runs", str(args.runs)]
    if args.limit:
        common += ["--limit", str(args.limit)]
    # The test models are predicted from their .tflite files: the run directory keeps them all.
    nnlite(*common, "--profile-ops", "xnnpack", "--keep-tflite", "all", "--out", str(work / "profiled"))
    reports = {r["model_name"]: r for r in load_reports(work / "profiled") if r.get("valid")}
    names = sorted(n for n, r in reports.items() if ops_blocks(r, "xnnpack") and not ops_blocks(r)[0].get("error"))
    key = family_of if args.split == "family" else (lambda n: n)
    groups = sorted({key(n) for n in names})
    pairs, fastest_pairs, own_pairs, hits, all_test = [], [], [], [], []
    for seed in range(args.seed, args.seed + args.seeds):
        rng = random.Random(seed)
        test_groups = set(rng.sample(groups, max(1, round(len(groups) * args.test_fraction))))
        test = [n for n in names if key(n) in test_groups]
        train = [n for n in names if n not in set(test)]
        table = OpTable(kernel_mode="xnnpack")
        for name in train:
            table.add_block(ops_blocks(reports[name], "xnnpack")[0])
        table.finish()
        print(f"seed {seed}: train {len(train)}, test {len(test)} ({', '.join(sorted(test_groups))}); table "
              f"{len(table.exact)} op configurations, {len(table.fits)} fit groups")
        for name in test:
            graph = read_graph(str(work / "profiled" / "tflite" / f"{safe_name(name)}.tflite"))
            pred = table.predict(graph)
            measured_us = reports[name]["duration"] / 1e3
            pairs.append((pred.total_us, measured_us))
            # The fastest timed run: what the timed runs measure when no other process interrupts one,
            # which on a busy host the median does not show for runs longer than a scheduler slice.
            fastest_pairs.append((pred.total_us, reports[name]["benchmark"]["stats"]["min_ns"] / 1e3))
            # The test model's own profile through the same statistic: what the table would give with
            # every op an exact hit. Separates the fallback's error from the host's.
            block = ops_blocks(reports[name], "xnnpack")[0]
            own = sum(op[table.stat] for op in block["ops"])
            own_pairs.append((pred.total_us, own))
            hits.append(pred.share("table"))
            all_test.append(name)
            if args.verbose:
                print(f"  {name:<50} predicted {pred.total_us / 1e3:8.3f} ms  measured {measured_us / 1e3:8.3f} ms  "
                      f"{(pred.total_us - measured_us) / measured_us:+7.1%}  table {pred.share('table'):5.0%}")
    test = sorted(set(all_test))

    nnlite(*common, *sum((["--include", n] for n in test), []), "--out", str(work / "repeat"))
    again = {r["model_name"]: r for r in load_reports(work / "repeat") if r.get("valid")}
    floor = [(again[n]["duration"], reports[n]["duration"]) for n in test if n in again]

    print(f"\nsplit by {args.split}, seeds {args.seed}..{args.seed + args.seeds - 1}: {len(names)} profiled models "
          f"in {len(groups)} groups; {len(pairs)} test predictions of {len(test)} distinct models")
    print(f"share of predicted op time from exact table hits (test): "
          f"{sum(hits) / len(hits) if hits else math.nan:.1%}")
    show("predicted vs measured median", errors_summary(pairs))
    show("noise floor (measured twice)", errors_summary(floor))
    show("predicted vs fastest timed run", errors_summary(fastest_pairs))
    show("predicted vs own profile", errors_summary(own_pairs))
    out = work / "accuracy.json"
    out.write_text(json.dumps({"seed": args.seed, "seeds": args.seeds, "split": args.split, "test": test,
                               "pairs_us": pairs, "fastest_pairs_us": fastest_pairs, "own_pairs_us": own_pairs,
                               "floor_ns": floor}, indent=1))
    print(f"(details: {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
