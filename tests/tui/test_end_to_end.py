"""Two sample models through the real pipeline (convert, validate, benchmark on the host) in the console."""

import json
import re
from pathlib import Path

import pytest

from nnlite_tui.tui.app import ExitCode
from nnlite_tui.tui.screens.detail import ModelDetailScreen

from .conftest import frozen_app

REPO = Path(__file__).resolve().parents[2]
MODELS = ("mnist_lenet", "plain_cnn")

pytestmark = pytest.mark.slow


async def wait_for(pilot, condition, seconds):
    for _ in range(int(seconds / 0.1)):
        if condition():
            return
        await pilot.pause(0.1)
    raise AssertionError(f"not reached in {seconds}s")


async def test_two_sample_models_through_the_console(tmp_path):
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.run.config import RunConfig
    from nnlite_tui.core.convert.options import ConvertOptions
    from nnlite_tui.core.run.jsonl import JsonlReporter
    from nnlite_tui.core.run.setup import build_pipeline

    run_dir = tmp_path / "run"
    cfg = RunConfig(sources=[str(REPO / "sample_models")], out=run_dir, include=MODELS,
                    bench=BenchSettings(warmup=1, runs=5, min_seconds=0.05),
                    convert=ConvertOptions(cache_dir=tmp_path / "cache", workers=1), isolation="none")
    built = []

    def factory():
        built.append(build_pipeline(cfg))
        return built[0]

    run_dir.mkdir()
    jsonl = JsonlReporter(run_dir)
    app = frozen_app(pipeline_factory=factory, run_dir=str(run_dir), reporters=[jsonl])
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.view.finished is not None, seconds=400)
        assert {name: row.status for name, row in app.view.models.items()} == {m: "done" for m in MODELS}
        assert all(app.view.models[m].median_ms > 0 for m in MODELS)
        table = app.screen.query_one("#queue-table")
        assert [str(table.get_row_at(i)[1]) for i in range(table.row_count)] == ["done", "done"]
        assert "FINISHED" in str(app.screen.query_one("#run-header").render())
        assert app.view.logs  # conversion/benchmark log lines reached the log pane's buffers
        await pilot.press("enter")
        assert isinstance(app.screen, ModelDetailScreen)
        text = "\n".join(str(w.render()) for w in app.screen.query(".detail-block"))
        assert re.search(r"latency +mean [\d.e-]+ ms +median [\d.e-]+ ms", text), text
        await pilot.press("escape", "q")
    jsonl.close()
    built[0].store.close()
    assert app.return_value == ExitCode.OK
    reports = sorted(p.name for p in (run_dir / "reports").glob("*.json"))
    assert len(reports) == 2
    assert all(json.loads((run_dir / "reports" / r).read_text())["valid"] for r in reports)
    assert (run_dir / "events.jsonl").stat().st_size > 0
