"""`nnlite status RUN_DIR`: counts by status and the last events; safe while the run is live."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from nnlite_tui.core.text_safety import printable

LINE_WIDTH = 160
NAME_WIDTH = 48


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--events", "n_events", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the last events to show.")
def status(run_dir: str, n_events: int) -> None:
    """Counts by status and the last events of RUN_DIR (also while another process runs it)."""
    from nnlite_tui.core.run.control import runner_pid
    from nnlite_tui.core.events import STATUSES
    from nnlite_tui.core.run.event_log import last_events, paused as was_paused
    from nnlite_tui.core.store.files import StoreError, load_snapshot, state_path

    path = Path(run_dir)
    if not state_path(path).exists():
        raise click.UsageError(f"{run_dir} has no state.json: not a run directory")
    try:
        config, records = load_snapshot(path)
    except StoreError as exc:
        from nnlite_tui.errors import report
        sys.exit(report(exc))
    pid = runner_pid(path)
    counts = {s: 0 for s in STATUSES}
    for rec in records:
        counts[rec.get("status", "queued")] = counts.get(rec.get("status", "queued"), 0) + 1
    paused = was_paused(path) if pid else False
    state = f"live (pid {pid}){', PAUSED' if paused else ''}" if pid else "not running"
    click.echo(printable(f"run {path}  [{state}]  {len(records)} models"))
    click.echo("  " + "  ".join(f"{s} {counts[s]}" for s in STATUSES))
    for problem in unreadable_reports(path)[:5]:
        click.echo(printable(f"  warning: {problem}; the next `nnlite run` on this directory measures that unit "
                             f"again"))
    failed = [r for r in records if r.get("status") == "failed"][:5]
    for rec in failed:
        err = rec.get("error") or {}
        click.echo(printable(f"  failed {rec['name']}: {err.get('stage')}: {err.get('type')}: {err.get('message')}"))
    shown = last_events(path, n_events)
    if shown:
        click.echo("last events:")
    for ev in shown:
        click.echo(event_line(ev))


def unreadable_reports(run_dir: Path) -> list[str]:
    """What is wrong with each report file that cannot be read (named)."""
    from nnlite_tui.core.results import RunResults

    return [problem for _, problem in sorted(RunResults(run_dir).problems.items())]


def event_line(event) -> str:
    """One event on one line of at most LINE_WIDTH characters, its unit's name cut in the middle."""
    from nnlite_tui.core.names import cut_end, short_name

    d = event.to_dict()
    kind = d.pop("type")
    ts = d.pop("ts")
    for key in ("model", "target"):  # a unit (the target of a retry is one) keeps its @... suffix
        if isinstance(d.get(key), str):
            d[key] = short_name(d[key], NAME_WIDTH)
    detail = " ".join(f"{k}={v}" for k, v in d.items() if v not in (None, "", [], {}, ()) and k not in ("models",))
    line = printable(f"  {time.strftime('%H:%M:%S', time.localtime(ts))} {kind} {detail}")
    return cut_end(line, LINE_WIDTH)
