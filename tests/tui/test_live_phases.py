"""A slow conversion's phases reach the log pane while it runs: the real worker, the real pipeline.

The model's constructor waits for a file the test writes, so the conversion stays in its build phase
exactly as long as the test looks at it (a wait on a condition, not on a clock).
"""

import time
from pathlib import Path

import pytest

from nnlite_tui.core.progress import parse_phase_line
from nnlite_tui.tui.app import make_app
from nnlite_tui.tui.widgets.log_pane import LogPane

REPO = Path(__file__).resolve().parents[2]
UNIT = "slow_build.make"  # a file.py:factory source names its unit file.factory

pytestmark = pytest.mark.slow

MODEL = '''
import os
import time

import torch
import torch.nn as nn


def make():
    while not os.path.exists({gate!r}):  # held in the build phase until the test has seen it
        time.sleep(0.05)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 4))
    return model, torch.randn(1, 3, 8, 8)
'''


async def wait_for(pilot, condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.1)
    raise AssertionError(f"not reached in {seconds} s: {what}")


async def test_a_slow_conversions_phases_appear_in_the_log_pane_while_it_runs(tmp_path):
    from nnlite_tui.core.bench.settings import BenchSettings
    from nnlite_tui.core.convert.options import ConvertOptions
    from nnlite_tui.core.run.config import RunConfig
    from nnlite_tui.core.run.setup import build_pipeline

    gate = tmp_path / "release-the-build"
    source = tmp_path / "slow_build.py"
    source.write_text(MODEL.format(gate=str(gate)))
    cfg = RunConfig(sources=[f"{source}:make"], out=tmp_path / "run", isolation="none",
                    bench=BenchSettings(warmup=2, runs=5, min_seconds=0, warmup_seconds=0),
                    convert=ConvertOptions(cache_dir=tmp_path / "cache", workers=1))
    built = []

    def factory():
        built.append(build_pipeline(cfg))
        return built[0]

    app = make_app(pipeline_factory=factory, ui_interval=0.0)  # the real clock: the phase's time runs
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.screen.query_one(LogPane)
            title = lambda: str(pane.border_title or "")  # noqa: E731
            # The worker starts (imports torch and the converter), takes the job and marks its first phase.
            await wait_for(pilot, lambda: "▸ build" in title(), 300, "the build phase in the log pane's title")
            assert title().startswith(f"Log: {UNIT}  ▸ build ")
            assert "(from " in title() and ", job " in title()
            assert any(parse_phase_line(line) and parse_phase_line(line).phase == "build" for line in pane.lines)
            first = title()
            # Still building (the gate is shut): the phase's clock runs on between lines.
            await wait_for(pilot, lambda: title() != first, 10, "the build phase's seconds to advance")
            assert "▸ build " in title()
            assert app.view.models[UNIT].status == "converting"

            gate.write_text("go")
            await wait_for(pilot, lambda: app.view.finished is not None, 300, "the run to finish")
            assert app.view.models[UNIT].status == "done", app.view.models[UNIT]
            marks = [parse_phase_line(line) for line in app.view.log_lines(UNIT)]
            phases = [(m.phase, m.at_s) for m in marks if m is not None]
            names = [p for p, _ in phases]
            conversion = names[:names.index("hash") + 1]
            assert conversion[:2] == ["build", "reference"] and conversion[-3:] == ["serialize", "validate", "hash"]
            assert "lower" in conversion or "convert" in conversion
            at = [s for _, s in phases[:len(conversion)]]
            assert at == sorted(at)  # seconds into the job, in the order the phases ran
            # The host benchmark process's own, once per round (each round is a fresh process; an
            # unstable unit on a busy machine gets extra rounds).
            bench = names[len(conversion):]
            rounds = len(bench) // 3
            assert rounds >= cfg.rounds and bench == ["load", "warmup", "timed"] * rounds, bench
            assert "▸" not in title()  # nothing in flight any more: the name alone
            await pilot.press("q")
    finally:
        gate.write_text("go")
        for pipeline in built:
            pipeline.store.close()
