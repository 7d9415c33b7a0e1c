"""kill -9 the real `nnlite run` at random moments mid-run; the reruns finish with nothing lost or doubled."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.store import load_snapshot

pytestmark = pytest.mark.slow  # real conversions and runs

MODELS = ("ga-128", "ga-56", "ga-mut-1011")  # the committed LEMUR tree's ga-* models


def _cmd(tree: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "nnlite_tui", "run", str(tree), "--out", str(out), "--headless",
            "--include", "ga-*", "--runs", "5", "--min-seconds", "0", "--warmup", "1", "--workers", "1"]


def _count(events: Path, offset: int, kind: str) -> int:
    """Whole lines of event `kind` written after byte `offset` of events.jsonl."""
    if not events.exists():
        return 0
    with events.open("rb") as f:
        f.seek(offset)
        return sum(1 for line in f if line.endswith(b"\n") and f'"type": "{kind}"'.encode() in line)


def _reports(out: Path) -> list[Path]:
    return sorted((out / "reports").glob("*.json"))


def test_kill_9_at_random_moments_mid_run_then_resume(lemur_tree, tmp_path):
    out = tmp_path / "run"
    events = out / "events.jsonl"
    rng = random.Random(int(os.environ.get("NNLITE_KILL_SEED", "7")))
    kills: list[tuple[int, int]] = []
    while len(kills) < 4 and len(MODELS) - len(_reports(out)) >= 2:
        # Every model still without a report starts at least one more stage, so the run cannot finish
        # inside its stage number `left - 1`: the kill lands somewhere in that stage.
        left = len(MODELS) - len(_reports(out))
        stage = rng.randint(1, left - 1)
        offset = events.stat().st_size if events.exists() else 0
        with (tmp_path / f"stderr-{len(kills)}.txt").open("wb") as err:
            proc = subprocess.Popen(_cmd(lemur_tree, out), stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
        deadline = time.monotonic() + 600
        while _count(events, offset, "StageStarted") < stage:
            assert proc.poll() is None, f"the run exited ({proc.returncode}) before its stage {stage} started"
            assert time.monotonic() < deadline, f"stage {stage} did not start within 600 s"
            time.sleep(0.02)
        # A random moment inside that stage: stop waiting early if it finishes first.
        finished = _count(events, offset, "StageFinished")
        moment = time.monotonic() + rng.uniform(0.0, 2.0)
        while time.monotonic() < moment and _count(events, offset, "StageFinished") == finished:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the run exited on its own before the kill"
        _, records = load_snapshot(out)
        terminal = [r["name"] for r in records if r["status"] in TERMINAL]
        assert len(terminal) < len(MODELS) and len(_reports(out)) < len(MODELS), "killed after the run finished"
        kills.append((stage, len(terminal)))
    assert len(kills) >= 2, kills

    final = subprocess.run(_cmd(lemur_tree, out), capture_output=True, text=True, timeout=900)
    assert final.returncode == 0, final.stderr[-3000:]
    _, records = load_snapshot(out)
    assert sorted(r["name"] for r in records) == sorted(MODELS)  # one record, so one state, per model
    assert [r["status"] for r in records] == ["done"] * len(MODELS), [(r["name"], r["status"]) for r in records]
    names = [json.loads(p.read_text())["model_name"] for p in _reports(out)]
    assert sorted(names) == sorted(MODELS)  # exactly one report per model: none lost, none doubled
    assert not list((out / "reports").glob("*.tmp"))


def test_sigterm_finishes_the_step_and_says_how_to_resume(tmp_path):
    from tests.conftest import FIXTURES

    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "nnlite_tui", "run", str(FIXTURES / "good_models"), "--out", str(out),
           "--headless", "--runs", "5", "--min-seconds", "2", "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = out / "events.jsonl"
    deadline = time.monotonic() + 300
    while _count(events, 0, "StageStarted") == 0:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "no stage started within 300 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 4, stderr[-2000:]
    assert "SIGTERM: stopping after the current step" in stderr
    assert "Resume with the same command" in stderr
    _, records = load_snapshot(out)
    assert {r["status"] for r in records} <= {"done", "converted", "queued"}
    assert {r["status"] for r in records} != {"done"}
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    _, records = load_snapshot(out)
    assert {r["status"] for r in records} == {"done"}
