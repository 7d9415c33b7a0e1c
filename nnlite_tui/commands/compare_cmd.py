"""`nnlite compare RUN_A RUN_B`: what got slower or faster, with an interval for every pair; `--remeasure`
times both runs' artifacts again side by side (core/report/remeasure.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nnlite_tui.core.runtimes import RUNTIMES
from nnlite_tui.core.text_safety import printable

from nnlite_tui.exit_codes import ExitCode

EPILOG = """\b
Exit codes:
  0  compared (with --fail-on-regression: and nothing got slower or broke)
  2  usage error (missing path, not a run directory, unreadable report)
  6  --fail-on-regression and a pair is slower beyond the threshold, or failed after
     and not before"""


@click.command(epilog=EPILOG)
@click.argument("before", type=click.Path(exists=True, file_okay=False))
@click.argument("after", type=click.Path(exists=True, file_okay=False), required=False)
@click.option("--by", "by", type=click.Choice(["run", "runtime"]), default="run", show_default=True,
              help="run: compare run BEFORE with run AFTER; runtime: compare two runtimes within the one run "
                   "BEFORE (--runtimes), each model on the same device and at the same precision.")
@click.option("--runtimes", default=",".join(RUNTIMES[:2]), show_default=True,
              help="With --by runtime: the two runtimes, before,after (a ratio above 1: the second is slower).")
@click.option("--threshold", type=click.FloatRange(min=0, max=100, min_open=True), default=10.0, show_default=True,
              help="Percent. A pair is slower/faster only when the whole confidence interval of the ratio of "
                   "medians lies outside 1 ± threshold.")
@click.option("--fail-on-regression", is_flag=True, help=f"Exit {int(ExitCode.REGRESSION)} when a pair is slower "
              "(or valid before, failed after).")
@click.option("--format", "fmt", type=click.Choice(["table", "html", "csv"]), default="table", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@click.option("--resamples", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Bootstrap resamples per pair.")
@click.option("--remeasure", is_flag=True,
              help="Time both runs' artifacts again, side by side on one device in one session (ABBA pairs in "
                   "fresh processes) and judge the pairs, instead of the runs' own figures. Resumable.")
@click.option("--device", "device_name", default="host", show_default=True,
              help="With --remeasure: host, or an adb serial.")
@click.option("--rounds", "pairs", type=click.IntRange(min=1), default=6, show_default=True,
              help="With --remeasure: ABBA pairs per unit (5 or more for a verdict).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="With --remeasure: the folder for its state and result (default AFTER/remeasure).")
@click.option("--min-seconds", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="With --remeasure: timed seconds of each benchmark (the same for both sides).")
@click.option("--runs", "bench_runs", type=click.IntRange(min=1), default=20, show_default=True,
              help="With --remeasure: at least this many timed runs per benchmark.")
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True,
              help="With --remeasure: warm-up runs per benchmark.")
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="With --remeasure: the conversion cache to take artifacts from (default $NNLITE_CACHE_DIR "
                   "or ~/.cache/nnlite/convert).")
def compare(before: str, after: str | None, by: str, runtimes: str, threshold: float, fail_on_regression: bool,
            fmt: str, output: str | None, resamples: int, remeasure: bool, device_name: str, pairs: int,
            out_dir: str | None, min_seconds: float, bench_runs: int, warmup: int, cache_dir: str | None) -> None:
    """Compare run BEFORE with run AFTER: the same (model, device, backend, precision) in both, the ratio
    of their medians and its 95% bootstrap confidence interval from the raw samples; lists what is
    only in one run. With --by runtime, compare two runtimes within run BEFORE the same way. When both
    runs kept their devices' reference figures, each interval also covers the change of session and no
    verdict is smaller than the device's own move between the runs. Reads reports only, unless
    --remeasure: then both runs' artifacts are timed again side by side on one device (resumable) and
    the pairs are judged instead."""
    if after is not None and Path(before).resolve() == Path(after).resolve():
        raise click.UsageError(f"BEFORE and AFTER are the same run ({before}): a run compared with itself shows "
                               "no change; give two runs, or use --by runtime within one")
    from nnlite_tui.core.report.compare import compare_runs
    from nnlite_tui.core.report.compare_format import to_csv, to_table
    from nnlite_tui.core.report.html_compare import to_html

    if remeasure and by == "runtime":
        raise click.UsageError("--remeasure compares two runs, not --by runtime")
    try:
        if by == "runtime":
            if after is not None:
                raise ValueError(f"--by runtime compares within one run; got a second run {after}")
            from nnlite_tui.core.report.compare_runtimes import compare_runtimes
            from nnlite_tui.core.runtimes import parse_runtimes

            pair = tuple(r.strip() for r in runtimes.split(",") if r.strip())
            if len(pair) != 2:
                raise ValueError(f"--runtimes takes two runtimes, before,after; got {runtimes!r}")
            parse_runtimes(",".join(pair))  # names an unknown one
            cmp = compare_runtimes(before, pair, threshold=threshold / 100, resamples=resamples)
        else:
            if after is None:
                raise ValueError("compare takes two run directories, BEFORE and AFTER (or one with --by runtime)")
            if remeasure:
                cmp = _remeasure(before, after, threshold, device_name, pairs, out_dir, min_seconds, bench_runs,
                                 warmup, cache_dir)
            else:
                cmp = compare_runs(before, after, threshold=threshold / 100, resamples=resamples)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    text = {"table": to_table, "csv": to_csv, "html": to_html}[fmt](cmp)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    else:
        sys.stdout.write(printable(text, keep_newlines=True) if fmt != "html" else text)
    if fail_on_regression and cmp.regressions:
        names = ", ".join(f"{p.before.model} ({p.change})" for p in cmp.regressions[:10])
        click.echo(printable(f"{len(cmp.regressions)} regression(s): {names}"), err=True)
        sys.exit(ExitCode.REGRESSION)


def _remeasure(before: str, after: str, threshold: float, device_name: str, pairs: int, out_dir: str | None,
               min_seconds: float, runs: int, warmup: int, cache_dir: str | None):
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.report.remeasure import remeasure

    settings = BenchSettings(warmup=warmup, runs=runs, min_seconds=min_seconds, warmup_seconds=min(0.2, min_seconds),
                             max_seconds=max(10.0, 4 * min_seconds))
    return remeasure(before, after, device_name=device_name, pairs=pairs, settings=settings,
                     threshold=threshold / 100, out=out_dir, cache_dir=cache_dir,
                     say=lambda line: click.echo(line, err=True))
