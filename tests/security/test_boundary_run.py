"""Hostile model files against the wall between model code and the runner, through `nnlite run` in the
sandbox: one run over every model of tests/security/hostile (one worker, so that models share it when
the runner lets them), then what each attempt achieved, checked on the run's files and cache.

A hostile model knows nothing of nnlite: it finds its sockets in /proc/self/fd, its artifact by
auditing what its process opens, cached files by their link count."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from nnlite_tui.core.results import load_reports
from tests.conftest import REPO
from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here

pytestmark = pytest.mark.slow  # real conversions and runs

HOSTILE = Path(__file__).parent / "hostile"
QUICK = ["--headless", "--workers", "1", "--runs", "3", "--min-seconds", "0", "--warmup", "1",
         "--warmup-seconds", "0", "--max-attempts", "1", "--keep-artifacts", "all"]
CLAIM = "ab" * 32  # the sha256 lies_about_hash.py has its worker report
RUN_TIMEOUT_S = 900  # a runner that blocks on a FIFO never ends: the test fails at this bound


def nnlite(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def hostile_folder(tmp: Path, names: list[str]) -> Path:
    folder = tmp / "models"
    folder.mkdir()
    for name in names:
        shutil.copy(HOSTILE / f"{name}.py", folder)
    return folder


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def special_files(*roots: Path) -> list[str]:
    """Links, FIFOs and other non-regular files under roots (directories named like an artifact too)."""
    found = []
    for root in roots:
        for path in root.rglob("*"):
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) or \
                    (stat.S_ISDIR(mode) and path.suffix in (".tflite", ".pte")):
                found.append(str(path))
    return found


def run_hostile(tmp: Path, names: list[str], swaps: tuple[str, ...]) -> dict:
    """`nnlite run` over the named hostile models and one swaps_artifact.py copy per kind in `swaps`."""
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    folder = hostile_folder(tmp, names)
    lies = folder / "lies_about_hash.py"
    if lies.exists():
        lies.write_text(lies.read_text().replace('CLAIM = "0" * 64', f'CLAIM = "{CLAIM}"'))
    source = (HOSTILE / "swaps_artifact.py").read_text()
    for kind in swaps:
        (folder / f"swap_{kind}.py").write_text(source.replace('SWAP = "symlink"', f'SWAP = "{kind}"'))
    run, cache = tmp / "run", tmp / "cache"
    proc = nnlite(["run", str(folder), "--out", str(run), *QUICK], {"NNLITE_CACHE_DIR": str(cache)})
    reports = {r["model_name"]: r for r in load_reports(run)} if (run / "reports").is_dir() else {}
    return {"folder": folder, "run": run, "cache": cache, "proc": proc, "reports": reports,
            "expected": len(names) + len(swaps)}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    return run_hostile(tmp_path_factory.mktemp("hostile"),
                       ["a_patches_open", "b_after_patch", "lies_about_hash", "hides_a_wrong_artifact"],
                       ("symlink", "sparse"))


@pytest.fixture(scope="module")
def blocking_run(tmp_path_factory):
    """The attempts that took the whole run before: a pickle run by the runner (whose forged result put
    every later result out of step), a FIFO (the runner blocked in open()) and a directory."""
    return run_hostile(tmp_path_factory.mktemp("blocking"), ["pickles_socket", "b_after_patch"], ("fifo", "directory"))


def test_a_fifo_or_a_directory_for_an_artifact_neither_blocks_nor_ends_the_run(blocking_run):
    """The runner once blocked in open() on the FIFO (--timeout, SIGTERM and SIGINT ignored) and ended
    with an internal error on the directory; the other models' reports were never written."""
    done = blocking_run
    assert done["proc"].returncode == 0, done["proc"].stderr[-3000:]
    assert len(done["reports"]) == done["expected"]
    assert done["reports"]["b_after_patch"]["valid"] is True


