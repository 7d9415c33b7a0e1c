"""The CLI's answers to bad input: clear messages naming the file, documented exit codes."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import FIXTURES


def nnlite(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True, timeout=timeout)


def test_corrupt_state_file_is_refused_and_kept(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    state = out / "state.json"
    state.write_text('{"meta": {"1": {"schema_version": 1}}, "models": {"1": {"name": "x"')
    before = state.read_bytes()
    result = nnlite("run", str(FIXTURES / "good_models"), "--out", str(out), "--headless")
    assert result.returncode == 3
    assert str(state) in result.stderr
    assert state.read_bytes() == before
    status = nnlite("status", str(out))
    assert status.returncode == 3 and str(state) in status.stderr


def test_missing_source_is_a_usage_error(tmp_path):
    result = nnlite("run", str(tmp_path / "missing"), "--out", str(tmp_path / "o"), "--headless")
    assert result.returncode == 2
    assert str(tmp_path / "missing") in result.stderr


def test_empty_folder_means_nothing_to_do(tmp_path):
    (tmp_path / "empty").mkdir()
    result = nnlite("run", str(tmp_path / "empty"), "--out", str(tmp_path / "o"), "--headless")
    assert result.returncode == 5
    assert "No models found" in result.stderr


def test_help_lists_exit_codes():
    result = nnlite("run", "--help")
    assert result.returncode == 0
    assert "3  the state file is corrupt" in result.stdout
    assert "--retry-failed" in result.stdout and "--force-config" in result.stdout
