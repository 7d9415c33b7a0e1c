"""`nnlite run --runtime`: a LiteRT run resumed with ExecuTorch added converts and measures only the new
units, and every report, row and record names its runtime (real conversions, host benchmarks, store)."""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import subprocess
import sys

import pytest

from nnlite_tui.core.store import load_snapshot
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # real conversions and runs

LENET = REPO / "sample_models" / "mnist_lenet.py"
ARGS = ["--headless", "--runs", "10", "--warmup", "1", "--min-seconds", "0", "--workers", "1", "--precision",
        "fp32,int8"]


def nnlite(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc


def events_of(run, since: int = 0) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()[since:]]


def test_a_run_resumed_with_executorch_adds_only_its_units(tmp_path):
    run = tmp_path / "run"
    nnlite("run", str(LENET), "--out", str(run), "--runtime", "litert", *ARGS)
    litert = {p.name: json.loads(p.read_text())["created_at"] for p in (run / "reports").glob("*.json")}
    assert sorted(litert) == ["mnist_lenet@int8__host__xnnpack.json", "mnist_lenet__host__xnnpack.json"]
    seen = len(events_of(run))

    nnlite("run", str(LENET), "--out", str(run), "--runtime", "all", *ARGS)
    resumed = events_of(run, seen)
    converted = {e["model"] for e in resumed if e["type"] == "StageStarted" and e["stage"] == "convert"}
    measured = {e["model"] for e in resumed if e["type"] == "StageStarted" and e["stage"] == "benchmark"}
    assert converted == measured == {"mnist_lenet@executorch", "mnist_lenet@executorch@int8"}
    for name, created in litert.items():  # the LiteRT units' reports stand as the first run wrote them
        assert json.loads((run / "reports" / name).read_text())["created_at"] == created

    _, records = load_snapshot(run)
    assert {r["name"]: (r["status"], r["spec"].get("runtime", "litert")) for r in records} == {
        "mnist_lenet": ("done", "litert"), "mnist_lenet@int8": ("done", "litert"),
        "mnist_lenet@executorch": ("done", "executorch"), "mnist_lenet@executorch@int8": ("done", "executorch")}
    reports = {r["model_name"]: r for r in (json.loads(p.read_text()) for p in (run / "reports").glob("*.json"))}
    et, et8 = reports["mnist_lenet@executorch"], reports["mnist_lenet@executorch@int8"]
    assert (et["runtime"], et["runtime_version"]) == ("executorch", importlib.metadata.version("executorch"))
    assert reports["mnist_lenet"]["runtime_version"] == importlib.metadata.version("ai-edge-litert")
    assert et["model"]["base_name"] == et8["model"]["base_name"] == "mnist_lenet"
    # LEMUR's keys stay, and the runtime is beside them
    assert {"model_name", "device_type", "duration", "unit", "in_dim_0", "runtime", "runtime_version"} <= set(et)
    # int8 through the XNNPACK quantizer, judged like LiteRT's int8
    acc = et8["accuracy"]
    assert acc["precision"] == "int8" and acc["route"].startswith("pt2e-xnnpack") and acc["verdict"] == "ok"
    assert acc["samples"] == reports["mnist_lenet@int8"]["accuracy"]["samples"] == 16
    assert et8["conversion"]["quantization"]["size_ratio"] < 0.5
    d = et8["conversion"]["delegation"]
    assert d["partitions"] == 2 and d["delegated_ops"] < d["total_ops"]  # the pool stays outside, as in fp32

    rows = {r["model"]: r for r in csv.DictReader((run / "summary.csv").open())}
    for unit, base in (("mnist_lenet@executorch", "mnist_lenet"), ("mnist_lenet@executorch@int8", "mnist_lenet@int8")):
        want = reports[unit]["duration"] / reports[base]["duration"]  # the headline medians, across rounds
        assert rows[unit]["runtime"] == "executorch"
        assert float(rows[unit]["ratio_to_litert"]) == pytest.approx(want, abs=2e-4)
    # speed-up against fp32 stays within a runtime
    want = et["duration"] / et8["duration"]
    assert float(rows["mnist_lenet@executorch@int8"]["speedup_vs_fp32"]) == pytest.approx(want, abs=2e-4)
