"""A run directory whose ops blocks the previous ops schema (3) wrote reads in every reader: the
report (text and HTML), the console's op bars, and `nnlite predict`; its blocks read as schema 4."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.results.test_html_report import inventory
from nnlite_tui.core.report.rows import row_from_report
from nnlite_tui.tui.widgets.op_bars import OpBars, render_bars

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "runs" / "ops-schema3"


@pytest.fixture
def old_run(tmp_path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    for path in run.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("@SRC@", str(REPO / "sample_models")).replace("@RUN@", str(run)))
    return run


def nnlite(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True, timeout=600)


def _report(run: Path, model: str) -> dict:
    return json.loads((run / "reports" / f"{model}__host__xnnpack.json").read_text())


def test_report_and_html_read_the_old_blocks(old_run, tmp_path):
    assert nnlite("report", str(old_run)).returncode == 0
    proc = nnlite("report", str(old_run), "--format", "html", "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = inventory((tmp_path / "r.html").read_text()).data
    strings = data["strings"]
    blocks = [d["ops"] for d in data["details"] if "ops" in d]  # [count, rows, why invalid]
    rows = [(strings[r[1]], r[3]) for _, top, _ in blocks for r in top]
    assert blocks and "DEPTHWISE_CONV_2D" in [kind for kind, _ in rows]
    assert all(why is None or strings[why] == "" for _, _, why in blocks)  # no block read as invalid
    # mnist_lenet's max pools read 0 in every run: schema 3 wrote 0.5 µs for them, now untimed (no figure).
    assert any(kind == "MAX_POOL_2D" and avg is None for kind, avg in rows)
    row = row_from_report(_report(old_run, "mnist_lenet"))
    pools = [o for o in row.ops if o["type"] == "MAX_POOL_2D"]
    assert pools and all(o["timing"] == "below_resolution" and o["avg_us"] is None for o in pools)
    assert row.ops_invalid == []


def test_the_console_op_bars_read_the_old_blocks(old_run):
    report = _report(old_run, "plain_cnn")
    text = render_bars(report["benchmark"]["ops"])
    assert text.startswith("xnnpack: 0.308 ms per run") and "INVALID" not in text
    assert "< 1 µs" in text  # the final pool, MEAN and FULLY_CONNECTED, each under a µs in every run
    assert "INVALID" not in render_bars(report["benchmark"]["ops_builtin"])
    assert OpBars.from_report(report).block is not None


def test_predict_reads_the_old_blocks(old_run):
    proc = nnlite("predict", str(REPO / "sample_models"), "--include", "mnist_lenet", "--include", "plain_cnn",
                  "--from", str(old_run))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert any(line.startswith("table: ") and "from 2 profiled model(s)" in line for line in lines)
    # Two profiles are too few to fit the run's time outside its ops on: it says so, no number.
    assert sum("no prediction: fewer than 3 profiles" in line for line in lines) == 2
