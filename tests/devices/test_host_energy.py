"""The host device's energy windows through its real benchmark process (LocalDevice -> host_bench),
over a hand-made powercap tree given as its root: a RAPL package counter that a thread here advances
at a constant 5 W, wrapping. The process samples it during its idle and load windows; with the same
power in both, the figures equal the hand-set power and the block is invalid for an idle window
noisier than the load difference, as the protocol's rules say."""

from __future__ import annotations

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.local import LocalDevice
from nnlite_tui.core.outcomes import Artifact

from tests.devices.fake_powercap import Meter, powercap_tree


def test_the_host_benchmark_process_measures_a_rapl_counter_it_is_given(tiny_tflite, tmp_path):
    max_range = 4_000_000
    path = powercap_tree(tmp_path / "powercap", max_range)
    meter = Meter(path, max_range, idle_w=5.0, busy_w=5.0)
    meter.start()
    settings = BenchSettings(runs=5, min_seconds=0.1, warmup=1, warmup_seconds=0.0, energy=True, energy_seconds=1.5)
    device = LocalDevice(prestart=False, powercap_root=str(tmp_path / "powercap"))
    try:
        result = device.benchmark(Artifact(str(tiny_tflite), "litert"), settings, "energy")
    finally:
        meter.stop.set()
        meter.join()
        device.close()
    assert result["valid"] is True
    e = result["energy"]
    assert e["source"] == "host" and e["counter"] == "rapl" and e["counter_sources"]["rapl"] == [str(path)]
    assert meter.wraps >= 2 and e["max_energy_range_uj"] == [max_range]
    for window in ("idle", "load"):
        assert e[window]["seconds"] >= 1.5 and e[window]["readings"] >= 30
        assert e[window]["mean_power_mw"] == pytest.approx(5000.0, rel=0.05)  # the meter's 5 W, by hand
    assert e["load"]["inferences"] > 0
    assert e["valid"] is False and e["reason_codes"] == ["noisy_idle"] and e["energy_per_inference_mj"] is None
