"""`nnlite run --energy` end to end: a simulated phone (its app, its battery) behind the real adb
server, `nnlite run sample_models --device all --energy` as a user types it, and the reports checked
against what the simulated battery was configured to draw, computed here by hand; charging and
counters that never change make every block invalid for that reason; an app of the previous release
and this host say why they have no figure."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nnlite_tui.core.devices import host_energy
from nnlite_tui.simdevice.battery import BatterySpec

REPO = Path(__file__).resolve().parents[2]
MODELS = ("mnist_lenet", "plain_cnn")
WINDOW_S = 2.0


def _run(out: Path, *devices: str, rounds: int = 1) -> list[dict]:
    """`nnlite run --energy`; one round unless asked (the energy windows follow the first round only)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NNLITE_APK", None)
    args = [sys.executable, "-m", "nnlite_tui", "run", "sample_models", "--out", str(out), "--headless",
            "--energy", "--energy-seconds", str(WINDOW_S), "--runs", "5", "--min-seconds", "0.2", "--warmup", "1", "--rounds", str(rounds)]
    for d in devices:
        args += ["--device", d]
    for m in MODELS:
        args += ["--include", m]
    proc = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    reports = [json.loads(p.read_text()) for p in sorted((out / "reports").glob("*.json"))]
    assert len(reports) == len(MODELS) and all(r["valid"] for r in reports), [r["error_message"] for r in reports]
    return reports


def _summary(out: Path) -> dict[str, dict]:
    with open(out / "summary.csv", newline="") as f:
        return {row["model"]: row for row in csv.DictReader(f)}


@pytest.mark.slow
def test_every_report_of_a_phone_on_battery_measures_the_configured_power(sim_device_factory, tmp_path):
    spec = BatterySpec(idle_ma=180.0, busy_ma=620.0, voltage_mv=3850, current_hz=20.0, noise_ma=3.0)
    sim = sim_device_factory(with_app=True, battery=spec)
    reports = _run(tmp_path / "run", "all", rounds=3)
    # Timed in three rounds (three launches), the energy windows once per unit: after its first round.
    assert all(len(r["benchmark"]["rounds"]) >= 3 for r in reports)
    energy_lines = [line for tag, line in sim.logcat_lines if tag == "NNLiteBench" and " ENERGY " in f" {line}"]
    assert len(energy_lines) == len(MODELS), energy_lines
    volts = spec.voltage_mv / 1000.0
    nominal_delta = (spec.busy_ma - spec.idle_ma) * volts  # mA * V = mW: 1694 mW
    summary = _summary(tmp_path / "run")
    for r in reports:
        e = r["benchmark"]["energy"]
        assert e["source"] == "simulated" and e["valid"] is True, e["reason"]
        assert e["counter"] == "current_now" and e["sign_convention"] == "discharge_negative"
        assert e["host_check"]["equal"] is True
        assert e["counter_sources"]["current_now"].endswith("(simulated)")
        # By hand: idle draws 180 mA at 3.85 V; the mean of 40 gauge updates with 3 mA noise is within
        # 4 standard errors (2 mA, 7.3 mW) of it.
        assert e["power_idle_mw"] == pytest.approx(spec.idle_ma * volts, abs=4 * spec.noise_ma / 40 ** 0.5 * volts * 2)
        # Load: the gauge reports each update period's mean, so the load window's first period (1/20 s
        # of the 2 s window) may still show idle; and the windows follow the unit's first round, while
        # the other units still convert on the host's cores the simulated app shares, so its sampler
        # can be late by another period: at most 5 % low, plus the noise.
        load_s, n = e["load"]["seconds"], e["load"]["inferences"]
        lag = 2 / (spec.current_hz * load_s)
        slack = 4 * spec.noise_ma / 40 ** 0.5 * volts * 2
        assert nominal_delta * (1 - lag) - slack <= e["power_delta_mw"] <= nominal_delta + slack
        expected_mj = nominal_delta * load_s / n  # mW * s / inferences = mJ per inference
        assert expected_mj * (1 - lag) - slack * load_s / n <= e["energy_per_inference_mj"] <= \
            expected_mj + slack * load_s / n
        assert e["idle"]["seconds"] >= WINDOW_S and load_s >= WINDOW_S and e["idle"]["readings"] >= 90
        row = summary[r["model_name"]]
        assert float(row["energy_per_inference_mj"]) == pytest.approx(e["energy_per_inference_mj"], rel=1e-5)
        assert row["energy_valid"] == "True" and row["energy_source"] == "simulated"
        assert "rails" not in e  # the simulator has no Power Stats HAL


@pytest.mark.slow
@pytest.mark.parametrize("battery, code, words", [
    (BatterySpec(charging=True), "charging", "on a charger"),
    (BatterySpec(frozen=True), "counter_constant", "no counter changed"),
])
def test_a_charging_phone_or_frozen_counters_give_no_energy_figure(sim_device_factory, tmp_path, battery, code,
                                                                   words):
    sim_device_factory(with_app=True, battery=battery)
    reports = _run(tmp_path / "run", "all")
    summary = _summary(tmp_path / "run")
    for r in reports:
        e = r["benchmark"]["energy"]
        assert e["valid"] is False and e["reason_codes"] == [code] and words in e["reason"]
        assert e["energy_per_inference_mj"] is None and e["power_delta_mw"] is None
        assert e["power_idle_mw"] is None and e["power_load_mw"] is None
        assert e["host_check"]["equal"] is True  # the host's recomputation agrees that it is invalid
        assert r["benchmark"]["stats"]["median_ns"] > 0  # the timed result stands
        row = summary[r["model_name"]]
        assert row["energy_valid"] == "False" and row["energy_per_inference_mj"] == ""
        assert code == "counter_constant" or row["energy_reason"].startswith("the device was on a charger")


@pytest.mark.slow
def test_an_app_of_the_previous_release_runs_without_energy_and_says_so(sim_device_factory, tmp_path):
    sim_device_factory(with_app=True, app_protocol=2)
    for r in _run(tmp_path / "run", "all"):
        e = r["benchmark"]["energy"]
        assert e["valid"] is False and e["reason_codes"] == ["not_measured"]
        assert "predates energy" in e["reason"] and e["energy_per_inference_mj"] is None


@pytest.mark.slow
def test_the_host_says_why_it_has_no_energy_figure(tmp_path):
    counters, why = host_energy.find_counters()
    if counters:
        pytest.skip("this host has a readable RAPL counter")
    for r in _run(tmp_path / "run", "host"):
        e = r["benchmark"]["energy"]
        assert e == host_energy.no_counter_block(why)
        assert e["reason"].startswith("no energy counter on this host")
