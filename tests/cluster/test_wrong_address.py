"""A --cluster address where no Ray head runs fails in seconds, with one line that names it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from nnlite_tui.core.cluster.address import ClusterUnreachable, check_address, host_and_port
from tests.conftest import REPO


def free_loopback_port() -> int:
    """A loopback port nothing listens on: bound once by us, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_with_a_wrong_cluster_address_exits_2_with_one_line(tmp_path):
    port = free_loopback_port()
    address = f"127.0.0.1:{port}"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "nnlite_tui", "run", "sample_models", "--include", "mnist_lenet",
                           "--cluster", address, "--out", str(tmp_path / "run"), "--headless"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: --cluster {address}: nothing answers at {address} (connection refused)")
    assert f"ray start --head --port {port}" in lines[0]
    assert took < 10, f"took {took:.1f} s"
    assert not (tmp_path / "run").exists()  # nothing started: no run directory


def test_an_address_that_answers_passes_and_malformed_ones_say_what_to_give():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_address(f"127.0.0.1:{server.getsockname()[1]}")  # something listens: no error
    assert host_and_port("10.0.0.1") == ("10.0.0.1", 6379)
    assert host_and_port("ray://10.0.0.1") == ("10.0.0.1", 10001)
    assert host_and_port("[::1]:6380") == ("::1", 6380)
    for bad in ("127.0.0.1:port", "127.0.0.1:0", ":6379"):
        with pytest.raises(ClusterUnreachable, match="not an address"):
            host_and_port(bad)


def test_auto_without_ray_address_says_so(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ClusterUnreachable, match="RAY_ADDRESS"):
        check_address("auto")
