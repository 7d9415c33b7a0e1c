"""Ray nodes on this machine with `ray start`, for trying the cluster path and for its tests.

Each node is started with its own environment (its name, its adb server port) and a token in
that environment; every process of the node (GCS, raylet, agents, workers, conversion workers)
inherits it, so a node is stopped by killing exactly the processes that carry its token, never
by `ray stop`, which would stop every Ray on the machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from nnlite_tui.core.cluster.session import LOOPBACK_CLUSTER_ENV, NODE_NAME_ENV

TOKEN_ENV = "NNLITE_LAB_TOKEN"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_with(token: str) -> list[int]:
    """PIDs of the processes whose environment carries TOKEN_ENV=token."""
    import psutil

    wanted = f"{TOKEN_ENV}={token}".encode()
    pids = []
    for proc in psutil.process_iter():
        try:
            with open(f"/proc/{proc.pid}/environ", "rb") as f:
                if wanted in f.read().split(b"\0"):
                    pids.append(proc.pid)
        except OSError:
            continue  # another user's process, or one that just exited: not ours
    return pids


@dataclass
class LabNode:
    name: str
    env: dict[str, str]
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass
class Lab:
    """A head and worker nodes on 127.0.0.1; `stop()` leaves none of their processes behind."""

    temp_dir: Path
    port: int = field(default_factory=_free_port)
    nodes: dict[str, LabNode] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start_node(self, name: str, *, num_cpus: int = 1, env: dict[str, str] | None = None,
                   resources: dict[str, float] | None = None, timeout_s: float = 120.0) -> LabNode:
        head = not self.nodes
        node = LabNode(name, {**os.environ, **LOOPBACK_CLUSTER_ENV, **(env or {}), NODE_NAME_ENV: name})
        node.env[TOKEN_ENV] = node.token
        ray = str(Path(sys.executable).parent / "ray")
        cmd = [ray, "start", "--node-ip-address", "127.0.0.1", "--num-cpus", str(num_cpus),
               "--disable-usage-stats", "--resources", json.dumps(resources or {})]
        if head:
            cmd += ["--head", "--port", str(self.port), "--temp-dir", str(self.temp_dir),
                    "--include-dashboard", "false"]
        else:
            cmd += ["--address", self.address]
        self.nodes[name] = node
        done = subprocess.run(cmd, env=node.env, capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            raise RuntimeError(f"ray start for {name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return node

    def stop_node(self, name: str, timeout_s: float = 20.0) -> int:
        """Kill every process of the node (SIGKILL, as a crash would); how many there were."""
        node = self.nodes.pop(name, None)
        if node is None:
            return 0
        killed: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while (pids := processes_with(node.token)) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
                except ProcessLookupError:
                    pass  # exited meanwhile
            time.sleep(0.2)
        return len(killed)

    def stop(self) -> None:
        for name in list(self.nodes)[::-1]:
            self.stop_node(name)

    def wait_nodes(self, count: int, timeout_s: float = 120.0) -> None:
        """Until the cluster lists `count` live nodes (asks the GCS from a subprocess: no ray here)."""
        code = ("import ray,sys; ray.init(address=sys.argv[1], _node_ip_address='127.0.0.1', "
                "include_dashboard=False, log_to_driver=False);"
                "print(sum(1 for n in ray.nodes() if n['Alive']))")
        deadline = time.monotonic() + timeout_s
        seen = None
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", code, self.address], capture_output=True, text=True,
                                  env={**os.environ, **LOOPBACK_CLUSTER_ENV}, timeout=timeout_s)
            seen = done.stdout.strip().splitlines()[-1:] or done.stderr[-300:]
            if seen == [str(count)]:
                return
            time.sleep(1)
        raise TimeoutError(f"the cluster did not reach {count} live nodes (last: {seen})")
