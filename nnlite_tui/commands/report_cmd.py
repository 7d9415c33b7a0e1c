"""`nnlite report RUN_DIR --format csv|jsonl|lemur`: re-export a run's reports."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "lemur"]), default="csv", show_default=True)
@click.option("--output", "-o", type=click.Path(), help="File (csv, jsonl) or directory (lemur); default: stdout "
              "for csv/jsonl, RUN_DIR/lemur for lemur.")
def report(run_dir: str, fmt: str, output: str | None) -> None:
    """Re-export RUN_DIR's reports: a CSV summary, JSON lines, or LEMUR's ab/nn/stat/run layout."""
    from nnlite_tui.core.report import load_reports, to_csv, write_lemur
    from nnlite_tui.core.summary import summary_rows

    path = Path(run_dir)
    try:
        reports = load_reports(path)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "lemur":
        out = Path(output) if output else path / "lemur"
        written = write_lemur(reports, out)
        click.echo(f"wrote {len(written)} LEMUR report(s) under {out / 'ab' / 'nn' / 'stat' / 'run'}")
        return
    if fmt == "csv":
        text = to_csv(summary_rows(path))
    else:
        text = "".join(json.dumps(r, default=str) + "\n" for r in reports)
    if output:
        Path(output).write_text(text)
        click.echo(f"wrote {output}", err=True)
    else:
        sys.stdout.write(text)
