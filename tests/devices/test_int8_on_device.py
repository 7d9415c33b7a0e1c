"""A full-int8 unit benchmarked on simulated devices: the app fills its int8 input with the model's
scale and zero point, and an app that applies them wrongly (fault input_scale) is caught on the host."""

from __future__ import annotations

import json

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.devices import adb as adb_mod
from nnlite_tui.core.devices.adb_app import Timeouts
from nnlite_tui.core.events import RecordingReporter
from nnlite_tui.core.run.setup import build_pipeline
from tests.conftest import REPO
from tests.devices.conftest import FAST_TIMEOUTS


def test_int8_input_is_quantized_with_the_models_parameters_and_a_wrong_scale_fails_the_run(
        sim_device_factory, tmp_path, monkeypatch):
    good = sim_device_factory()
    wrong = sim_device_factory(faults="input_scale=2")  # quantizes with twice the scale, reports the right one
    original = adb_mod.AdbDevice.__init__

    def fast_init(self, serial, **kw):
        kw.setdefault("timeouts", Timeouts(**FAST_TIMEOUTS))
        original(self, serial, **kw)

    monkeypatch.setattr(adb_mod.AdbDevice, "__init__", fast_init)
    out = tmp_path / "int8"
    cfg = RunConfig(sources=[str(REPO / "sample_models" / "mnist_lenet.py")], out=out,
                    devices=[good.serial, wrong.serial], precisions=("int8",),
                    bench=BenchSettings(warmup=1, runs=5, min_seconds=0.0, warmup_seconds=0.0),
                    convert=ConvertOptions(workers=1, timeout_s=180, calibration_samples=8),
                    backoff_s=0.1, cooldown_s=0.1)
    pipeline = build_pipeline(cfg)
    try:
        pipeline.run(RecordingReporter(), Control())
    finally:
        pipeline.store.close()
    reports = {r["device"]["serial"]: r for r in
               (json.loads(p.read_text()) for p in (out / "reports").glob("*.json"))}
    assert set(reports) == {good.serial, wrong.serial}

    ok = reports[good.serial]
    expected = ok["conversion"]["quantization"]["input_quantization"]
    assert ok["conversion"]["artifact_input_dtype"] == "int8" and expected["scale"] > 0
    fill = ok["benchmark"]["input_fill"][0]
    assert fill["dtype"] == "int8" and fill["scale"] == expected["scale"] and fill["zero_point"] == expected["zero_point"]
    assert ok["valid"] is True and ok["benchmark"]["input_check"]["verified"] is True, ok["benchmark"]["input_check"]
    assert ok["accuracy"]["precision"] == "int8"

    bad = reports[wrong.serial]
    assert bad["valid"] is False and bad["error"]["stage"] == "benchmark:input", bad["error"]
    assert "standard deviation" in bad["error_message"]
    assert bad["benchmark"]["input_fill"][0]["scale"] == expected["scale"]  # the app's record alone looked right
