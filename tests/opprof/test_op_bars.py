"""The op bar chart widget alone, under Pilot."""

from __future__ import annotations

from textual.app import App, ComposeResult

from nnlite_tui.tui.widgets.op_bars import OpBars, render_bars

BLOCK = {"schema_version": 1, "kernel_mode": "xnnpack", "total_us": 300.0, "ops": [
    {"index": 0, "type": "CONV_2D", "params": {"kernel": "3x3", "stride": "1x1", "cin": 3, "cout": 16},
     "avg_us": 200.0, "share": 0.667},
    {"index": 1, "type": "MAX_POOL_2D", "params": {"kernel": "2x2"}, "avg_us": 20.0, "share": 0.067},
    {"index": 2, "type": "FULLY_CONNECTED", "params": {}, "avg_us": 80.0, "share": 0.267},
]}


class OneWidget(App):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def compose(self) -> ComposeResult:
        yield OpBars(self.block, top=2, id="bars")


def test_bars_longest_first_and_relative():
    lines = render_bars(BLOCK).splitlines()
    assert lines[1].startswith("#0 CONV_2D kernel3x3 stride1x1 c3>16")
    assert lines[2].startswith("#2 FULLY_CONNECTED") and lines[3].startswith("#1 MAX_POOL_2D")
    assert lines[1].count("█") == 30 and lines[2].count("█") == 12 and lines[3].count("█") == 3


def test_missing_and_failed_blocks_say_so():
    assert "--profile-ops" in render_bars(None)
    assert "lacks LiteRtGetProfilerEvents" in render_bars({"error": "lib lacks LiteRtGetProfilerEvents", "ops": []})


async def test_widget_shows_top_ops_and_swaps_model():
    app = OneWidget(BLOCK)
    async with app.run_test(size=(100, 12)) as pilot:
        bars = app.query_one("#bars", OpBars)
        await pilot.pause()
        text = str(bars.render())
        assert "CONV_2D" in text and "FULLY_CONNECTED" in text and "MAX_POOL_2D" not in text
        bars.show(None)
        await pilot.pause()
        assert "--profile-ops" in str(bars.render())


def test_ops_without_a_measured_time_show_what_is_known_not_a_bar():
    block = {"schema_version": 4, "kernel_mode": "xnnpack", "total_us": 50.0, "ops_sum_us": 40.0,
             "unattributed_us": 10.0, "runs_kept": 3, "ops": [
                 {"index": 0, "type": "CONV_2D", "timing": "measured", "avg_us": 40.0, "median_us": 40.0,
                  "min_us": 39.0, "resolved_runs": 3, "events": 1, "kernels": ["Convolution (NHWC, F32) IGEMM"]},
                 {"index": 1, "type": "RESHAPE", "timing": "below_resolution", "avg_us": None, "median_us": None,
                  "min_us": None, "resolved_runs": 0, "events": 1, "upper_us": 1.0, "kernels": ["Copy (NC, X32)"]},
                 {"index": 2, "type": "PAD", "timing": "fused", "avg_us": None, "median_us": None, "min_us": None,
                  "resolved_runs": 0, "events": 0, "kernels": []}]}
    lines = render_bars(block).splitlines()
    assert lines[1].startswith("#0 CONV_2D") and lines[1].count("█") == 30 and "80.0%" in lines[1]
    assert lines[2].startswith("#1 RESHAPE") and "█" not in lines[2] and "< 1 µs" in lines[2]
    assert lines[3].startswith("#2 PAD") and "█" not in lines[3] and "fused" in lines[3]
    # A block that fails its checks says so above its bars.
    block["ops"][1]["avg_us"] = 0.5
    assert render_bars(block).splitlines()[0].startswith("per-op profile INVALID: time_without_samples: op #1")
