"""What a run leaves on disk: --keep-artifacts, and a full disk that pauses conversions until there is room."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from nnlite_tui.core.run.artifacts import keeps_artifact, prune_artifact
from nnlite_tui.core.run.config import RunConfig
from nnlite_tui.core.run.control import Control
from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.events import ModelStatus, RecordingReporter, Recovery
from nnlite_tui.core.run.setup import build_pipeline
from nnlite_tui.core.store import load_snapshot
from tests.core.test_pipeline import FAST, make_cfg, reports, run, statuses


def test_keep_policies():
    assert [keeps_artifact(p, s) for p in ("all", "failed", "none") for s in ("done", "failed")] == [
        True, True, False, True, False, False]
    with pytest.raises(ValueError, match="--keep-artifacts"):
        keeps_artifact("some", "done")


def test_prune_removes_only_what_the_policy_drops(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(b"x")
    assert not prune_artifact("failed", "failed", path) and path.exists()
    assert prune_artifact("failed", "done", path) and not path.exists()
    assert not prune_artifact("none", "done", path)  # already gone: nothing to do, no error


def test_keep_none_leaves_reports_and_no_tflite(tmp_path, good_models):
    out = tmp_path / "run"
    outcome, _ = run(make_cfg(out, [good_models], keep_artifacts="none"))
    assert outcome.counts.get("done") == 2
    assert len(reports(out)) == 2
    assert list((out / "artifacts").glob("*.tflite")) == []
    _, records = load_snapshot(out)
    assert all(r["artifact"] is None for r in records)


def test_keep_all_keeps_every_converted_file(tmp_path, good_models):
    out = tmp_path / "run"
    run(make_cfg(out, [good_models], keep_artifacts="all"))
    assert sorted(p.name for p in (out / "artifacts").glob("*.tflite")) == ["tiny_conv.tflite", "wide_conv.tflite"]


@pytest.fixture
def small_disk(tmp_path):
    """A 64 MB tmpfs: the run directory and the conversion cache both live on it."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"this machine does not let the test mount a tmpfs ({done.stderr.strip()})")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=True)


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_a_full_disk_pauses_conversions_and_the_run_resumes_when_space_returns(small_disk, good_models):
    ballast = small_disk / "ballast"
    ballast.write_bytes(b"\0" * (50 << 20))  # leaves about 14 MB: under the 20 MB the run asks for
    cfg: RunConfig = make_cfg(small_disk / "run", [good_models], bench=FAST, min_free_bytes=20 << 20,
                              convert=ConvertOptions(workers=1, timeout_s=60, cache_dir=small_disk / "cache"))
    pipeline = build_pipeline(cfg)
    rec = RecordingReporter()
    thread = threading.Thread(target=pipeline.run, args=(rec, Control()))
    thread.start()
    try:
        wait_for(lambda: any(e.action == "disk-low" for e in rec.of(Recovery)), 60, "the disk-low event")
        low = next(e for e in rec.of(Recovery) if e.action == "disk-low")
        assert str(small_disk) in low.detail and "free at least" in low.detail
        # The one conversion thread announced the low disk from inside its wait: nothing converts.
        assert not any(e.status == "converting" for e in rec.of(ModelStatus))
        ballast.unlink()
        thread.join(timeout=300)
        assert not thread.is_alive()
    finally:
        pipeline.control.request_stop(now=True)
        thread.join(timeout=60)
        pipeline.store.close()
    assert any(e.action == "disk-ok" for e in rec.of(Recovery))
    assert statuses(cfg.out) == {"tiny_conv": "done", "wide_conv": "done"}
    assert len(reports(cfg.out)) == 2
