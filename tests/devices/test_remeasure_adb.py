"""`compare --remeasure` on a simulated phone: the artifacts go through the Device protocol like a run's."""

from __future__ import annotations

import json

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.report.remeasure import remeasure
from tests.conftest import REPO
from tests.results.runs import nnlite


def test_remeasure_on_a_simulated_phone(sim_device, tmp_path, monkeypatch):
    monkeypatch.setenv("NNLITE_THERMAL_WAIT_S", "30")
    run = tmp_path / "run"
    proc = nnlite("run", str(REPO / "sample_models" / "plain_cnn.py"), "--out", str(run), "--headless",
                  "--runs", "5", "--min-seconds", "0.05", "--workers", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines: list[str] = []
    cmp = remeasure(run, run, device_name=sim_device.serial, pairs=2, out=tmp_path / "rm", say=lines.append,
                    settings=BenchSettings(warmup=1, runs=5, min_seconds=0.0, warmup_seconds=0.0))
    assert [p.before.model for p in cmp.pairs] == ["plain_cnn"]
    assert sim_device.serial in cmp.remeasured and "re-measured side by side" in cmp.remeasured
    records = [json.loads(line) for line in (tmp_path / "rm" / "rounds.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["median_ns"] for r in records)
    # a phone's benchmark waited for its thermal baseline first, and says what it started at
    assert all(r["thermal"] and "battery_c" in r["thermal"]["start"] for r in records)
    result = json.loads((tmp_path / "rm" / "remeasure.json").read_text())
    assert result["device"]["serial"] == sim_device.serial and result["units"][0]["change"] == "within noise"
