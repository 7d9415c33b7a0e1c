"""The host's energy arithmetic (core/bench/energy_math.py) against the app's Kotlin core: every case of
the core's energy.json fixture (scripted counter traces) and every energy report it writes must give
the same validity, reasons and figures, bit for bit (PROTOCOL.md section 9f)."""

from __future__ import annotations

import json

import pytest

from nnlite_tui.core.bench import energy_math
from nnlite_tui.core.bench.energy_math import BatteryReading, BatteryState, EnergyWindow

FIGURES = ("valid", "reason", "reason_codes", "counter", "sign_convention", "power_idle_mw", "power_load_mw",
           "idle_noise_mw", "power_delta_mw", "energy_per_inference_mj", "charging")


@pytest.fixture(scope="module")
def energy_cases(core_out) -> dict:
    return json.loads((core_out / "energy.json").read_text())


def _window(readings: list[dict], ns: int) -> EnergyWindow:
    return EnergyWindow([BatteryReading(r["at_ns"], r["current_ua"], r["charge_uah"], r["voltage_uv"])
                         for r in readings], ns)


def test_every_scripted_trace_gives_the_cores_figures(energy_cases):
    assert len(energy_cases) == 15
    for name, case in energy_cases.items():
        idle, load = _window(case["idle"], case["idle_ns"]), _window(case["load"], case["load_ns"])
        before, after = BatteryState.from_dict(case["battery_before"]), BatteryState.from_dict(case["battery_after"])
        r = energy_math.evaluate(idle, load, case["inferences"], before, after, case["read_error"])
        got = energy_math.block(r, case["expected"]["source"], {}, case["expected"]["window_seconds"], idle, load,
                                case["inferences"], before, after)
        for key in FIGURES:
            assert got[key] == case["expected"][key], (name, key)
        for side in ("idle", "load"):
            for key, value in case["expected"][side].items():
                if key != "samples":
                    assert got[side][key] == value, (name, side, key)


def test_the_cores_energy_reports_recompute_exactly(kotlin_reports):
    energy = {k: r for k, r in kotlin_reports.items() if "energy" in r}
    assert {"energy-valid", "energy-charging", "energy-constant-counters", "energy-executorch"} <= set(energy)
    for name, report in energy.items():
        b = report["energy"]
        idle, load = EnergyWindow.from_dict(b["idle"]), EnergyWindow.from_dict(b["load"])
        before, after = BatteryState.from_dict(b["battery_before"]), BatteryState.from_dict(b["battery_after"])
        r = energy_math.evaluate(idle, load, b["load"]["inferences"], before, after)
        got = energy_math.block(r, b["source"], b["counter_sources"], b["window_seconds"], idle, load,
                                b["load"]["inferences"], before, after)
        assert got == b, name


def test_doubles_print_as_kotlin_prints_them():
    k = energy_math.kotlin_double
    assert [k(x) for x in (1.0, 0.5, 601.0, 1e7, 1.25e7, 1e-4, -3e8, 0.001)] == \
        ["1.0", "0.5", "601.0", "1.0E7", "1.25E7", "1.0E-4", "-3.0E8", "0.001"]


def test_the_host_keeps_a_block_that_recomputes_and_strips_one_that_does_not(kotlin_reports):
    from nnlite_tui.core.devices.adb_energy import recomputed

    block = kotlin_reports["energy-valid"]["energy"]
    kept = recomputed(block)
    assert kept["host_check"] == {"recomputed": True, "equal": True, "differences": []}
    assert kept["energy_per_inference_mj"] == block["energy_per_inference_mj"] and kept["valid"] is True
    claimed = {**block, "energy_per_inference_mj": block["energy_per_inference_mj"] * 2}
    stripped = recomputed(claimed)
    assert stripped["valid"] is False and stripped["energy_per_inference_mj"] is None
    assert stripped["power_delta_mw"] is None and "host_recompute_mismatch" in stripped["reason_codes"]
    assert stripped["host_check"]["equal"] is False and "energy_per_inference_mj" in stripped["reason"]
    assert stripped["idle"]["samples"] == block["idle"]["samples"]  # the evidence stays
