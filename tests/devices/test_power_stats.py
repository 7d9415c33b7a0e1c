"""Per-rail energy from the Power Stats HAL's dump: the simulator has no HAL (its reports carry no
rails), so the parse and the window arithmetic are checked on a hand-made dump in the AIDL HAL's
format (`[rail]:subsystem   <cumulative> mWs`)."""

from __future__ import annotations

import pytest

from nnlite_tui.core.devices import power_stats

HEADER = """
============= PowerStats HAL 2.0 state residencies ==============
            Entity                State         Total time     Total entries   Last entry tstamp
               CPU                 ON            1234 ms               5               6789 ms
========== End of PowerStats HAL 2.0 state residencies ==========

============= PowerStats HAL 2.0 energy meter ==============
                           Channel    Cumulative Energy
"""


def dump(at_s: float, cpu_big: float, gpu: float) -> str:
    return (f"T={at_s:.6f}\n{HEADER}"
            f"  {'[S2M_VDD_CPUCL2]:CPU(BIG)':>32}   {cpu_big:14.2f} mWs\n"
            f"  {'[S4M_VDD_GPU]:GPU':>32}   {gpu:14.2f} mWs\n"
            "========== End of PowerStats HAL 2.0 energy meter ==========\n"
            f"T={at_s + 0.02:.6f}\n")


def test_the_energy_meter_section_parses():
    rails = power_stats.parse_energy_meter(dump(100.0, 12345.67, 89.5))
    assert rails == {"[S2M_VDD_CPUCL2]:CPU(BIG)": 12345.67, "[S4M_VDD_GPU]:GPU": 89.5}
    snap = power_stats.parse_snapshot(dump(100.0, 1.0, 2.0))
    assert snap.at_ms == pytest.approx(100_010.0)
    # A device without the HAL (what the simulator answers) and a shell without $EPOCHREALTIME: nothing.
    assert power_stats.parse_snapshot(f"T=1.0\nCan't find service: {power_stats.SERVICE}\nT=1.1\n") is None
    assert power_stats.parse_snapshot(dump(1.0, 1.0, 1.0).replace("T=1.000000", "T=")) is None


def test_rail_power_and_energy_per_inference_over_the_windows():
    # Hand-made: idle window 1000..1010 s at CPU 200 mW / GPU 10 mW, load 1010..1020 s at CPU 1700 mW,
    # GPU unchanged; the dump read every second.
    snaps, cpu, gpu = [], 0.0, 0.0
    for k in range(0, 22):
        t = 999.5 + k
        snaps.append(power_stats.parse_snapshot(dump(t - 0.01, cpu, gpu)))
        cpu += 200.0 if t < 1010 else 1700.0
        gpu += 10.0
    block = {"battery_before": {"at_ms": 1_000_000.0}, "battery_after": {"at_ms": 1_020_000.0},
             "idle": {"seconds": 10.0}, "load": {"seconds": 10.0, "inferences": 500}}
    out = power_stats.rail_energy(snaps, block)
    assert out["valid"] is True
    cpu_rail = out["rails"]["[S2M_VDD_CPUCL2]:CPU(BIG)"]
    assert cpu_rail["power_idle_mw"] == pytest.approx(200.0)
    assert cpu_rail["power_load_mw"] == pytest.approx(1700.0)
    assert cpu_rail["energy_per_inference_mj"] == pytest.approx(1500.0 * 10.0 / 500)  # 30 mJ
    gpu_rail = out["rails"]["[S4M_VDD_GPU]:GPU"]
    assert gpu_rail["power_delta_mw"] == pytest.approx(0.0, abs=1e-9) and gpu_rail["energy_per_inference_mj"] is None


def test_windows_the_dump_did_not_cover_give_no_rail_figure():
    snaps = [power_stats.parse_snapshot(dump(1000.0 + k * 4, k * 100.0, 0.0)) for k in range(3)]
    block = {"battery_before": {"at_ms": 1_000_000.0}, "battery_after": {"at_ms": 1_020_000.0},
             "idle": {"seconds": 10.0}, "load": {"seconds": 10.0, "inferences": 5}}
    out = power_stats.rail_energy(snaps, block)
    assert out["valid"] is False and "did not cover" in out["reason"] and out["rails"] == {}
