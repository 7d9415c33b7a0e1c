"""`nnlite tui [RUN_DIR]`: the control console, attached to a run owned by another process.

A run started from this terminal opens the same console through `nnlite run` (run_tui); this
command watches and steers a run that a headless `nnlite run` (nohup, systemd, tmux) owns.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("tui")
@click.argument("run_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--theme", default=None, help="Colour theme (nnlite-dark, nnlite-light, nnlite-high-contrast).")
@click.option("--list-themes", is_flag=True, help="List the available themes and exit.")
def tui(run_dir: Path | None, theme: str | None, list_themes: bool) -> None:
    """Open the control console on RUN_DIR: live while its runner is alive, else its recorded events."""
    from nnlite_tui.core.run.control import runner_pid
    from nnlite_tui.core.run_dir import EVENTS_FILE, STATE_FILE
    from nnlite_tui.tui.themes import load_themes

    if list_themes:
        loaded = load_themes()
        for name in loaded.themes:
            click.echo(name)
        for error in loaded.errors:
            click.echo(error, err=True)
        return
    if run_dir is None:
        raise click.UsageError("give the RUN_DIR of a run to watch, "
                               "or start one in the console with `nnlite run SOURCE --out RUN_DIR`")
    if not run_dir.is_dir():
        raise click.BadParameter(f"{run_dir} is not a directory", param_hint="RUN_DIR")
    pid = runner_pid(run_dir)
    if pid is None and not (run_dir / EVENTS_FILE).exists() and not (run_dir / STATE_FILE).exists():
        raise click.ClickException(f"{run_dir} is not a run: no live runner (runner.pid), {EVENTS_FILE} or {STATE_FILE}")
    if pid is None:
        click.echo(f"no live runner owns {run_dir}: showing what it recorded; "
                   "pause/skip/stop reach nobody until a runner resumes it", err=True)

    from nnlite_tui.tui.app import make_app

    code = make_app(run_dir=str(run_dir), attach=True, theme=theme).run()
    sys.exit(int(code or 0))
