"""kill -9 the real `nnlite run` at random moments; the reruns finish with nothing lost or doubled."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from nnlite_tui.core.events import TERMINAL
from nnlite_tui.core.store import load_snapshot


def _cmd(lemur: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "nnlite_tui", "run", str(lemur), "--out", str(out), "--headless",
            "--include", "ga-*", "--limit", "8", "--runs", "5", "--min-seconds", "0", "--warmup", "1",
            "--workers", "1"]


def test_kill_9_at_random_moments_then_resume(lemur_mini, tmp_path):
    out = tmp_path / "run"
    rng = random.Random(int(os.environ.get("NNLITE_KILL_SEED", "7")))
    kills = 0
    for _ in range(4):
        proc = subprocess.Popen(_cmd(lemur_mini, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        time.sleep(rng.uniform(4.0, 12.0))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
    final = subprocess.run(_cmd(lemur_mini, out), capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr[-3000:]
    assert kills >= 1
    _, records = load_snapshot(out)
    assert len(records) == 8
    assert all(r["status"] in TERMINAL for r in records), [(r["name"], r["status"]) for r in records]
    reports = sorted((out / "reports").glob("*.json"))
    names = [json.loads(p.read_text())["model_name"] for p in reports]
    assert sorted(names) == sorted(r["name"] for r in records)
    assert not list((out / "reports").glob("*.tmp"))


def test_sigterm_finishes_the_step_and_says_how_to_resume(tmp_path):
    from tests.conftest import FIXTURES

    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "nnlite_tui", "run", str(FIXTURES / "good_models"), "--out", str(out),
           "--headless", "--runs", "5", "--min-seconds", "2", "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = out / "events.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if events.exists() and '"StageStarted"' in events.read_text():
            break
        time.sleep(0.1)
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
