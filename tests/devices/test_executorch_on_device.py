"""Both runtimes through the real pipeline on the host and a simulated device (the real adb server, the
simulated app of protocol 3 running the .pte on ExecuTorch's runtime), and an older app that does not
announce ExecuTorch: its ExecuTorch unit is refused with a message that names the fix."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.devices import adb as adb_mod
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.events import RecordingReporter
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.run.setup import build_pipeline
from nnlite_tui.core.store import load_snapshot
from nnlite_tui.core.bench.reference import REFERENCE_FILE
from tests.conftest import REPO
from tests.devices.conftest import FAST_TIMEOUTS

LENET = REPO / "sample_models" / "mnist_lenet.py"


def unit_starts(sim) -> list[str]:
    """The app's START lines of the run's units (not of the reference model the run times beside them)."""
    import hashlib

    reference = hashlib.sha256(REFERENCE_FILE.read_bytes()).hexdigest()[:8]
    return [line for tag, line in sim.logcat_lines
            if tag == "NNLiteBench" and " START " in line and f"/{reference}" not in line]
SMALL = BenchSettings(warmup=1, runs=5, min_seconds=0.0)


def run_both(out: Path, devices: list[str], monkeypatch) -> tuple[list[dict], dict[str, dict]]:
    original = adb_mod.AdbDevice.__init__

    def fast_init(self, serial, **kw):
        kw.setdefault("timeouts", Timeouts(**FAST_TIMEOUTS))
        kw.setdefault("boot_timeout_s", 30.0)
        kw.setdefault("reconnect_timeout_s", 20.0)
        original(self, serial, **kw)

    monkeypatch.setattr(adb_mod.AdbDevice, "__init__", fast_init)
    cfg = RunConfig(sources=[str(LENET)], out=out, devices=devices, bench=SMALL,
                    convert=ConvertOptions(workers=1, timeout_s=300), backoff_s=0.1, cooldown_s=0.1, max_attempts=2,
                    runtimes=("litert", "executorch"), rounds=1, max_rounds=1)  # one launch per unit
    pipeline = build_pipeline(cfg)
    try:
        outcome = pipeline.run(RecordingReporter(), Control())
    finally:
        pipeline.store.close()
    assert not outcome.stopped
    reports = [json.loads(p.read_text()) for p in sorted((out / "reports").glob("*.json"))]
    _, records = load_snapshot(out)
    return reports, {r["name"]: r for r in records}


def test_every_report_carries_the_runtime_it_ran_on_the_host_and_the_simulated_device(sim_device_factory, tmp_path,
                                                                                      monkeypatch):
    sim = sim_device_factory()
    reports, records = run_both(tmp_path / "run", ["host", sim.serial], monkeypatch)
    assert {n: r["status"] for n, r in records.items()} == {"mnist_lenet": "done", "mnist_lenet@executorch": "done"}
    versions = {"litert": importlib.metadata.version("ai-edge-litert"),
                "executorch": importlib.metadata.version("executorch")}
    seen = set()
    for report in reports:
        runtime = "executorch" if report["model_name"].endswith("@executorch") else "litert"
        bench = report["benchmark"]
        seen.add((report["model_name"], report["device"]["serial"]))
        assert report["valid"], report["error_message"]
        # The unit's runtime, and what the device says ran (the simulator: the host's wheels)
        assert (report["runtime"], report["runtime_version"]) == (runtime, versions[runtime])
        assert (bench["runtime"], bench["runtime_version"]) == (runtime, versions[runtime])
        assert report["model"]["base_name"] == "mnist_lenet" and report["in_dim_1"] == 28
        if runtime == "executorch":
            assert bench["timing"]["wall_clock"] == "Method.execute" and bench["native_stats"] is None
            assert bench["delegation"]["backends"] == ["XnnpackBackend"]
            assert bench["input_shapes"] == [[1, 28, 28, 1]]
            assert report["conversion"]["delegation"]["delegated_ops"] == 15
        if report["device"]["serial"] == sim.serial:
            assert bench["protocol_version"] == 3
            assert bench["capabilities"]["runtimes"] == versions
    assert seen == {(u, d) for u in ("mnist_lenet", "mnist_lenet@executorch") for d in ("host", sim.serial)}
    # The app was told the runtime: its START line says which one it ran.
    starts = unit_starts(sim)
    assert sorted(" runtime=executorch " in line for line in starts) == [False, True]


def test_an_app_that_does_not_announce_executorch_gets_no_executorch_unit(sim_device_factory, tmp_path, monkeypatch):
    old = sim_device_factory(app_protocol=2)  # the previous release: LiteRT only, no capabilities
    reports, records = run_both(tmp_path / "old", [old.serial], monkeypatch)
    assert records["mnist_lenet"]["status"] == "done"
    refused = records["mnist_lenet@executorch"]
    assert refused["status"] == "failed" and refused["error"]["stage"] == "device:install"
    assert refused["error"]["message"] == (
        f"{old.serial}: the installed benchmark app (0.2.0, protocol 2) does not announce the executorch runtime; "
        "install the current APK (android-app/README.md)")
    by_unit = {r["model_name"]: r for r in reports}
    assert by_unit["mnist_lenet"]["valid"] and by_unit["mnist_lenet"]["runtime"] == "litert"
    # A protocol-2 report names no runtime version: none is invented for it.
    assert by_unit["mnist_lenet"]["runtime_version"] is None
    assert not by_unit["mnist_lenet@executorch"]["valid"]
    # Refused before anything was sent: the app benchmarked the LiteRT unit only (it may have been asked for
    # its capabilities once, a launch without a model, when the ExecuTorch unit came first).
    starts = unit_starts(old)
    assert len(starts) == 1 and ".tflite" in starts[0] and old.app.launches in (1, 2)
    # Asked cold (nothing learnt yet), the host probes the app: the answer has no capabilities, so no model
    # is pushed and the app never starts a benchmark.
    from nnlite_tui.core.devices import adb_app, adb_runtimes
    from nnlite_tui.core.devices.adb_link import Link
    from nnlite_tui.core.devices.base import DeviceError
    from nnlite_tui.core.outcomes import Artifact

    pte = next((tmp_path / "old" / "artifacts").glob("*.pte"))  # kept: its unit failed
    adb_runtimes.forget(old.serial)
    launches = old.app.launches
    with pytest.raises(DeviceError) as err:
        adb_app.run_benchmark(Link(old.serial), Artifact(str(pte), "executorch"), SMALL, "cold",
                              Timeouts(**FAST_TIMEOUTS))
    assert (err.value.kind, err.value.transient) == ("install", False)
    assert "does not announce the executorch runtime" in str(err.value)
    assert old.app.launches == launches + 1  # the probe
    assert len(unit_starts(old)) == 1  # still the LiteRT unit's only


def test_an_app_announcing_other_runtimes_is_told_which_it_has():
    from nnlite_tui.core.devices import adb_runtimes

    adb_runtimes.learn("emu-1", {"protocol_version": 3, "app_version": "0.3.0",
                                 "capabilities": {"runtimes": {"litert": "1.4.2"}, "extras": ["runtime"]}})
    assert adb_runtimes.refusal("emu-1", "litert") is None
    assert adb_runtimes.refusal("emu-1", "executorch") == (
        "emu-1: the installed benchmark app (0.3.0) has runtimes litert only, not executorch; install the current "
        "APK (android-app/README.md)")
    adb_runtimes.forget("emu-1")
    assert not adb_runtimes.known("emu-1")
