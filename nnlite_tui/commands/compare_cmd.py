"""`nnlite compare RUN_A RUN_B`: what got slower or faster, with a bootstrap interval for every pair."""

from __future__ import annotations

import sys
from pathlib import Path

import click

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
@click.option("--runtimes", default="litert,executorch", show_default=True,
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
def compare(before: str, after: str | None, by: str, runtimes: str, threshold: float, fail_on_regression: bool,
            fmt: str, output: str | None, resamples: int) -> None:
    """Compare run BEFORE with run AFTER: the same (model, device, backend, precision) in both, the ratio
    of their medians and its 95% bootstrap confidence interval from the raw samples; lists what is
    only in one run. With --by runtime, compare two runtimes within run BEFORE the same way. Reads
    reports only; nothing is re-run."""
    if after is not None and Path(before).resolve() == Path(after).resolve():
        raise click.UsageError(f"BEFORE and AFTER are the same run ({before}): a run compared with itself shows "
                               "no change; give two runs, or use --by runtime within one")
    from nnlite_tui.core.report.compare import compare_runs
    from nnlite_tui.core.report.compare_format import to_csv, to_table
    from nnlite_tui.core.report.html_compare import to_html

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
