"""Snapshots of the console at 160x48 with frozen clocks: main screen in each theme, detail, help, quit.

Review a change with `pytest tests/tui/test_snapshots.py` (the report shows old and new side by side),
then accept it with `--snapshot-update`.
"""

import json

import pytest

from nnlite_tui.tui.messages import PipelineEvents

from .conftest import FROZEN, frozen_app
from .scripted import busy_run_events

SIZE = (160, 48)


async def busy(pilot):
    pilot.app.post_message(PipelineEvents(busy_run_events(FROZEN)))
    await pilot.pause()
    await pilot.pause()


@pytest.mark.parametrize("theme", ["nnlite-dark", "nnlite-light", "nnlite-high-contrast"])
def test_main_screen(snap_compare, theme):
    assert snap_compare(frozen_app(theme=theme), terminal_size=SIZE, run_before=busy)


def test_main_screen_paused_and_filtered(snap_compare):
    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=busy, press=["p", "f", "f", "f", "f", "f", "f"])


def test_detail_screen(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "runs" / "t1" / "reports"
    reports.mkdir(parents=True)
    samples = [1_700_000 + 40_000 * ((i * 7) % 11) + (300_000 if i % 17 == 0 else 0) for i in range(120)]
    stats = {"count": 120, "mean_ns": 1.93e6, "median_ns": 1.90e6, "p90_ns": 2.10e6, "p99_ns": 2.13e6,
             "std_ns": 1.3e5, "min_ns": 1.70e6, "max_ns": 2.40e6}
    report = {"model_name": "model_01", "device_type": "host", "os_version": "Linux 6.1.0 (x86_64)",
              "valid": True, "emulator": False, "error_message": None,
              "in_dim_0": 1, "in_dim_1": 3, "in_dim_2": 32, "in_dim_3": 32,
              "conversion": {"converter": "litert-torch", "converter_version": "0.10.0", "seconds": 6.4,
                             "max_abs_diff": 2.4e-6, "tflite_bytes": 245_312},
              "benchmark": {"stats": stats, "samples_ns": samples, "output_shapes": [[1, 10]]}}
    (reports / "model_01__host__xnnpack.json").write_text(json.dumps(report))
    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=busy, press=["down", "enter"])


def test_help_screen(snap_compare):
    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=busy, press=["question_mark"])
