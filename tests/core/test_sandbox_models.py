"""Model code that tries what it may not, through the real pipeline (`nnlite run` on a folder of such
LEMUR-format models, tests/fixtures/sandbox_models) in the sandbox: each fails with the stage and cause
of what it tried, what it aimed at (a listener on 127.0.0.1, a secret in HOME, a file in the run
directory) was not reached, and nothing it started is left. Where bubblewrap is missing (a PATH
without it): --require-sandbox refuses to start, and without it nnlite says so once and converts."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nnlite_tui.core.results import load_reports
from tests.conftest import FIXTURES, REPO
from tests.core.sandbox_helpers import SKIP_REASON, Listener, path_without_bwrap, processes_with, sandbox_here, \
    wait_until

pytestmark = pytest.mark.slow  # real conversions and runs

MODELS = FIXTURES / "sandbox_models"
QUICK = ["--headless", "--workers", "1", "--no-cache", "--runs", "3", "--min-seconds", "0", "--warmup", "1",
         "--warmup-seconds", "0", "--max-attempts", "1"]


def _models(tmp: Path, targets: dict, names: list[str] | None = None) -> Path:
    folder = tmp / "models"
    folder.mkdir()
    for f in MODELS.glob("*.py"):
        if (f.stem in names) if names else f.stem != "reads_beside":  # that one goes into HOME
            shutil.copy(f, folder)
    (folder / "targets.json").write_text(json.dumps(targets))
    return folder


def _nnlite(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900, env={**os.environ, "PYTHONPATH": str(REPO), **env})


@pytest.fixture(scope="module")
def attempted(tmp_path_factory):
    """One `nnlite run` over every model, in the sandbox, with a secret in HOME and a listener waiting."""
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    tmp = tmp_path_factory.mktemp("sandboxed")
    home, run = tmp / "home", tmp / "run"
    home.mkdir()
    secret = f"nnlite-test-secret-{secrets.token_hex(8)}"
    (home / ".nnlite-secret").write_text(secret)
    listener = Listener()
    token = str(secrets.randbelow(10**6)).zfill(6)
    targets = {"port": listener.port, "secret": str(home / ".nnlite-secret"), "outside": str(run / "written-by-model.txt"),
               "token": token}
    folder = _models(tmp, targets)
    # A model file in HOME itself: only the file is visible, not the secret beside it.
    shutil.copy(MODELS / "reads_beside.py", home)
    # 64 tasks: the fork-bomb model's 80 processes go over it, a conversion's ~24 tasks stay well under.
    proc = _nnlite(["run", str(folder), str(home / "reads_beside.py"), "--out", str(run), *QUICK],
                   {"HOME": str(home), "NNLITE_SANDBOX_MAX_TASKS": "64"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    reports = {r["model_name"]: r for r in load_reports(run)}
    yield {"run": run, "proc": proc, "listener": listener, "secret": secret, "targets": targets, "reports": reports}
    listener.close()


def _conversion(attempted, name: str) -> dict:
    return attempted["reports"][name]["conversion"]


@pytest.mark.parametrize("name, stage, cause, says", [
    ("connects_out", "instantiate", "network", "the model tried to connect to 127.0.0.1:{port}; model code runs "
                                               "without network"),
    ("reads_home", "instantiate", "reads-outside-view", "the model tried to read {secret}, outside its view"),
    ("reads_beside", "instantiate", "reads-outside-view", "the model tried to read {secret}, outside its view"),
    ("writes_outside", "instantiate", "writes-outside-scratch", "the model tried to write {outside}; model code may "
                                                                "write only in its scratch directory"),
    ("leaves_sleep", "sandbox", "leaves-processes", "the model left 1 process running (sleep 600.{token})"),
    ("runs_curl", "sandbox", "network", "the model tried to use the network (the model ran: curl -sS --max-time 5 "
                                        "http://127.0.0.1:{port}/exfiltrate)"),
])
def test_each_attempt_fails_with_its_stage_and_cause(attempted, name, stage, cause, says):
    conversion = _conversion(attempted, name)
    assert attempted["reports"][name]["valid"] is False
    assert (conversion["stage"], conversion["cause"]) == (stage, cause), conversion
    assert says.format(**attempted["targets"]) in conversion["error_message"]
    assert conversion["sandbox"]["mechanism"] == "bwrap"


def test_a_checkpoint_asked_for_at_construction_is_not_fetched_and_random_weights_stand_in(attempted):
    """torch.hub's download never leaves the sandbox: the model keeps its random weights (the URL on
    record), as outside it; --strict-weights would fail it as downloads-weights (tests/core)."""
    report = attempted["reports"]["downloads_weights"]
    assert report["valid"] is True, report["error_message"]
    assert report["conversion"]["weights"]["not_downloaded"] == ["http://127.0.0.1:9/weights/net-0123.pth"]
    assert report["conversion"]["sandbox"]["mechanism"] == "bwrap"


def test_a_model_over_the_process_cap_fails_and_its_processes_are_killed(attempted):
    conversion = _conversion(attempted, "forks_many")
    assert conversion["cause"] == "process-cap", conversion
    assert "the sandbox allows 64" in conversion["error_message"]


def test_the_normal_model_converts_validates_and_is_benchmarked(attempted):
    report = attempted["reports"]["normal_cnn"]
    assert report["valid"] is True, report["error_message"]
    assert report["conversion"]["stage"] == "done" and report["conversion"]["max_abs_diff"] < 1e-3
    assert report["iterations"] >= 3 and report["duration"] > 0
    assert not report["conversion"].get("sandbox_attempts")


def test_the_listener_received_nothing_and_nothing_was_written_outside(attempted):
    assert attempted["listener"].seen == []
    assert not Path(attempted["targets"]["outside"]).exists()


def test_the_secret_is_in_no_report_log_or_event(attempted):
    secret = attempted["secret"]
    files = [p for p in attempted["run"].rglob("*") if p.is_file()]
    assert any(p.name == "events.jsonl" for p in files) and any(p.suffix == ".log" for p in files)
    leaked = [str(p) for p in files if secret.encode() in p.read_bytes()]
    assert leaked == []
    assert secret not in attempted["proc"].stdout and secret not in attempted["proc"].stderr


def test_nothing_the_models_started_is_left_running(attempted):
    # The sleeps were started by the cost probe and by the conversion workers; the run has ended.
    token = f"sleep 600.{attempted['targets']['token']}"
    assert wait_until(lambda: not processes_with(token), 10), processes_with(token)
    assert not processes_with(str(attempted["run"]))  # no worker or sandbox of this run either


def test_require_sandbox_refuses_where_bubblewrap_is_missing(tmp_path):
    folder = _models(tmp_path, {}, ["normal_cnn"])
    path = path_without_bwrap(tmp_path / "bin")
    out = tmp_path / "run"
    proc = _nnlite(["run", str(folder), "--out", str(out), "--require-sandbox", *QUICK], {"PATH": path})
    assert proc.returncode == 5, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --require-sandbox: the sandbox for model code is not "
                                                   "available here (bubblewrap (bwrap) is not on PATH"), lines
    assert not out.exists()  # refused before anything was started or written


def test_without_bubblewrap_nnlite_says_so_once_and_converts_with_what_it_has(tmp_path):
    folder = _models(tmp_path, {}, ["normal_cnn"])
    proc = _nnlite(["convert", str(folder), "--out", str(tmp_path / "out"), "--workers", "1", "--no-cache"],
                   {"PATH": path_without_bwrap(tmp_path / "bin")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = [line for line in proc.stderr.splitlines() if "sandbox not available" in line]
    assert len(said) == 1 and "bubblewrap (bwrap) is not on PATH" in said[0], proc.stderr
    result = json.loads((tmp_path / "out" / "normal_cnn.json").read_text())
    assert result["ok"] and result["sandbox"]["mechanism"] in ("unshare", "none"), result


def test_doctor_says_what_is_missing_and_what_is_left(tmp_path):
    proc = _nnlite(["doctor"], {"PATH": path_without_bwrap(tmp_path / "bin")})
    assert proc.returncode == 5, proc.stdout + proc.stderr
    first, *rest = proc.stdout.splitlines()
    assert first.startswith("sandbox not available (bubblewrap (bwrap) is not on PATH; install bubblewrap")
    assert any("NOT protected" in line for line in rest)
