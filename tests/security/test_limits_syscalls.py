"""The system calls that reach around the socket() filter or into another process are not there for
model code: a model that tries io_uring, pidfd_open, ptrace and process_vm_readv fails if any of them
works, so the unit converting cleanly is the proof that each one failed with ENOSYS."""

from __future__ import annotations

import pytest

from nnlite_tui.core.results import load_reports
from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here
from tests.security.limits_helpers import QUICK, models, nnlite


def test_io_uring_ptrace_and_pidfd_are_not_there_for_model_code(tmp_path):
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    folder = models(tmp_path / "m", ["reaches_around"], {})
    run = tmp_path / "run"
    proc = nnlite(["run", str(folder), "--out", str(run), *QUICK])
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = next(r for r in load_reports(run) if r["model_name"] == "reaches_around")
    assert report["valid"] is True, report.get("error_message")
