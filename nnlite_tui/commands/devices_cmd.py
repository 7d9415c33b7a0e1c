"""`nnlite devices`: the host, attached phones, running emulators and the AVDs that could be started."""

from __future__ import annotations

import json

import click

COLUMNS = ("serial", "kind", "state", "model", "android", "abi")


def collect() -> dict:
    from nnlite_tui.core.devices import adb, emulator
    from nnlite_tui.core.devices.base import DeviceError
    from nnlite_tui.core.devices.local import host_info

    host = host_info()
    rows = [{"serial": "host", "kind": "host", "state": "device", "model": host["model"],
             "android": None, "abi": host["abi"], "emulator": False}]
    notes = []
    try:
        rows += [adb.describe(d["serial"], d["state"]) for d in adb.attached()]
    except DeviceError as err:
        notes.append(f"adb: {err}")
    try:
        avds = emulator.list_avds()
    except emulator.EmulatorError as err:
        avds = None
        notes.append("AVDs: no Android SDK found (set ANDROID_HOME)" if emulator.sdk_root() is None
                     else f"AVDs: {err}")
    return {"devices": rows, "avds": avds, "notes": notes}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def devices(as_json: bool) -> None:
    """List the host, adb devices (phones, emulators, with state) and the AVDs you could start.

    Use a serial with `nnlite run --device SERIAL`, `--device all` for every attached device, or
    `--device emulator:<AVD>` to start an AVD for the run.
    """
    data = collect()
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    rows = [{k: ("" if r.get(k) is None else str(r[k])) for k in COLUMNS} for r in data["devices"]]
    widths = {k: max(len(k), *(len(r[k]) for r in rows)) for k in COLUMNS}
    click.echo("  ".join(k.upper().ljust(widths[k]) for k in COLUMNS).rstrip())
    for r in rows:
        click.echo("  ".join(r[k].ljust(widths[k]) for k in COLUMNS).rstrip())
    if data["avds"] is not None:
        click.echo(f"\nAVDs: {', '.join(data['avds']) or 'none'} (start one with --device emulator:<AVD> "
                   "or `nnlite emulator start <AVD>`)")
    for note in data["notes"]:
        click.echo(f"\n{note}")
