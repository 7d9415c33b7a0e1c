#!/usr/bin/env python3
"""Accuracy of the per-op latency predictor (nnlite predict) on the host, on held-out architectures,
beside the noise floor of the measurement it is judged against.

    .venv/bin/python bench/predictor_accuracy.py LEMUR_ROOT [--work DIR] [--seed 0] [--seeds 5]
                                                 [--test-fraction 0.3] [--split family|model]
                                                 [--max-params 5000000] [--limit N] [--runs N]

The models of LEMUR_ROOT are split by a fixed seed into disjoint train and test architectures: whole
families (`<family>-<md5>`: the files of a family are variants of one architecture), or with
--split model single files; --seeds splits are pooled. One `nnlite run --profile-ops` over all of
them (resumable: WORK/profiled) gives the train profiles and the test models' measured medians (the
report's `duration`: the median across rounds where the run has rounds); the table is built from
the train reports only (their valid ops blocks, measured op times only), and each test model is
predicted from its converted graph alone. A second full run of the same models with the same
settings (WORK/repeat) measures the noise floor the same way: its medians against the first run's,
for the same test models.

Prints what latency-predictor papers print (nn-Meter, LitePred): the share of test predictions
within ±5% and ±10% of the measured median, RMSPE, and Spearman's rank correlation (scipy), for
the predictor and, beside it, for the second run; how many test models got no prediction; the
shares of the predicted time from exact table hits, fits and the run's remainder; the prediction
against the test model's own profile (what the table would give with every op an exact hit); and
whether the target, 80% within ±10%, is met and whether the noise floor lets it be judged.
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

from nnlite_tui.core.ops.predictor import FITS, REMAINDER, TABLE, OpTable, ops_blocks  # noqa: E402
from nnlite_tui.core.results import load_reports
from nnlite_tui.core.run_dir import safe_name  # noqa: E402
from nnlite_tui.core.runtimes import get_runtime  # noqa: E402


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
    """pairs of (estimate, reference): within ±5% / ±10%, RMSPE, Spearman's rho."""
    from scipy.stats import spearmanr

    kept = [(e, r) for e, r in pairs if r > 0]
    rel = [(e - r) / r for e, r in kept]
    if not rel:
        return {"n": 0, "within5": math.nan, "within10": math.nan, "rmspe": math.nan, "spearman": math.nan}
    rho = float(spearmanr([e for e, _ in kept], [r for _, r in kept]).statistic) if len(kept) > 2 else math.nan
    return {"n": len(rel), "within5": sum(abs(x) <= 0.05 for x in rel) / len(rel),
            "within10": sum(abs(x) <= 0.10 for x in rel) / len(rel),
            "rmspe": math.sqrt(sum(x * x for x in rel) / len(rel)), "spearman": rho}


def show(label: str, s: dict[str, float]) -> None:
    print(f"{label:<38} n={s['n']:<4} within ±5%: {s['within5']:6.1%}   within ±10%: {s['within10']:6.1%}"
          f"   RMSPE: {s['rmspe']:6.1%}   Spearman: {s['spearman']:.3f}")


