"""The `nnlite` command group.

Start-up must stay fast (`nnlite --help` well under 0.5 s): subcommands live in their own modules
and are imported only when invoked. Nothing here imports torch, litert_torch or textual.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from nnlite_tui import __version__
from nnlite_tui.errors import DEBUG_ENV, install_thread_hook, report
from nnlite_tui.exit_codes import ExitCode

# name -> ("module:attribute", short help). The help text is here so `--help` needs no import.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "convert": ("nnlite_tui.commands.convert_cmd:convert", "Convert models to each runtime's artifact and validate them."),
    "run": ("nnlite_tui.commands.run_cmd:run", "Convert and benchmark models on a device; resumable."),
    "predict": ("nnlite_tui.commands.predict_cmd:predict", "Predict latency from per-op profiles of earlier runs."),
    "status": ("nnlite_tui.commands.status_cmd:status", "Counts by status and the last events of a run."),
    "report": ("nnlite_tui.commands.report_cmd:report", "Re-export a run's reports (csv, jsonl, lemur, html)."),
    "compare": ("nnlite_tui.commands.compare_cmd:compare", "Compare two runs (or two runtimes): slower/faster beyond the noise."),
    "devices": ("nnlite_tui.commands.devices_cmd:devices", "List the host, adb devices, emulators and AVDs."),
    "emulator": ("nnlite_tui.commands.emulator_cmd:emulator", "List, start and stop Android emulators."),
    "tui": ("nnlite_tui.commands.tui_cmd:tui", "Open the control console (optionally attached to a run)."),
    "cache": ("nnlite_tui.commands.cache_cmd:cache", "The conversion cache: info, prune."),
    "lemur": ("nnlite_tui.commands.lemur_cmd:lemur", "Get the LEMUR corpus (nn-dataset) as a tree nnlite reads."),
    "doctor": ("nnlite_tui.commands.doctor_cmd:doctor", "Which isolation model code runs under here, and why."),
    "sim-device": ("nnlite_tui.simdevice.command:sim_device", "Run a simulated Android device for adb."),
}


class LazyGroup(click.Group):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Every error a command did not handle becomes one line and an exit code (errors.py); `--debug`
        anywhere on the line (or NNLITE_DEBUG=1) adds the traceback."""
        args = list(sys.argv[1:] if args is None else args)
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:end]:
            args = [a for i, a in enumerate(args) if i >= end or a != "--debug"]
            os.environ[DEBUG_ENV] = "1"  # re-executed runs and worker processes inherit it
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        install_thread_hook()
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            exc.show()
            # click's own exit code for a plain ClickException is 1, which here means a bug
            sys.exit(ExitCode.USAGE if exc.exit_code == 1 else exc.exit_code)
        except BrokenPipeError:  # `nnlite report RUN | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(ExitCode.OK)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(ExitCode.STOPPED)
        except Exception as exc:  # noqa: BLE001 - the last stop before a traceback would reach the user
            sys.exit(report(exc))
        sys.exit(code if isinstance(code, int) else ExitCode.OK)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            target, _ = LAZY_COMMANDS[cmd_name]
            module_name, attr = target.split(":")
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name and module_name.startswith(exc.name):
                    raise click.ClickException(f"command {cmd_name!r} is not available in this build") from exc
                raise
            return getattr(module, attr)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, LAZY_COMMANDS[name][1]) for name in sorted(LAZY_COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nnlite")
@click.option("--debug", is_flag=True, help="On an error, print the traceback as well as the one-line message.")
def main(debug: bool) -> None:
    """nnlite: convert PyTorch models to LiteRT and ExecuTorch and benchmark them on phones, emulators or this host."""
