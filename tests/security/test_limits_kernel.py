"""Caps the kernel enforces on model code, through the real pipeline (`nnlite run` in the sandbox):
memory held in a memfd counts against --mem-cap-mb, a model that fills its scratch fails with that
cause (the host's disk untouched), and a unix socket a host process listens on in the model's own
folder cannot be connected to. A normal model converts under the same caps."""

from __future__ import annotations

import os
import secrets

import pytest

from nnlite_tui.core.results import load_reports
from tests.core.sandbox_helpers import Listener, SKIP_REASON, sandbox_here
from tests.security.limits_helpers import QUICK, models, nnlite

CAP_MB, MEMFD_MB = 1000, 1200  # the worker's own RSS (~650 MB) stays under the cap; RSS + memfd does not
SCRATCH_MB, FILL_MB = 64, 256


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    tmp = tmp_path_factory.mktemp("capped")
    token = secrets.token_hex(8)
    folder = models(tmp / "m", ["holds_memfd", "fills_scratch", "unix_socket", "normal_cnn"],
                    {"memfd_mb": MEMFD_MB, "fill_mb": FILL_MB, "socket": "s.sock", "token": token})
    listener = Listener(folder / "s.sock")
    run = tmp / "run"
    proc = nnlite(["run", str(folder), "--out", str(run), "--mem-cap-mb", str(CAP_MB), *QUICK],
                  {"NNLITE_SANDBOX_SCRATCH_MB": str(SCRATCH_MB)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    listener.sock.close()
    return {"reports": {r["model_name"]: r for r in load_reports(run)}, "listener": listener, "tmp": tmp}


@pytest.mark.skipif(os.geteuid() != 0, reason="a memory cgroup per sandbox needs root here: the RSS poll is the cap")
def test_memory_held_in_a_memfd_counts_against_the_cap(capped):
    conversion = capped["reports"]["holds_memfd"]["conversion"]
    assert capped["reports"]["holds_memfd"]["valid"] is False
    assert (conversion["stage"], conversion["cause"]) == ("out-of-memory", "out-of-memory"), conversion
    assert f"memory cap of {CAP_MB} MB" in conversion["error_message"]


def test_a_model_that_fills_its_scratch_fails_with_that_cause(capped):
    conversion = capped["reports"]["fills_scratch"]["conversion"]
    assert capped["reports"]["fills_scratch"]["valid"] is False
    assert conversion["cause"] == "scratch-full", conversion
    assert f"the model filled its scratch ({SCRATCH_MB} MB" in conversion["error_message"]
    # Nothing of it reached the host's temp directory or the run.
    assert not [p for p in capped["tmp"].rglob("fill.bin")]


def test_a_unix_socket_in_the_model_folder_is_not_reachable(capped):
    assert capped["listener"].seen == []
    assert capped["reports"]["unix_socket"]["valid"] is True  # it went on, as a model that tried would


def test_a_normal_model_converts_under_the_same_caps(capped):
    report = capped["reports"]["normal_cnn"]
    assert report["valid"] is True, report["error_message"]


def test_doctor_says_which_caps_are_in_effect():
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    out = nnlite(["doctor"], {"NNLITE_SANDBOX_SCRATCH_MB": "300"}).stdout.decode()
    assert "  scratch:      a tmpfs of 300 MB" in out
    assert "  unix sockets: refused" in out
    memory = next(line for line in out.splitlines() if line.startswith("  memory:"))
    assert ("by the kernel, a memory cgroup" in memory) == (os.geteuid() == 0), memory
