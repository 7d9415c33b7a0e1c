"""The views of energy per inference, on reports whose energy blocks are made here from hand-written
counter traces (the arithmetic is the app's, core/bench/energy_math.py): summary.csv's columns, the
LEMUR export's extra key, the detail screen's line, the HTML report's Energy section, and compare's
energy table by latency's statistics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nnlite_tui.core.bench import energy_math
from nnlite_tui.core.bench.energy_math import BatteryReading, BatteryState, EnergyWindow
from nnlite_tui.core.report.compare import compare_runs
from nnlite_tui.core.report.compare_format import to_csv, to_table
from nnlite_tui.core.report.document import summary_row, write_lemur
from nnlite_tui.core.report.energy import LEMUR_KEY
from nnlite_tui.core.report.html_report import build_html
from nnlite_tui.core.report.html_parts import read_run

VOLTS_UV = 3_850_000
ON_BATTERY = BatteryState(0, 80.0, 30.0, 3850, 0, 3)
CHARGING = BatteryState(0, 80.0, 30.0, 3850, 2, 2)


def window(mean_ma: float, seconds: float = 10.0, jitter_ma: float = 2.0) -> EnergyWindow:
    """A 10 Hz gauge read every 20 ms: each value held for five readings, a fixed ±jitter pattern."""
    readings = []
    for j in range(int(seconds * 50) + 1):
        update = j // 5
        ma = mean_ma + jitter_ma * math.sin(update * 1.7)
        readings.append(BatteryReading(j * 20_000_000, -int(round(ma * 1000)), None, VOLTS_UV))
    return EnergyWindow(readings, int(seconds * 1e9))


def block(load_ma: float, inferences: int = 1000, state: BatteryState = ON_BATTERY) -> dict:
    idle, load = window(200.0), window(load_ma)
    r = energy_math.evaluate(idle, load, inferences, state, state)
    return energy_math.block(r, "device", {"current_now": "test", "charge_counter": None, "voltage": "test"}, 10.0,
                             idle, load, inferences, state, state)


def report(model: str, energy: dict | None, median_ms: float = 10.0) -> dict:
    samples = [median_ms * 1e6 * (1 + 0.001 * (i % 7)) for i in range(50)]
    bench = {"backend_used": "xnnpack", "stats": {"median_ns": median_ms * 1e6, "count": 50}, "samples_ns": samples,
             "settings": {"backend": "xnnpack"}}
    if energy is not None:
        bench["energy"] = energy
    return {"model_name": model, "valid": True, "device_type": "Pixel 8", "model": {"name": model, "task": "img"},
            "device": {"serial": "phone1", "model": "Pixel 8", "kind": "phone"}, "benchmark": bench}


def write_run(path: Path, reports: list[dict]) -> Path:
    (path / "reports").mkdir(parents=True)
    for r in reports:
        (path / "reports" / f"{r['model_name']}__phone1__xnnpack.json").write_text(json.dumps(r))
    return path


def test_a_hand_made_trace_gives_the_hand_computed_energy():
    b = block(600.0)
    # (600 - 200) mA at 3.85 V for 10 s over 1000 inferences: 1540 mW * 10 s / 1000 = 15.4 mJ.
    assert b["valid"] is True and b["energy_per_inference_mj"] == pytest.approx(15.4, rel=1e-3)
    invalid = block(600.0, state=CHARGING)
    assert invalid["valid"] is False and invalid["energy_per_inference_mj"] is None


def test_summary_lemur_and_detail_carry_the_figure_or_why_not(tmp_path):
    from nnlite_tui.tui.screens.detail import report_lines

    good, charging, none = report("a", block(600.0)), report("b", block(600.0, state=CHARGING)), report("c", None)
    row = summary_row(good)
    assert row["energy_per_inference_mj"] == pytest.approx(15.4, rel=1e-3) and row["energy_valid"] is True
    assert row["power_load_mw"] == pytest.approx(600 * 3.85, rel=1e-3)
    bad = summary_row(charging)
    assert bad["energy_per_inference_mj"] is None and bad["energy_valid"] is False
    assert bad["energy_reason"].startswith("the device was on a charger")
    assert summary_row(none)["energy_valid"] is None  # never asked: nothing, not "False"
    written = write_lemur([good, charging, none], tmp_path / "lemur")
    exported = [json.loads(p.read_text()) for p in written]
    assert exported[0][LEMUR_KEY]["energy_per_inference_mj"] == pytest.approx(15.4, rel=1e-3)
    assert exported[1][LEMUR_KEY]["energy_per_inference_mj"] is None and LEMUR_KEY not in exported[2]
    assert "energy      per inference 15.4 mJ" in report_lines(Path("a.json"), good).plain
    assert "no figure: the device was on a charger" in report_lines(Path("b.json"), charging).plain
    assert "energy" not in report_lines(Path("c.json"), none).plain


def test_html_report_plots_energy_against_latency_per_device(tmp_path):
    run = write_run(tmp_path / "run", [report("a", block(600.0), 10.0), report("b", block(900.0), 20.0),
                                       report("c", block(600.0, state=CHARGING), 12.0)])
    html = build_html(read_run(run))
    section = html[html.index("<h2>Energy</h2>"):html.index("<h2>", html.index("<h2>Energy</h2>") + 5)]
    assert "Reports without an energy figure (1)" in section and "on a charger" in section
    # the figures travel in the data block (the page plots them per device, with the mJ column)
    data = json.loads(html[html.index('id="nnlite-data">') + 17:html.index("</script>", html.index('id="nnlite-data">'))])
    cols = data["columns"]
    energy = {m: mj for m, mj in zip(cols["model"], cols["mj"])}
    assert energy["c"] is None and energy["a"] > 0 and energy["b"] > energy["a"]
    assert "Pixel 8" in {data["strings"][d] for d in cols["device"]}


def test_compare_energy_by_the_statistics_of_latency(tmp_path):
    before = write_run(tmp_path / "before", [report("same", block(600.0)), report("more", block(600.0)),
                                             report("lost", block(600.0))])
    after = write_run(tmp_path / "after", [report("same", block(600.0)), report("more", block(800.0)),
                                           report("lost", block(600.0, state=CHARGING))])
    cmp = compare_runs(before, after)
    by_model = {e.pair.before.model: e for e in cmp.energy}
    assert by_model["same"].change == "unchanged" and by_model["same"].ratio == pytest.approx(1.0)
    # 600 mA -> 800 mA against 200 mA idle: (800 - 200) / (600 - 200) = 1.5 times the energy.
    more = by_model["more"]
    assert more.change == "more" and more.ratio == pytest.approx(1.5, rel=1e-3)
    assert more.ci[0] <= 1.5 <= more.ci[1] and more.ci[0] > 1.1
    lost = by_model["lost"]
    assert lost.change == "not comparable" and "after: the device was on a charger" in lost.why
    table = to_table(cmp)
    assert "energy per inference (mJ" in table and "not comparable" in table
    header, *rows = to_csv(cmp).splitlines()
    assert "energy_ratio" in header and any(",more" in r for r in rows)
