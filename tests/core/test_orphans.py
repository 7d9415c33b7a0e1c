"""A runner killed while its conversion worker was paused leaves a stopped orphan; the next runner
on the same run directory ends it, and leaves other runs' workers alone.

Only without the sandbox (--no-sandbox, or a machine without bubblewrap): a sandboxed worker dies
with its runner (tests/core/test_sandbox_worker.py shows it)."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from nnlite_tui.core.convert.options import ConvertOptions
from nnlite_tui.core.convert.converter import Converter

ORPHAN_MAKER = """
import os, signal, sys, time
from pathlib import Path
from nnlite_tui.core.convert.converter import Converter, ConvertOptions
conv = Converter(ConvertOptions(workers=1, sandbox="off"), log_dir=Path(sys.argv[1]), n_workers=1)
worker = conv._all[0]
worker.start()
os.killpg(worker.process.pid, signal.SIGSTOP)  # paused for a host benchmark ...
print(worker.process.pid, flush=True)
os._exit(0)                                     # ... when the runner dies
"""


def make_orphan(log_dir) -> psutil.Process:
    out = subprocess.run([sys.executable, "-c", ORPHAN_MAKER, str(log_dir)], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    proc = psutil.Process(int(out.split()[0]))
    deadline = time.monotonic() + 30
    # Re-parented once its runner is gone; stopped once the signal is delivered (both take a moment).
    while (proc.ppid() != 1 or proc.status() != psutil.STATUS_STOPPED) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.status() == psutil.STATUS_STOPPED and proc.ppid() == 1
    return proc


def test_the_next_runner_ends_its_runs_stopped_orphans_only(tmp_path):
    ours, theirs = tmp_path / "run" / "logs", tmp_path / "other" / "logs"
    ours.mkdir(parents=True)
    theirs.mkdir(parents=True)
    orphan, other = make_orphan(ours), make_orphan(theirs)
    try:
        Converter(ConvertOptions(workers=1, sandbox="off"), log_dir=ours, n_workers=1).close()
        deadline = time.monotonic() + 30
        while orphan.is_running() and orphan.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not orphan.is_running() or orphan.status() == psutil.STATUS_ZOMBIE
        assert other.is_running() and other.status() == psutil.STATUS_STOPPED
    finally:
        for proc in (orphan, other):
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
