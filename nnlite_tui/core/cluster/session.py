"""Connecting to a Ray cluster: offline and quiet settings, `local`/`auto`/an address, node names."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

# Offline and quiet: no usage stats, no auth token file, a loopback node address allowed.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# Several nodes on one machine's loopback (a lab on one host, the tests): Ray refuses them unless told.
LOOPBACK_CLUSTER_ENV = {**RAY_ENV, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
NODE_NAME_ENV = "NNLITE_NODE_NAME"  # set on `ray start` to name a node in serials (node2/emulator-5560)
NAMESPACE = "nnlite"


class ClusterError(RuntimeError):
    """No Ray, or no cluster at the address given."""


def import_ray():
    try:
        import ray
    except ImportError as exc:
        raise ClusterError("--cluster needs Ray: pip install 'nnlite-tui[ray]'") from exc
    return ray


def node_name() -> str:
    """This node's name: $NNLITE_NODE_NAME, or the host name."""
    return os.environ.get(NODE_NAME_ENV) or socket.gethostname()


@dataclass
class ClusterSession:
    address: str
    started_local: bool

    def shutdown(self) -> None:
        ray = import_ray()
        if ray.is_initialized():
            ray.shutdown()


def connect(address: str) -> ClusterSession:
    """`local`: a private Ray instance on this machine; `auto`: $RAY_ADDRESS; else a Ray address."""
    loopback = address.split(":")[0] in ("127.0.0.1", "localhost")
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)
    if loopback:
        os.environ.update(LOOPBACK_CLUSTER_ENV)
    ray = import_ray()
    if ray.is_initialized():
        return ClusterSession(address, started_local=False)
    local = address == "local"
    kwargs = {"namespace": NAMESPACE, "include_dashboard": False, "log_to_driver": False,
              "configure_logging": False}
    if local:
        # Workers must import this package: hand them the driver's import path (a lab's nodes
        # have nnlite-tui installed instead; see docs/scaling.md).
        root = str(Path(__file__).resolve().parents[3])
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        os.environ["PYTHONPATH"] = path
        kwargs.update(address="local", _node_ip_address="127.0.0.1")
    elif address == "auto":
        if not os.environ.get("RAY_ADDRESS"):
            raise ClusterError("--cluster auto needs RAY_ADDRESS (e.g. 127.0.0.1:6379)")
        kwargs["address"] = "auto"
    else:
        kwargs["address"] = address
        if loopback:
            kwargs["_node_ip_address"] = "127.0.0.1"  # a cluster on this machine: stay on loopback
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"--cluster {address}: could not connect to Ray: {exc}") from exc
    return ClusterSession(address, started_local=local)


def alive_nodes() -> list[dict]:
    ray = import_ray()
    return [n for n in ray.nodes() if n.get("Alive")]


def cluster_cpus() -> int:
    ray = import_ray()
    return int(ray.cluster_resources().get("CPU", 1))
