"""A run directory written by release 0.1.0 (killed -9 after its first report) resumes with this one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.store import load_snapshot

FIXTURE = Path(__file__).parent.parent / "fixtures" / "runs" / "release-0.1.0"


def _lay_out(tmp_path: Path) -> tuple[Path, Path]:
    """Copy the fixture; its store names the model folder as @SRC@, which becomes the copy's."""
    src = tmp_path / "models"
    shutil.copytree(FIXTURE / "models", src)
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("models"))
    for path in run.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("@SRC@", str(src)))
    return src, run


def test_a_run_dir_of_the_previous_release_resumes(tmp_path):
    src, run = _lay_out(tmp_path)
    done_report = run / "reports" / "mnist_lenet__host__xnnpack.json"
    before = json.loads(done_report.read_text())
    _, records = load_snapshot(run)
    assert {r["name"]: r["status"] for r in records}["mnist_lenet"] == "done"
    assert any(r["status"] not in TERMINAL for r in records)

    cmd = [sys.executable, "-m", "nnlite_tui", "run", str(src), "--out", str(run), "--headless",
           "--runs", "3", "--warmup", "1", "--min-seconds", "0", "--workers", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]

    _, records = load_snapshot(run)
    assert {r["name"]: r["status"] for r in records} == {
        "mnist_lenet": "done", "plain_cnn": "done", "squeezenet_mini": "done"}
    # The model finished by the old release is not redone: its report is the same file, untouched.
    assert json.loads(done_report.read_text())["created_at"] == before["created_at"]
    reports = sorted(p.name for p in (run / "reports").glob("*.json"))
    assert reports == [f"{m}__host__xnnpack.json" for m in ("mnist_lenet", "plain_cnn", "squeezenet_mini")]
    # ... and it reads as LiteRT's, the only runtime that release had, beside the reports made now.
    assert "runtime" not in before and "runtime" not in (before.get("model") or {})
    from nnlite_tui.core.report.rows import load_run
    from nnlite_tui.core.report.summary import summary_rows

    assert {row.model: row.runtime for row in load_run(run).rows} == {
        "mnist_lenet": "litert", "plain_cnn": "litert", "squeezenet_mini": "litert"}
    assert {row["model"]: row["runtime"] for row in summary_rows(run)} == {
        "mnist_lenet": "litert", "plain_cnn": "litert", "squeezenet_mini": "litert"}
    new = json.loads((run / "reports" / "plain_cnn__host__xnnpack.json").read_text())
    assert (new["runtime"], new["model"]["runtime"], new["conversion"]["runtime"]) == ("litert",) * 3
