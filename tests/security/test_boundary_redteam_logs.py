"""The run's log files are out of a job's reach, through `nnlite run` in the sandbox: a model that
opens again, truncated, every descriptor of its own that names a .log file rewrites nothing (the
worker's output and the job's log reach the runner through pipes)."""

from __future__ import annotations

from tests.security.test_boundary_run import run_hostile

MARK = b"REWRITTEN-FROM-INSIDE"


def test_a_model_rewrites_no_log_of_the_run(tmp_path):
    done = run_hostile(tmp_path, ["truncates_logs", "b_after_patch"], ())
    assert done["proc"].returncode == 0, done["proc"].stderr[-3000:]
    logs = [p for p in done["run"].rglob("*.log") if p.is_file()]
    assert logs
    rewritten = [str(p) for p in logs if MARK in p.read_bytes()]
    assert not rewritten
    assert done["reports"]["b_after_patch"]["valid"] is True
