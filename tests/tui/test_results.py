"""Results screen: latency vs parameters, failures by stage, per-device medians, from the view."""

import json

from nnlite_tui.core.events import ModelStatus
from nnlite_tui.tui.results import Point, failures_by_stage, scatter
from nnlite_tui.tui.screens.results import ResultsScreen
from nnlite_tui.tui.state import ModelRow

from .conftest import FROZEN, feed, frozen_app
from .scripted import busy_run_events

SIZE = (160, 48)


def test_scatter_puts_small_fast_models_bottom_left_and_big_slow_ones_top_right():
    grid, (x0, x1, y0, y1) = scatter([Point(1_000, 0.1), Point(1_000_000, 100.0), Point(1_000_000, 100.0)], 10, 4)
    assert grid[-1][0] == "·" and grid[0][-1] == "•"  # two models in one cell
    assert sum(c != " " for row in grid for c in row) == 2
    assert (round(x0), round(x1), round(y0, 3), round(y1)) == (1000, 1_000_000, 0.1, 100)


def test_failures_are_counted_by_the_stage_named_in_their_error():
    rows = [ModelRow("a", 0, status="failed", error="convert: TorchExportError: x"),
            ModelRow("b", 1, status="failed", error="benchmark: AdbError: offline"),
            ModelRow("c", 2, status="failed", error="convert: E: y"), ModelRow("d", 3, status="done"),
            ModelRow("e", 4, status="failed", error=None)]
    assert failures_by_stage(rows) == [("convert", 2), ("benchmark", 1), ("unknown", 1)]


async def test_results_screen_follows_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "runs" / "t1" / "reports"
    reports.mkdir(parents=True)
    for name, params in (("model_00", 61_706), ("model_01", 1_200_000), ("model_03", 4_000)):
        (reports / f"{name}__host__xnnpack.json").write_text(json.dumps({"model_name": name,
                                                                         "model": {"params": params}}))
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await feed(app, pilot, *busy_run_events(FROZEN))
        await pilot.press("v")
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        for _ in range(50):  # the reports are read by a worker
            await pilot.pause(0.1)
            if len(app.param_cache.params) == 3:
                break
        screen.refresh_results()
        plot = str(screen.query_one("#results-plot").render())
        assert "3 of 3 done models plotted" in plot and "4.00k" in plot and "1.20M" in plot
        # The cursor names a point: the largest model first, then the next smaller one (left)
        assert "◆ model_01  1.20M parameters  median 3.41 ms" in plot
        await pilot.press("left")
        assert "◆ model_00  61.7k parameters  median 1.82 ms" in str(screen.query_one("#results-plot").render())
        assert "convert" in str(screen.query_one("#results-failures").render())
        devices = str(screen.query_one("#results-devices").render())
        assert "host" in devices and "1.82 ms" in devices  # median of 0.57, 1.82, 3.41
        await feed(app, pilot, ModelStatus("model_05", "failed", attempt=1, device="host",
                                           error="benchmark: AdbError: device offline"))
        screen.refresh_results()
        failures = str(screen.query_one("#results-failures").render())
        assert "benchmark" in failures and "convert" in failures
        await pilot.press("v")
        assert not isinstance(app.screen, ResultsScreen)
