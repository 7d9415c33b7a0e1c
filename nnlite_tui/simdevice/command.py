"""`nnlite sim-device`: run a simulated Android device for the adb server on this host."""

from __future__ import annotations

import asyncio
import logging
import signal

import click

from nnlite_tui.simdevice.app import PACKAGE, VERSION_NAMES
from nnlite_tui.simdevice.boot import BootTimings
from nnlite_tui.simdevice.faults import FaultSpec
from nnlite_tui.simdevice.profiles import DEFAULT_PROFILE, PROFILES


@click.command("sim-device")
@click.option("--port", type=int, default=0, show_default=True, help="Device port on 127.0.0.1 (0: a free one).")
@click.option("--adb-port", type=int, default=None,
              help="adb server port to register with (default: $ANDROID_ADB_SERVER_PORT or 5037).")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default=DEFAULT_PROFILE, show_default=True,
              help="Device profile: props, CPU, memory, thermal zones.")
@click.option("--serial-name", default=None, help="ro.serialno of the device (the adb serial stays emulator-N).")
@click.option("--boot-seconds", type=float, default=0.0, show_default=True,
              help="Total boot time: absent, offline, booting, boot_completed, package manager ready.")
@click.option("--faults", "faults_spec", default="", help="Fault spec, e.g. 'drop_after=5s,hang_shell=am start,"
              "install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE,app_crash=1,truncated_report=1,reboot_after=60s'.")
@click.option("--no-register", is_flag=True, help="Do not announce as an emulator; use `adb connect 127.0.0.1:PORT`.")
@click.option("--features", default=None, help="Comma-separated banner features (default: the profile's).")
@click.option("--root", type=click.Path(file_okay=False), default=None,
              help="Keep the device filesystem in this directory (default: a temp dir, removed at exit).")
@click.option("--with-app", is_flag=True, help="Come with the benchmark app (org.nnlite.bench) installed, so "
              "`nnlite run --device ...` needs no APK; starts the adb server if none runs.")
@click.option("--app-protocol", type=click.IntRange(1, 3), default=3, show_default=True,
              help="Play the app release of this protocol: 3 the current one (LiteRT and ExecuTorch), 2 or 1 an "
                   "older one (LiteRT only).")
@click.option("--battery", "battery_spec", default="", help="The simulated battery, e.g. 'charging=1', "
              "'frozen=1', 'sign=discharge_positive,current_hz=4,noise_ma=10' (keys: nnlite_tui/simdevice/battery.py).")
@click.option("-v", "--verbose", is_flag=True, help="Log transports and services.")
def sim_device(port, adb_port, profile, serial_name, boot_seconds, faults_spec, no_register, features, root,
               with_app, app_protocol, battery_spec, verbose) -> None:
    """Run a simulated Android device that speaks the adb protocol (until Ctrl-C).

    Fault spec keys: drop_after, drop_for, offline_after, offline_for, reboot_after (durations: 5s,
    500ms), hang_shell=PREFIX[|PREFIX], install_fail=INSTALL_..., app_crash=N, truncated_report=N.
    """
    from nnlite_tui.simdevice.battery import BatterySpec
    from nnlite_tui.simdevice.device import SimConfig, SimDevice

    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(message)s")
    try:
        faults = FaultSpec.parse(faults_spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--faults") from exc
    try:
        battery = BatterySpec.parse(battery_spec)
    except (TypeError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--battery") from exc
    config = SimConfig(port=port, adb_server_port=adb_port, register=not no_register, profile=profile,
                       serial_name=serial_name, boot=BootTimings.total(boot_seconds), faults=faults, root=root,
                       with_app=with_app, app_protocol=app_protocol, battery=battery,
                       features=tuple(f for f in features.split(",") if f) if features is not None else None)
    sim = SimDevice(config)
    if with_app and config.register:
        _ensure_adb_server(sim.adb_server_port)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):  # stop cleanly: close transports, remove the sandbox
            loop.add_signal_handler(sig, sim.request_stop, f"signal {sig.name}")
        task = asyncio.create_task(sim.serve())
        while sim.port is None and not task.done():
            await asyncio.sleep(0.01)
        if sim.port is not None:
            how = (f"registering as {sim.serial} with the adb server on port {sim.adb_server_port}"
                   if config.register else f"run: adb connect 127.0.0.1:{sim.port}")
            app = f", with {PACKAGE} {VERSION_NAMES[config.app_protocol]} installed" if with_app else ""
            click.echo(f"sim-device {profile} listening on 127.0.0.1:{sim.port} (files in {sim.fs.root}){app}; "
                       f"{how}", err=True)
        await task

    asyncio.run(main())
    click.echo("sim-device stopped", err=True)


def _ensure_adb_server(port: int) -> None:
    """Start the adb server when none answers, so that the device is listed at once (a run started
    right after this command finds it). It is a daemon and stays, as after any `adb start-server`."""
    import os

    from nnlite_tui.core.devices import adb_link
    from nnlite_tui.core.devices.base import DeviceError

    os.environ["ANDROID_ADB_SERVER_PORT"] = str(port)
    try:
        if adb_link.ensure_server():
            click.echo(f"sim-device: started the adb server on port {port} (it keeps running; "
                       "`adb kill-server` stops it)", err=True)
    except DeviceError as exc:
        raise click.ClickException(str(exc)) from exc
