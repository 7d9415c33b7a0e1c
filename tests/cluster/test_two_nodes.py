"""Two Ray nodes on this machine, each with its own adb server and simulated phone.

A run over the cluster benchmarks every model on both phones; killing the second node mid-run
loses nothing: its conversions are redone elsewhere, its device's jobs end with reports that say
the node was lost, and no (model, device) is reported twice. Every Ray process started here is
killed by pid at the end (never `ray stop`: it would stop every Ray on the machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("ray")

from nnlite_tui.core.cluster.lab import Lab, processes_with  # noqa: E402
from nnlite_tui.core.store import RunStore  # noqa: E402
from nnlite_tui.simdevice.adb_server import ADB_ENV, start_adb_server  # noqa: E402
from nnlite_tui.simdevice.apk import build_test_apk  # noqa: E402
from nnlite_tui.simdevice.device import SimConfig, SimDevice  # noqa: E402

pytestmark = pytest.mark.slow
MODELS = ("mnist_lenet", "plain_cnn", "squeezenet_mini")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    apk = build_test_apk(str(root / "bench.apk"))
    # A short temp dir: Ray's unix sockets live under it and have a length limit.
    ray_tmp = Path(tempfile.gettempdir()) / f"nlr-{os.getpid()}"
    cluster = Lab(ray_tmp)
    servers, started, sims, tokens = [], [], {}, []
    try:
        for name in ("node1", "node2"):
            server = start_adb_server()
            servers.append(server)
            sim = SimDevice(SimConfig(adb_server_port=server.port))
            sim.start(wait_for=None)
            sim.wait_phase("ready", timeout=60)
            server.wait_state(sim.serial, "device", timeout=60)
            sims[name] = sim.serial
            node = cluster.start_node(name, num_cpus=1, env={
                **ADB_ENV, "ANDROID_ADB_SERVER_PORT": str(server.port), "ADBUTILS_ADB_PATH": server.adb,
                "PYTHONPATH": str(REPO)}, resources={f"device:{name}:{sim.serial}": 1})
            tokens.append(node.token)
            started.append(sim)
        yield {"lab": cluster, "apk": apk, "serials": sims, "root": root}
    finally:
        cluster.stop()
        for sim in started:
            sim.stop()
        for server in servers:
            server.kill()
        assert all(not processes_with(t) for t in tokens), "a Ray process of the test outlived it"
        subprocess.run(["rm", "-rf", str(ray_tmp)], check=False)


def _nnlite(*args: str, cache: Path, timeout: float = 600) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NNLITE_CACHE_DIR": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _run_args(lab, out: Path) -> list[str]:
    args = ["run", "sample_models", "--cluster", lab["lab"].address, "--device", "all", "--apk", lab["apk"],
            "--out", str(out), "--headless", "--runs", "5", "--min-seconds", "0", "--warmup", "1",
            "--cooldown", "1"]
    for model in MODELS:
        args += ["--include", model]
    return args


def _reports(out: Path) -> dict[tuple[str, str], dict]:
    found = {}
    for path in (out / "reports").glob("*.json"):
        report = json.loads(path.read_text())
        found[(report["model_name"], report["device"]["serial"])] = report
    return found


def _events(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if line.strip()]


def _finished_ok(out: Path) -> list[tuple[str, str, int]]:
    """Every round that measured: (model, device, round)."""
    return [(e["model"], e["device"], e["round"]) for e in _events(out) if e["type"] == "RoundFinished"
            and e["median_ms"] is not None]


def _benchmarking(out: Path, device: str) -> bool:
    """Whether a benchmark stage on `device` has started and not finished (read while the run writes)."""
    in_flight: set[str] = set()
    for line in (out / "events.jsonl").read_text().splitlines():
        try:
            e = json.loads(line)
        except json.JSONDecodeError:  # the line being written
            continue
        if e["type"] in ("StageStarted", "StageFinished") and e["stage"] == "benchmark" and e["device"] == device:
            (in_flight.add if e["type"] == "StageStarted" else in_flight.discard)(e["model"])
    return bool(in_flight)


def test_devices_lists_each_node(lab, tmp_path):
    proc = _nnlite("devices", "--cluster", lab["lab"].address, "--json", cache=tmp_path / "cache")
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    rows = json.loads(out[out.index("{"):])["devices"]
    serials = {r["serial"] for r in rows}
    for node, serial in lab["serials"].items():
        assert f"{node}/{serial}" in serials
        assert f"{node}/host" in serials


def test_run_on_both_nodes_then_lose_one(lab, tmp_path):
    devices = [f"{node}/{serial}" for node, serial in lab["serials"].items()]
    out = tmp_path / "run"
    proc = _nnlite(*_run_args(lab, out), cache=tmp_path / "cache")
    log, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, log[-3000:]
    reports = _reports(out)
    assert set(reports) == {(m, d) for m in MODELS for d in devices}, log[-3000:]
    assert all(r["valid"] for r in reports.values())
    assert {r["device"]["node"] for r in reports.values()} == {"node1", "node2"}
    status = _nnlite("status", str(out), "--events", "500", cache=tmp_path / "cache")
    shown, _ = status.communicate(timeout=120)
    assert status.returncode == 0 and all(d in shown for d in devices), shown[-2000:]

    # The same run again with a fresh cache, and the second node killed while it times a model, once a
    # round has finished: killed between its jobs, the node could have no work left to lose.
    out2 = tmp_path / "run-lose-node2"
    proc = _nnlite(*_run_args(lab, out2), cache=tmp_path / "cache2")
    deadline = time.monotonic() + 400
    while not (out2 / "events.jsonl").exists() or '"RoundFinished"' not in (out2 / "events.jsonl").read_text() \
            or not _benchmarking(out2, devices[1]):
        assert proc.poll() is None and time.monotonic() < deadline, "node2 never timed a model after a round"
        time.sleep(0.1)
    assert lab["lab"].stop_node("node2") > 0
    log, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, log[-3000:]
    reports = _reports(out2)
    assert set(reports) == {(m, d) for m in MODELS for d in devices}, "a (model, device) has no report"
    node1 = devices[0]
    assert all(reports[(m, node1)]["valid"] for m in MODELS), log[-3000:]
    for m in MODELS:
        lost = reports[(m, devices[1])]
        assert lost["valid"] or "node" in (lost.get("error_message") or ""), lost.get("error_message")
    retries = [e for e in _events(out2) if e["type"] == "Recovery" and e["action"] == "retry"]
    assert any("lost" in e["detail"] for e in retries), "no job of the lost node was retried"
    finished = _finished_ok(out2)
    assert len(finished) == len(set(finished)), "a round was measured twice"
    store = RunStore(out2)
    try:
        statuses = {rec["name"]: rec["status"] for rec in store.all()}
    finally:
        store.close()
    assert set(statuses) == set(MODELS) and set(statuses.values()) <= {"done", "failed"}, statuses
