"""`nnlite report RUN_DIR --format csv|jsonl|lemur|html`: re-export a run's reports, or view them as one page."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "lemur", "html"]), default="csv", show_default=True)
@click.option("--output", "-o", type=click.Path(), help="File (csv, jsonl, html) or directory (lemur); default: "
              "stdout for csv/jsonl, RUN_DIR/lemur for lemur, RUN_DIR/report.html for html.")
def report(run_dir: str, fmt: str, output: str | None) -> None:
    """Re-export RUN_DIR's reports: a CSV summary, JSON lines, LEMUR's ab/nn/stat/run layout, or one
    self-contained HTML page (plots, a sortable table, per-model details) that opens offline."""
    from nnlite_tui.core.report.document import to_csv, write_lemur
    from nnlite_tui.core.text_safety import printable
    from nnlite_tui.core.results import load_reports
    from nnlite_tui.core.run_dir import REPORTS_DIR
    from nnlite_tui.core.safe_paths import UnsafePath
    from nnlite_tui.core.report.summary import summary_rows

    path = Path(run_dir)
    if fmt == "html":
        _write_html(path, Path(output) if output else path / "report.html")
        return
    reports = load_reports(path)  # an unreadable report is ReportError: exit 3 naming the file (errors.py)
    if fmt == "lemur":
        out = Path(output) if output else path / "lemur"
        try:
            written = write_lemur(reports, out, sorted((path / REPORTS_DIR).glob("*.json")))
        except UnsafePath as exc:
            raise click.ClickException(f"{exc}; nothing written") from None
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
        # On a terminal, the model-controlled text in the rows (names, error messages) is shown with its
        # control characters escaped; into a pipe or a file it goes as written.
        sys.stdout.write(printable(text, keep_newlines=True) if sys.stdout.isatty() else text)


def _write_html(run_dir: Path, out: Path) -> None:
    from nnlite_tui.core.report.html_report import build_html
    from nnlite_tui.core.report.html_parts import read_run
    from nnlite_tui.core.results import ReportError
    from nnlite_tui.core.store.files import StoreError

    try:
        run = read_run(run_dir)
    except ReportError:
        raise  # exit 3 naming the file (errors.py)
    except ValueError as exc:
        if isinstance(exc.__context__, StoreError):  # read_run re-raises it as a ValueError
            raise exc.__context__ from None
        raise click.ClickException(str(exc)) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(build_html(run), encoding="utf-8")
    tmp.replace(out)
    click.echo(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {len(run.units)} report(s))")
