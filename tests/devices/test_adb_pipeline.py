"""The real pipeline (conversion, store, reports, recovery) over simulated adb devices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.devices import adb as adb_mod
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.events import DeviceState, ModelStatus, RecordingReporter, Recovery
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.run.setup import build_pipeline
from nnlite_tui.core.store import load_snapshot
from tests.conftest import REPO
from tests.devices.conftest import FAST_TIMEOUTS, HANG_TIMEOUTS

pytestmark = pytest.mark.slow  # real conversions and runs

SAMPLES = [REPO / "sample_models" / "mnist_lenet.py", REPO / "sample_models" / "plain_cnn.py"]
SMALL = BenchSettings(warmup=1, runs=5, min_seconds=0.0)


def run(out: Path, devices: list[str], monkeypatch, timeouts=FAST_TIMEOUTS, **kw):
    # Short deadlines for every AdbDevice the registry makes (the CLI's defaults are minutes).
    original = adb_mod.AdbDevice.__init__

    def fast_init(self, serial, **dkw):
        dkw.setdefault("timeouts", Timeouts(**timeouts))
        dkw.setdefault("boot_timeout_s", 30.0)
        dkw.setdefault("reconnect_timeout_s", 20.0)
        original(self, serial, **dkw)

    monkeypatch.setattr(adb_mod.AdbDevice, "__init__", fast_init)
    cfg = RunConfig(sources=[str(s) for s in SAMPLES], out=out, devices=devices, bench=kw.pop("bench", SMALL),
                    convert=ConvertOptions(workers=1, timeout_s=120), backoff_s=0.1, cooldown_s=0.1, **kw)
    rec = RecordingReporter()
    pipeline = build_pipeline(cfg)
    try:
        outcome = pipeline.run(rec, Control())
    finally:
        pipeline.store.close()
    reports = [json.loads(p.read_text()) for p in sorted((out / "reports").glob("*.json"))]
    _, records = load_snapshot(out)
    return outcome, rec, reports, {r["name"]: r for r in records}


def test_two_simulators_every_model_on_both_and_one_booting_mid_run(sim_device_factory, tmp_path, monkeypatch):
    a = sim_device_factory(profile="emu-arm64")
    b = sim_device_factory(profile="emu-x86_64", boot_seconds=4.0, wait="offline")  # still booting
    outcome, rec, reports, records = run(tmp_path / "r2", ["all"], monkeypatch, cooldown_temp=80.0)
    assert not outcome.stopped
    assert {n: r["status"] for n, r in records.items()} == {"mnist_lenet": "done", "plain_cnn": "done"}
    got = sorted((r["model_name"], r["device"]["serial"]) for r in reports)
    assert got == sorted((m, s) for m in ("mnist_lenet", "plain_cnn") for s in (a.serial, b.serial))
    for report in reports:
        sim = a if report["device"]["serial"] == a.serial else b
        assert report["valid"] is True and report["emulator"] is True
        assert report["device_type"] == sim.props["ro.product.model"]
        assert report["os_version"] == (f"Android {sim.props['ro.build.version.release']} (SDK "
                                        f"{sim.props['ro.build.version.sdk']}, build {sim.props['ro.build.id']})")
        assert report["device"]["abi"] == sim.props["ro.product.cpu.abi"]
        assert report["device"]["cpu"]["cpu_cores"] == sim.profile.cores
        assert report["total_ram_kb"] == sim.profile.mem_total_kb
        assert report["state_before"]["max_temperature_c"] is not None
        cooldown = report["benchmark"]["cooldown"]  # --cooldown-temp reads the device's thermal zones
        assert cooldown["threshold_c"] == 80.0 and cooldown["reached"] and 25.0 < cooldown["start_c"] < 80.0
        assert report["benchmark"]["device_report_path"].endswith(report["benchmark"]["run_id"] + ".json")
    boot = [e for e in rec.of(DeviceState) if e.serial == b.serial and e.phase]
    assert [e.phase for e in boot][-1] == "ready" and {"booting", "booted"} & {e.phase for e in boot}
    assert not [e for e in rec.of(DeviceState) if e.serial == a.serial and e.phase]  # a was already up


def test_app_crashing_every_time_ends_failed_after_the_cap_with_recovery(sim_device_factory, tmp_path, monkeypatch):
    good = sim_device_factory()
    bad = sim_device_factory(faults="app_crash=100")
    outcome, rec, reports, records = run(tmp_path / "crash", [good.serial, bad.serial], monkeypatch,
                                         max_attempts=2)
    assert not outcome.stopped
    assert {n: r["status"] for n, r in records.items()} == {"mnist_lenet": "failed", "plain_cnn": "failed"}
    for name, record in records.items():
        assert record["devices"][good.serial]["status"] == "done"
        failed = record["devices"][bad.serial]
        assert failed["status"] == "failed" and failed["attempts"] == 2
        assert failed["error"]["stage"] == "device:crash" and "simulated crash" in failed["error"]["message"]
    by_device = {(r["model_name"], r["device"]["serial"]): r for r in reports}
    assert by_device[("plain_cnn", bad.serial)]["valid"] is False
    assert by_device[("plain_cnn", good.serial)]["valid"] is True
    actions = [(e.action, e.target) for e in rec.of(Recovery)]
    assert ("retry", f"mnist_lenet@{bad.serial}") in actions and ("give-up", f"plain_cnn@{bad.serial}") in actions
    assert ("reconnect", bad.serial) in actions  # the escalation reached the device itself
    final = {e.model: e.status for e in rec.of(ModelStatus)}
    assert final == {"mnist_lenet": "failed", "plain_cnn": "failed"}


def test_device_that_hangs_am_start_fails_its_models_without_re_exec(sim_device_factory, tmp_path, monkeypatch):
    sim = sim_device_factory(faults="hang_shell=am start")
    outcome, rec, reports, records = run(tmp_path / "hang", [sim.serial], monkeypatch, timeouts=HANG_TIMEOUTS,
                                         allow_reexec=True)
    assert not outcome.stopped and not outcome.reexec
    assert {n: r["status"] for n, r in records.items()} == {"mnist_lenet": "failed", "plain_cnn": "failed"}
    errors = [r["devices"][sim.serial]["error"] for r in records.values()]
    assert all(e["stage"] == "device:timeout" and "am start" in e["message"] for e in errors)
    assert sorted(r["devices"][sim.serial]["attempts"] for r in records.values())[-1] >= 2
    actions = [e.action for e in rec.of(Recovery) if e.target == sim.serial]
    assert "reconnect" in actions and "restart" in actions and "re-exec" not in actions
    assert "not retried" in " ".join(e["message"] for e in errors)


def test_a_device_that_throttles_is_flagged_in_reports_events_summary_and_console(sim_device_factory, tmp_path,
                                                                                   monkeypatch):
    from nnlite_tui.core.report.document import summary_row
    from nnlite_tui.tui.state import RunView

    sim = sim_device_factory(faults="throttle_after=0.1s")
    outcome, rec, reports, records = run(tmp_path / "hot", [sim.serial], monkeypatch,
                                         bench=BenchSettings(warmup=1, runs=5, min_seconds=0.3))
    assert {n: r["status"] for n, r in records.items()} == {"mnist_lenet": "done", "plain_cnn": "done"}
    for report in reports:
        assert report["conditions"]["throttled"] is True and report["conditions"]["source"] == "simulated"
        assert summary_row(report)["throttled"] is True
    done = [e for e in rec.of(ModelStatus) if e.status == "done"]
    # Throttled, and on a busy host the rounds may also disagree ("unstable"): nothing else.
    assert {e.model for e in done} == {"mnist_lenet", "plain_cnn"}
    assert all(e.flags[0] == "throttled" and set(e.flags) <= {"throttled", "unstable"} for e in done)
    view = RunView()
    for event in rec.events:
        view.apply(event)
    assert view.models["plain_cnn"].flags == next(e.flags for e in done if e.model == "plain_cnn")
