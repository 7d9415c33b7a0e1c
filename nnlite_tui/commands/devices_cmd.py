"""`nnlite devices`: the host, attached phones, running emulators and the AVDs that could be started."""

from __future__ import annotations

import json

import click

from nnlite_tui.core.text_safety import printable

COLUMNS = ("serial", "kind", "state", "model", "android", "abi")


def collect() -> dict:
    from nnlite_tui.core.devices import adb, adb_link, emulator
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
    started = adb_link.started_here()
    if started is not None:  # left running by design: the next command finds its devices at once
        notes.append(f"adb: nothing answered on port {started[0]}, so this command started an adb server there "
                     f"(pid {started[1] or 'unknown'}); it keeps running for the next commands "
                     f"(`adb -P {started[0]} kill-server` stops it)")
    try:
        avds = emulator.list_avds()
    except emulator.EmulatorError as err:
        avds = None
        notes.append("AVDs: no Android SDK found (set ANDROID_HOME)" if emulator.sdk_root() is None
                     else f"AVDs: {err}")
    return {"devices": rows, "avds": avds, "notes": notes}


def collect_cluster(address: str) -> dict:
    """Every node's devices (serials as NODE/SERIAL) and its notes."""
    from nnlite_tui.core.cluster.remote_device import list_nodes
    from nnlite_tui.core.cluster.address import check_address
    from nnlite_tui.core.cluster.session import connect

    check_address(address)
    session = connect(address)
    try:
        nodes = list_nodes()
    finally:
        session.shutdown()
    rows = [{**d, "node": n["node"], "serial": f"{n['node']}/{d['serial']}"} for n in nodes for d in n["devices"]]
    notes = [f"{n['node']}: {note}" for n in nodes for note in n["notes"]]
    return {"devices": rows, "avds": None, "notes": notes, "nodes": [n["node"] for n in nodes]}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--cluster", metavar="ADDRESS", help="List every node's devices of a Ray cluster (local, auto or an "
                                                    "address), grouped by node.")
def devices(as_json: bool, cluster: str | None) -> None:
    """List the host, adb devices (phones, emulators, with state) and the AVDs you could start.

    Use a serial with `nnlite run --device SERIAL`, `--device all` for every attached device, or
    `--device emulator:<AVD>` to start an AVD for the run.
    """
    if cluster:
        from nnlite_tui.core.cluster.session import ClusterError

        try:
            data = collect_cluster(cluster)
        except ClusterError as exc:
            raise click.ClickException(str(exc)) from None
    else:
        data = collect()
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    rows = [{k: ("" if r.get(k) is None else printable(r[k])) for k in COLUMNS} for r in data["devices"]]
    widths = {k: max(len(k), *(len(r[k]) for r in rows)) for k in COLUMNS}
    click.echo("  ".join(k.upper().ljust(widths[k]) for k in COLUMNS).rstrip())
    node = None
    for r, raw in zip(rows, data["devices"]):
        if raw.get("node") is not None and raw["node"] != node:
            node = raw["node"]
            click.echo(printable(f"-- node {node}"))
        click.echo("  ".join(r[k].ljust(widths[k]) for k in COLUMNS).rstrip())
    if data["avds"] is not None:
        click.echo(f"\nAVDs: {', '.join(data['avds']) or 'none'} (start one with --device emulator:<AVD> "
                   "or `nnlite emulator start <AVD>`)")
    for note in data["notes"]:
        click.echo("\n" + printable(note))
