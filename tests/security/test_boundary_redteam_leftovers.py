"""A process one model leaves behind must not speak for the models converted after it, through
`nnlite run` in the sandbox (one worker, so that they share it): a process that forks and exits every
few milliseconds (never in a snapshot of the process table) and takes other processes' sockets with
pidfd_getfd; and a job that sends a result and then ends with a failure status."""

from __future__ import annotations

import json

import pytest

from tests.security.test_boundary_run import run_hostile

BENIGN = ["b_after_patch", "a_patches_open"]  # a_patches_open converts normally; it only patches its own process


@pytest.fixture(scope="module")
def hopper_run(tmp_path_factory):
    return run_hostile(tmp_path_factory.mktemp("hopper"), ["aa_leaves_a_hopper", "sends_then_fails", *BENIGN], ())


def test_a_process_left_behind_forges_no_later_result(hopper_run):
    assert hopper_run["proc"].returncode == 0, hopper_run["proc"].stderr[-3000:]
    reports = hopper_run["reports"]
    assert len(reports) == hopper_run["expected"]
    for name in BENIGN:
        assert reports[name]["valid"] is True, (name, reports[name]["conversion"])
    everything = json.dumps(list(reports.values()))
    assert "NeighbourForged" not in everything


def test_the_process_left_behind_is_blamed_on_the_job_that_started_it(hopper_run):
    conversion = hopper_run["reports"]["aa_leaves_a_hopper"]["conversion"]
    assert conversion["cause"] == "leaves-processes", conversion


def test_a_result_from_a_process_that_ended_with_a_failure_is_not_taken(hopper_run):
    conversion = hopper_run["reports"]["sends_then_fails"]["conversion"]
    assert hopper_run["reports"]["sends_then_fails"]["valid"] is False
    assert conversion["error_type"] != "SentBeforeDying", conversion
    assert "status 3" in conversion["error_message"] or "exit code 3" in conversion["error_message"], conversion


def test_outside_a_pid_namespace_of_its_own_the_worker_kills_nothing():
    """kill(-1) from a process that is not pid 2 of bubblewrap's namespace would reach the user's own
    processes: the worker's clean-up refuses to run there (this test process is not pid 2)."""
    import subprocess
    import sys

    from nnlite_tui.core.convert.worker import leftovers

    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert leftovers.end_all() == []
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
