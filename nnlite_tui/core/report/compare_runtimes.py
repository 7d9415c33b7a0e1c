"""Compare two runtimes within one run (`nnlite compare --by runtime RUN`): each model's unit in one
runtime against the same model's unit in the other, on the same device and at the same precision,
with the same statistics as a comparison of two runs (compare.py: with rounds, the ratio of the
round medians, its t interval on their logarithms and the rank test; a single round, the bootstrap
interval from the raw samples; slower/faster only beyond the threshold, else within noise).

"before" is the first runtime (LiteRT by default) and "after" the second: a ratio above 1 means the
second runtime is slower. The backend is each runtime's own (an ExecuTorch program's delegates are
fixed at export), so it is not part of the match.
"""

from __future__ import annotations

from pathlib import Path

from nnlite_tui.core.report.compare import (FASTER, ORDER, RESAMPLES, SEED, Comparison, compare_pair,
                                            inputs_changed)
from nnlite_tui.core.report.rows import ResultRow, RunResults, load_run
from nnlite_tui.core.runtimes import RUNTIMES

DEFAULT_PAIR = (RUNTIMES[0], RUNTIMES[1])  # the default runtime against the next one registered


def _side(run: RunResults, runtime: str) -> RunResults:
    rows = [r for r in run.rows if r.runtime == runtime]
    names = {r.model for r in rows}
    reports = [rep for rep in run.reports if rep.get("model_name") in names]
    return RunResults(run_dir=run.run_dir, rows=rows, reports=reports,
                      statuses={k: v for k, v in run.statuses.items() if k in names},
                      errors={k: v for k, v in run.errors.items() if k in names}, config=run.config,
                      typed=[rep for rep in run.typed if rep.model_name in names])


def _key(row: ResultRow) -> tuple[str, str, str]:
    return (row.base_model, row.device, row.precision)


def compare_runtimes(run_dir: str | Path, runtimes: tuple[str, str] = DEFAULT_PAIR,
                     threshold: float = 0.10, resamples: int = RESAMPLES, seed: int = SEED) -> Comparison:
    """ValueError when the run has no unit of one of the runtimes."""
    first, second = runtimes
    if first == second:
        raise ValueError(f"--by runtime compares two different runtimes, got {first} twice")
    run = load_run(run_dir)
    before, after = _side(run, first), _side(run, second)
    for side, name in ((before, first), (after, second)):
        if not side.rows:
            present = sorted({r.runtime for r in run.rows}) or ["none"]
            raise ValueError(f"{run_dir}: no report of runtime {name} (the run has {', '.join(present)})")
    by_b, by_a = {_key(r): r for r in before.rows}, {_key(r): r for r in after.rows}
    pairs = [compare_pair(by_b[k], by_a[k], threshold, resamples, seed) for k in sorted(set(by_b) & set(by_a))]
    pairs.sort(key=lambda p: (ORDER.index(p.change), -(p.ratio or 0) if p.change != FASTER else (p.ratio or 0)))
    return Comparison(before=before, after=after, threshold=threshold, pairs=pairs,
                      only_before=[by_b[k] for k in sorted(set(by_b) - set(by_a))],
                      only_after=[by_a[k] for k in sorted(set(by_a) - set(by_b))],
                      settings_changed={}, inputs_changed=inputs_changed(pairs), resamples=resamples, seed=seed,
                      sides=(f"{first} in {run.run_dir}", f"{second} in {run.run_dir}"))
