"""What a job writes onto the host's disk is bounded in total, not only file by file, through `nnlite
run` in the sandbox: a model that writes files into every writable mount it finds fails with cause
`scratch-full` (the staging bound set low for the test), and the next model converts."""

from __future__ import annotations

import pytest

from nnlite_tui.core.results import load_reports
from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here
from tests.security.test_boundary_run import QUICK, hostile_folder, nnlite


def test_files_written_into_every_writable_mount_fail_the_model_alone(tmp_path):
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    folder = hostile_folder(tmp_path, ["fills_writable_mounts", "b_after_patch"])
    run = tmp_path / "run"
    proc = nnlite(["run", str(folder), "--out", str(run), *QUICK],
                  {"NNLITE_CACHE_DIR": str(tmp_path / "cache"), "NNLITE_SANDBOX_STAGING_MB": "64"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    reports = {r["model_name"]: r for r in load_reports(run)}
    conversion = reports["fills_writable_mounts"]["conversion"]
    assert reports["fills_writable_mounts"]["valid"] is False
    assert conversion["cause"] == "scratch-full", conversion
    assert reports["b_after_patch"]["valid"] is True
    left = list((tmp_path / "cache").rglob("fill*.bin"))
    assert not left, left  # the staging directory went with the failed job
