"""Snapshots of the console at 160x48 with frozen clocks: main screen in each theme, detail, help, quit.

Review a change with `pytest tests/tui/test_snapshots.py` (the report shows old and new side by side),
then accept it with `--snapshot-update`.
"""

import json

import pytest

from nnlite_tui.core.events import DeviceState, ModelLog, ModelStatus, Recovery, RunStarted, StageFinished
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
    # raw figures as the pipeline records them: the screen rounds them and names units
    report = {"model_name": "model_01", "device_type": "host", "os_version": "Linux 6.1.0 (x86_64)",
              "valid": True, "emulator": False, "error_message": None,
              "in_dim_0": 1, "in_dim_1": 3, "in_dim_2": 32, "in_dim_3": 32,
              "conversion": {"converter": "litert-torch", "converter_version": "0.10.0", "seconds": 5.651615198000002,
                             "max_abs_diff": 8.568167686462402e-08, "artifact_bytes": 245_312},
              "benchmark": {"stats": stats, "samples_ns": samples, "output_shapes": [[1, 10]]}}
    (reports / "model_01__host__xnnpack.json").write_text(json.dumps(report))

    async def with_stages(pilot):
        await busy(pilot)
        pilot.app.post_message(PipelineEvents([
            StageFinished("model_01", "convert", True, 5.651615198000002, detail="litert-torch 0.10.0", ts=FROZEN),
            StageFinished("model_01", "validate", True, 0.0421, detail="max |diff| 8.57e-08", ts=FROZEN),
            StageFinished("model_01", "benchmark", True, 12.3456, device="host", ts=FROZEN)]))
        await pilot.pause()

    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=with_stages, press=["down", "enter"])


def test_events_pane_during_a_cool_down(snap_compare):
    """A 10 s cool-down on a device with a long path reports five ticks: one line, counting down, cut to
    the pane's width; a serial as long as emulator-32399 fits the queue's device column."""
    target = "/dev/bus/usb/001/004/simulated-device-emulator-32399"
    detail = ("benchmark failed twice on /data/local/tmp/nnlite/models/model_08.tflite: "
              "device too hot (thermal zone 0 at 81 C)")
    warning = ("/usr/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` is "
               "deprecated, use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.")

    async def cooling(pilot):
        await busy(pilot)
        ticks = [Recovery("cool-down", target, detail, severity="info", countdown_s=10.0 - 2 * i,
                          ts=FROZEN - 8 + 2 * i) for i in range(5)]
        logs = [ModelLog("model_08", "convert", line, ts=FROZEN)
                for _ in range(3) for line in (warning, "  return cls.__new__(cls, *args)")]
        pilot.app.post_message(PipelineEvents([
            ModelStatus("model_08", "benchmarking", attempt=1, device="emulator-32399", ts=FROZEN), *logs,
            ModelLog("model_08", "benchmark", "[nnlite] emulator-32399: waiting for the device to cool down"),
            *ticks]))
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=cooling)


def test_help_screen(snap_compare):
    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=busy, press=["question_mark"])


def test_results_screen(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "runs" / "t1" / "reports"
    reports.mkdir(parents=True)
    for name, params in (("model_00", 61_706), ("model_01", 1_200_000), ("model_03", 4_000)):
        (reports / f"{name}__host__xnnpack.json").write_text(json.dumps({"model_name": name,
                                                                         "model": {"params": params}}))

    async def results(pilot):
        await busy(pilot)
        await pilot.press("v")
        for _ in range(100):  # the reports are read by a worker
            if len(pilot.app.param_cache.params) == 3:
                break
            await pilot.pause(0.05)
        pilot.app.screen.refresh_results()
        await pilot.pause()

    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=results)


FRACTAL = "FractalNet-309422bb05fad9e6f97b0291b8f0dcb0"
LONG_UNITS = (FRACTAL, f"{FRACTAL}@int8", "rl-init-120a973b453fdc4026c341ad195c8a4b",
              "rl-init-120a973b453fdc4026c341ad195c8a4b@int8", "ga-128", "ga-128@int8")


def long_names_events() -> list:
    """A finished fp32,int8 run of LEMUR models whose names are longer than the queue's model column."""
    events = [RunStarted("runs/t1", LONG_UNITS, ("host",), ts=FROZEN - 300), DeviceState("host", "idle", ts=FROZEN)]
    medians = {FRACTAL: 257.0, f"{FRACTAL}@int8": 27.0, "ga-128": 3.41, "ga-128@int8": 1.02}
    for name in LONG_UNITS:
        events.append(ModelStatus(name, "done" if name in medians else "converting", attempt=1,
                                  device="host" if name in medians else None, median_ms=medians.get(name),
                                  ts=FROZEN - 10))
    return events


async def long_names(pilot):
    pilot.app.post_message(PipelineEvents(long_names_events()))
    await pilot.pause()
    await pilot.pause()


def test_queue_tells_a_long_model_from_its_int8_unit(snap_compare):
    """Both units of a model longer than the column show its start, its hash's end and their own @suffix."""
    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=long_names)


def test_selected_row_is_aligned_with_the_others(snap_compare):
    """The cursor on a cut name (the int8 unit): its cells are where every other row has them."""
    assert snap_compare(frozen_app(), terminal_size=SIZE, run_before=long_names, press=["down"])
