"""Is anything listening at a `--cluster` address? Asked with one TCP connect and a short deadline,
before Ray is imported or anything else starts.

Given an address where no Ray head runs, `ray.init` prints connection warnings and keeps retrying
for minutes; a connect to the head's GCS port tells the same in a few seconds and lets the command
say what to check.
"""

from __future__ import annotations

import os
import socket

from nnlite_tui.core.cluster.session import ClusterError

GCS_PORT = 6379  # Ray's default head (GCS) port: `ray start --head` without --port
CLIENT_PORT = 10001  # Ray Client's default port (ray://HOST)
CONNECT_TIMEOUT_S = 3.0


class ClusterUnreachable(ClusterError):
    """Nothing answers at the address given: a usage error, not a fault of the run."""


def host_and_port(address: str) -> tuple[str, int]:
    """`HOST:PORT`, `HOST` (the GCS port), `ray://HOST[:PORT]` (Ray Client); ClusterUnreachable if malformed."""
    rest, default = (address[len("ray://"):], CLIENT_PORT) if address.startswith("ray://") else (address, GCS_PORT)
    host, sep, port = rest.rpartition(":") if rest.count(":") == 1 or rest.startswith("[") else ("", "", "")
    if not sep:
        host, port = rest, str(default)
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterUnreachable(f"--cluster {address}: not an address; give HOST:PORT of the Ray head "
                                 f"(e.g. 127.0.0.1:{GCS_PORT}), local or auto")
    return host, int(port)


def check_address(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ClusterUnreachable, naming the address and what to check, unless something accepts a
    connection there within `timeout_s` (`local` starts its own Ray; `auto` reads $RAY_ADDRESS)."""
    if address == "local":
        return
    given = address
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "")
        if not address:
            raise ClusterUnreachable("--cluster auto needs RAY_ADDRESS (e.g. 127.0.0.1:6379)")
        given = f"auto (RAY_ADDRESS={address})"
    host, port = host_and_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except socket.timeout:
        why = f"no answer within {timeout_s:g} s"
    except OSError as exc:
        why = exc.strerror or str(exc)
    raise ClusterUnreachable(f"--cluster {given}: nothing answers at {host}:{port} ({why.lower()}); check that the "
                             f"Ray head runs there (`ray start --head --port {port}`) and that {port} is its port")