def test_a_pickle_written_to_every_socket_runs_nothing_outside_the_sandbox(blocking_run):
    assert not (blocking_run["folder"] / "PWNED").exists()
    conversion = blocking_run["reports"]["pickles_socket"]["conversion"]
    assert blocking_run["reports"]["pickles_socket"]["valid"] is False
    assert (conversion["stage"], conversion["cause"], conversion["error_type"]) == \
        ("sandbox", "protocol", "ProtocolViolation"), conversion


def test_a_model_that_patches_open_does_not_reach_the_next_models_artifact(hostile_run):
    report = hostile_run["reports"]["b_after_patch"]
    assert report["valid"] is True, report.get("error_message")
    artifact = next(hostile_run["run"].rglob("b_after_patch.tflite"))
    data = artifact.read_bytes()
    assert b"POISONED-BY-ANOTHER-MODEL" not in data
    assert report["conversion"]["artifact_sha256"] == hashlib.sha256(data).hexdigest()
    # The artifact's graph, read again by a process that never imported a model, agrees with the job's count.
    check = report["conversion"]["compute_check"]
    assert check["verdict"] == "ok" and check["artifact_flops"] > 0 and "recounted" not in check


def test_an_artifact_that_computes_something_else_fails_though_its_own_process_said_it_matched(hostile_run):
    """The model exports another graph than it runs and blinds its own process's comparison (numpy's
    max reads 0): before, the job's process judged its artifact itself and the report said valid with
    a difference of 0. The artifact is run again on the check inputs by a process that never ran it."""
    report = hostile_run["reports"]["hides_a_wrong_artifact"]
    conversion = report["conversion"]
    assert report["valid"] is False
    assert (conversion["stage"], conversion["cause"]) == ("validate", "output-mismatch"), conversion
    assert "outside the model's process" in conversion["error_message"]
    # the honest models' figures are the clean process's: the job's own claim is not what is reported
    honest = hostile_run["reports"]["b_after_patch"]["conversion"]
    assert "outside the model's process" in honest["validation"]["rechecked"]
    assert 0 <= honest["max_abs_diff"] < 1e-3


def test_the_reported_sha256_is_the_runners_measurement_not_the_workers_claim(hostile_run):
    conversion = hostile_run["reports"]["lies_about_hash"]["conversion"]
    artifact = next(hostile_run["run"].rglob("lies_about_hash.tflite"))
    assert conversion["artifact_sha256"] != CLAIM
    assert conversion["artifact_sha256"] == sha256(artifact)
    metas = [json.loads(p.read_text()) for p in hostile_run["cache"].rglob("meta.json")]
    assert all(m.get("artifact_sha256") != CLAIM for m in metas)


@pytest.mark.parametrize("which, kind, says", [("hostile_run", "symlink", "not openable as a plain file"),
                                               ("blocking_run", "fifo", "a FIFO"),
                                               ("blocking_run", "directory", "a directory")])
def test_an_artifact_swapped_for_a_non_file_is_refused(request, which, kind, says):
    report = request.getfixturevalue(which)["reports"][f"swap_{kind}"]
    assert report["valid"] is False
    conversion = report["conversion"]
    assert (conversion["stage"], conversion["cause"]) == ("sandbox", "artifact-refused"), conversion
    assert says in conversion["error_message"]


def test_a_huge_sparse_artifact_is_neither_taken_nor_valid(hostile_run):
    """The job's files are capped by the kernel (RLIMIT_FSIZE): the 64 GiB truncate fails in the job's
    process; were it written, the runner would refuse it (test_boundary_units.py)."""
    report = hostile_run["reports"]["swap_sparse"]
    assert report["valid"] is False
    assert not [p for p in (*hostile_run["run"].rglob("*"), *hostile_run["cache"].rglob("*"))
                if p.is_file() and p.stat().st_size > 2**31]


def test_no_link_or_sparse_file_reached_the_run_or_the_cache(hostile_run):
    done = hostile_run
    assert done["reports"], "the run wrote no report"
    assert special_files(done["run"], done["cache"]) == []
    for meta in done["cache"].rglob("meta.json"):
        artifact = meta.with_name("model.tflite")
        if artifact.exists():
            assert artifact.stat().st_size < 2**30 and sha256(artifact) == json.loads(meta.read_text())["artifact_sha256"]