def own_profile_us(block: dict, stat: str) -> float | None:
    """The test model's own profile through the table's statistic, with its own run remainder."""
    if block.get("unattributed_us") is None:
        return None
    return sum(op[stat] for op in block["ops"] if op.get("timing") == "measured") + block["unattributed_us"]


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
    ap.add_argument("--runs", type=int, help="timed runs per model (default: nnlite run's)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    work = Path(args.work)
    common = [args.root, "--max-params", str(args.max_params)]
    common += ["--runs", str(args.runs)] if args.runs else []
    common += ["--limit", str(args.limit)] if args.limit else []
    # The test models are predicted from their .tflite files: the run directory keeps them all.
    nnlite(*common, "--profile-ops", "xnnpack", "--keep-artifacts", "all", "--out", str(work / "profiled"))
    reports = {r["model_name"]: r for r in load_reports(work / "profiled") if r.get("valid")}
    blocks = {n: (ops_blocks(r, "xnnpack") or [{}])[0] for n, r in reports.items()}
    names = sorted(n for n, b in blocks.items() if b.get("valid"))
    invalid = sorted(n for n, b in blocks.items() if b.get("ops") and not b.get("valid"))
    key = family_of if args.split == "family" else (lambda n: n)
    groups = sorted({key(n) for n in names})
    pairs, own_pairs, tested, none = [], [], [], []
    shares = {"table": [], "fit": [], "remainder": []}
    for seed in range(args.seed, args.seed + args.seeds):
        rng = random.Random(seed)
        test_groups = set(rng.sample(groups, max(1, round(len(groups) * args.test_fraction))))
        test = [n for n in names if key(n) in test_groups]
        train = [n for n in names if n not in set(test)]
        table = OpTable(kernel_mode="xnnpack")
        for name in train:
            table.add_block(blocks[name], name)
        table.finish()
        print(f"seed {seed}: train {len(train)}, test {len(test)} ({', '.join(sorted(test_groups))}); table "
              f"{len(table.exact)} measured op configurations, {len(table.fits)} fit groups, remainder "
              f"{'fitted on ' + str(len(table.remainders)) if table.remainder_fit else 'not fitted'}")
        for name in test:
            graph = get_runtime("litert").read_graph(str(work / "profiled" / "artifacts" / f"{safe_name(name)}.tflite"))
            pred = table.predict(graph)
            measured_us = reports[name]["duration"] / 1e3
            if pred.total_us is None:
                none.append((seed, name, pred.why_none))
                continue
            pairs.append((pred.total_us, measured_us))
            tested.append(name)
            # Separates the fallbacks' error from the host's: every op an exact hit from the model's own profile.
            own = own_profile_us(blocks[name], table.stat)
            if own is not None:
                own_pairs.append((pred.total_us, own))
            shares["table"].append(pred.share(TABLE))
            shares["fit"].append(pred.share(*FITS))
            shares["remainder"].append(pred.share(REMAINDER))
            if args.verbose:
                print(f"  {name:<50} predicted {pred.total_us / 1e3:8.3f} ms  measured {measured_us / 1e3:8.3f} ms  "
                      f"{(pred.total_us - measured_us) / measured_us:+7.1%}  table {pred.share(TABLE):5.0%}  "
                      f"fit {pred.share(*FITS):5.0%}  remainder {pred.share(REMAINDER):5.0%}")

    nnlite(*common, "--out", str(work / "repeat"))
    again = {r["model_name"]: r for r in load_reports(work / "repeat") if r.get("valid")}
    # The same multiset of models as the predictions: each test prediction's model, measured twice.
    floor = [(again[n]["duration"], reports[n]["duration"]) for n in tested if n in again]
    floor_all = [(again[n]["duration"], reports[n]["duration"]) for n in names if n in again]

    print(f"\nsplit by {args.split}, seeds {args.seed}..{args.seed + args.seeds - 1}: {len(names)} profiled models "
          f"with a valid ops block in {len(groups)} groups ({len(invalid)} blocks failed the checks"
          f"{': ' + ', '.join(invalid) if invalid else ''}); {len(pairs)} test predictions of "
          f"{len(set(tested))} distinct models, {len(none)} with no prediction")
    for seed, name, why in none:
        print(f"  no prediction (seed {seed}) {name}: {why}")
    mean = {k: sum(v) / len(v) if v else math.nan for k, v in shares.items()}
    print(f"share of predicted time (test, mean): exact table hits {mean['table']:.1%}, fits {mean['fit']:.1%}, "
          f"run remainder {mean['remainder']:.1%}")
    predicted, noise = errors_summary(pairs), errors_summary(floor)
    show("predicted vs measured median", predicted)
    show("noise floor: second run vs first", noise)
    show("  (every model, once)", errors_summary(floor_all))
    show("predicted vs own profile", errors_summary(own_pairs))
    met = predicted["within10"] >= 0.8
    print(f"target 80% within ±10% of the measured median: {'met' if met else 'not met'} "
          f"({predicted['within10']:.1%}); the same models measured twice agree within ±10% "
          f"{noise['within10']:.1%} of the time" + ("" if noise["within10"] >= 0.8 else
                                                     ", below 80%: this host cannot judge the target"))
    out = work / "accuracy.json"
    out.write_text(json.dumps({"seed": args.seed, "seeds": args.seeds, "split": args.split, "tested": tested,
                               "pairs_us": pairs, "own_pairs_us": own_pairs, "floor_ns": floor,
                               "no_prediction": none}, indent=1))
    print(f"(details: {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
