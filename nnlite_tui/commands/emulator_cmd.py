"""`nnlite emulator list|start|stop`: Android emulators (AVDs) started headless, watched while they boot."""

from __future__ import annotations

import sys
import time

import click

from nnlite_tui.exit_codes import ExitCode


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(ExitCode.NOTHING)


class _Printer:
    """Boot phases as lines on stderr (a Reporter for the boot monitor)."""

    def emit(self, event) -> None:
        phase = getattr(event, "phase", None)
        if phase is not None:
            click.echo(f"  {event.boot_elapsed_s or 0:6.1f} s  {phase:<8} {event.detail}", err=True)


@click.group()
def emulator() -> None:
    """List, start and stop Android emulators (needs the Android SDK's emulator and an AVD)."""


@emulator.command("list")
def list_cmd() -> None:
    """AVDs that can be started and emulators that run (with the PID if nnlite started them)."""
    from nnlite_tui.core.devices import emulator as emu
    from nnlite_tui.core.devices.adb_link import ensure_server
    from nnlite_tui.core.devices.base import DeviceError

    try:
        avds = emu.list_avds()
        click.echo("AVDs: " + (", ".join(avds) or "none"))
    except emu.EmulatorError as err:
        click.echo(f"AVDs: {err}")
    try:
        ensure_server()
        rows = emu.running()
    except DeviceError as err:
        _fail(str(err))
    if not rows:
        click.echo("No emulator is running.")
    for r in rows:
        ours = f"  started by nnlite (pid {r['pid']})" if r["pid"] else ""
        click.echo(f"{r['serial']}  {r['state']}  {r['avd'] or '?'}{ours}")


@emulator.command()
@click.argument("avd")
@click.option("--port", type=int, help="Console port (even, 5554-5682; default: the first free pair).")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True, help="Boot deadline (s).")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait until booted and ready.")
@click.option("--emulator-arg", "extra", multiple=True, help="Extra argument for the emulator (repeatable).")
def start(avd: str, port: int | None, timeout_s: float, wait: bool, extra: tuple[str, ...]) -> None:
    """Start AVD headless (-no-window -no-audio -no-snapshot-save) and watch it boot."""
    from nnlite_tui.core.devices import adb_boot, adb_link
    from nnlite_tui.core.devices import emulator as emu
    from nnlite_tui.core.devices.base import DeviceError

    try:
        binary = emu.check_avd(avd)
        adb_link.ensure_server()
        port = port or emu.free_port({d["serial"] for d in adb_link.list_devices()})
    except (emu.EmulatorError, DeviceError) as err:
        _fail(str(err))
    serial = f"emulator-{port}"
    proc = emu.start_process(avd, port, binary, extra_args=extra)
    emu.remember(serial, avd, proc.pid)
    click.echo(f"started {avd} as {serial} (pid {proc.pid}, log {proc.log_path})", err=True)
    if not wait:
        click.echo(serial)
        return
    t0 = time.monotonic()

    def alive() -> str | None:
        return None if proc.poll() is None else f"the emulator exited with code {proc.returncode}"

    try:
        seconds = adb_boot.wait_ready(adb_link.Link(serial), "emulator", _Printer(), timeout_s, started=t0,
                                      alive=alive)
    except DeviceError as err:
        _fail(f"{err}; see {proc.log_path}")
    click.echo(f"{serial} ready after {seconds:.1f} s", err=True)
    click.echo(serial)


@emulator.command()
@click.argument("target")
def stop(target: str) -> None:
    """Stop an emulator by serial (emulator-5554) or AVD name: `adb emu kill`, then our PID if it stays."""
    from nnlite_tui.core.devices import adb_link
    from nnlite_tui.core.devices import emulator as emu
    from nnlite_tui.core.devices.base import DeviceError

    try:
        adb_link.ensure_server()
        rows = emu.running()
    except DeviceError as err:
        _fail(str(err))
    match = [r for r in rows if target in (r["serial"], r["avd"], r["avd_started"])]
    if not match and target.startswith("emulator-") and emu.load_state(target):
        match = [{"serial": target, "pid": emu.load_state(target)["pid"]}]
    if not match:
        _fail(f"no running emulator {target!r} (running: {', '.join(r['serial'] for r in rows) or 'none'})")
    for r in match:
        how = emu.stop(r["serial"], r["pid"])
        click.echo(f"stopped {r['serial']} ({how})")
