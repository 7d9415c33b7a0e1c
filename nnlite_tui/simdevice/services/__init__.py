"""Service names the host may OPEN, mapped to handlers `async (stream) -> None`."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice


def find_service(device: "SimDevice", service: str):
    from nnlite_tui.simdevice.services import shell, sync

    name, _, rest = service.partition(":")
    if name == "shell" or name.startswith("shell,"):
        options = name.split(",")[1:]
        if "v2" in options:
            return functools.partial(shell.serve_v2, device, rest)
        return functools.partial(shell.serve_v1, device, rest)
    if name == "exec":
        return functools.partial(shell.serve_exec, device, rest)
    if service == "sync:":
        return functools.partial(sync.serve, device)
    if name == "reboot":
        return functools.partial(shell.serve_reboot, device, rest)
    if name == "root":
        return shell.serve_text("adbd cannot run as root in production builds\n")
    return None
