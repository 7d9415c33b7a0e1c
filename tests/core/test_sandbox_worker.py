"""The conversion worker in the sandbox, seen from outside: it is the real worker (its own namespaces,
its own pid inside), started from a thread that has ended it stays alive, pausing (SIGSTOP of the
process group) and `--isolation affinity` (pinning) reach it inside the sandbox, and nothing of it is
left once it is closed or its runner is killed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import psutil
import pytest

from nnlite_tui.core.bench.isolation import HostIsolation
from nnlite_tui.core.convert.converter import Converter
from nnlite_tui.core.convert.options import ConvertOptions
from tests.conftest import REPO
from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here, wait_until

pytestmark = pytest.mark.skipif(not sandbox_here(), reason=SKIP_REASON)


def _status(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _ns(pid: int | str, kind: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def _tree(pid: int) -> list[int]:
    root = psutil.Process(pid)
    return [root.pid, *(c.pid for c in root.children(recursive=True))]


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """A sandboxed worker started by prestart(), whose thread has ended once the worker is up."""
    conv = Converter(ConvertOptions(cache_dir=tmp_path_factory.mktemp("cache"), workers=1), n_workers=1)
    conv.prestart()
    assert wait_until(lambda: conv.worker_pids() and conv._all[0].jobs == 0, 180), "the worker did not start"
    assert wait_until(lambda: not any(t.name == "convert-prestart" for t in threading.enumerate()), 30)
    yield conv
    conv.close()


def test_the_worker_is_the_real_worker_inside_its_own_namespaces(started):
    (pid,) = started.worker_pids()
    worker = started._all[0]
    assert worker.alive  # started from a thread that has ended: --die-with-parent did not take it
    assert pid != worker.process.pid and pid in _tree(worker.process.pid)
    assert "nnlite_tui.core.convert.worker.main" in " ".join(psutil.Process(pid).cmdline())
    for kind in ("net", "pid", "user", "mnt"):
        assert _ns(pid, kind) != _ns("self", kind), kind
    with open(f"/proc/{pid}/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    assert status["NSpid"].split()[-1] == "2"  # bwrap's init is 1 inside
    assert status["NoNewPrivs"].strip() == "1" and int(status["CapEff"], 16) == 0


def test_pause_stops_the_worker_inside_the_sandbox_and_resume_continues_it(started):
    (pid,) = started.worker_pids()
    with HostIsolation(started, threads=1, method="pause").benchmarking():
        assert wait_until(lambda: _status(pid) == "T", 10), _status(pid)
    assert wait_until(lambda: _status(pid) != "T", 10)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two cores")
def test_affinity_pins_every_thread_of_the_worker_inside_the_sandbox(started):
    (pid,) = started.worker_pids()
    iso = HostIsolation(started, threads=1, method="affinity")
    assert iso.method == "affinity"
    tasks = os.listdir(f"/proc/{pid}/task")
    assert len(tasks) > 1  # torch's and the converters' threads: each needs its own mask
    with iso.benchmarking():
        masks = {tid: os.sched_getaffinity(int(tid)) for tid in os.listdir(f"/proc/{pid}/task")}
        assert all(m == set(iso.convert_cpus) for m in masks.values()), masks
    assert all(os.sched_getaffinity(int(t)) == set(iso.all_cpus) for t in os.listdir(f"/proc/{pid}/task"))


def test_nothing_is_left_once_the_converter_is_closed(tmp_path):
    conv = Converter(ConvertOptions(cache_dir=tmp_path / "cache", workers=1), n_workers=1)
    worker = conv._all[0]
    worker.start()
    tree, scratch, staging = _tree(worker.process.pid), worker.scratch, worker.staging
    assert len(tree) >= 3 and scratch.is_dir() and staging.is_dir()  # bwrap, its init, the worker
    conv.close()
    assert wait_until(lambda: not any(psutil.pid_exists(p) for p in tree), 10)
    assert not scratch.exists() and not staging.exists()


KILLED_RUNNER = """
import os, signal, sys
from pathlib import Path
from nnlite_tui.core.convert.converter import Converter, ConvertOptions
conv = Converter(ConvertOptions(workers=1, cache_dir=Path(sys.argv[1])), n_workers=1)
worker = conv._all[0]
worker.start()
os.killpg(worker.process.pid, signal.SIGSTOP)  # paused for a host benchmark ...
print(" ".join(str(p.pid) for p in [__import__("psutil").Process(worker.process.pid)]
               + __import__("psutil").Process(worker.process.pid).children(recursive=True)), flush=True)
os.kill(os.getpid(), signal.SIGKILL)            # ... when the runner is killed
"""


def test_a_killed_runner_leaves_no_sandbox_behind_even_a_paused_one(tmp_path):
    proc = subprocess.run([sys.executable, "-c", KILLED_RUNNER, str(tmp_path / "cache")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    pids = [int(p) for p in proc.stdout.split()]
    assert proc.returncode == -9 and len(pids) >= 3, proc.stderr[-2000:]
    started = time.monotonic()
    assert wait_until(lambda: not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                                      for p in pids), 10)
    assert time.monotonic() - started < 10


def test_a_worker_recycled_after_its_job_still_delivers_that_jobs_artifact(tmp_path):
    """recycle_after ends the worker, and with it its staging directory, right behind a job: the job's
    artifact must be out of staging by then (every 50th model of a LEMUR run failed as 'shut down')."""
    from nnlite_tui.core.sources.discover import discover

    specs = discover([str(REPO / "tests" / "fixtures" / "good_models")])
    opts = ConvertOptions(cache_dir=tmp_path / "cache", workers=1, recycle_after=1, use_cache=False)
    with Converter(opts, log_dir=tmp_path, n_workers=1) as conv:
        results = conv.convert_many(specs, tmp_path, tmp_path)
    assert len(results) == len(specs) == 2
    for r in results:
        assert r["ok"], r
        assert r["sandbox"]["mechanism"] == "bwrap" and os.path.getsize(r["artifact_path"]) > 0
