"""Hostile model files through the two other ways a model's code reaches a worker: a derived precision
(whose job gets the cached fp32 artifact) and a Ray cluster's conversion actor (`--cluster local`)."""

from __future__ import annotations

import json

import pytest

from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here
from nnlite_tui.core.results import load_reports
from tests.security.test_boundary_run import QUICK, hostile_folder, nnlite, sha256

QUICK_CONVERT = ["--workers", "1"]


@pytest.fixture(autouse=True)
def _sandboxed():
    if not sandbox_here():
        pytest.skip(SKIP_REASON)


def test_a_derivation_cannot_write_through_to_the_cached_fp32_artifact(tmp_path):
    folder = hostile_folder(tmp_path, ["writes_through_links"])
    cache = tmp_path / "cache"
    proc = nnlite(["convert", str(folder), "--out", str(tmp_path / "out"), "--precision", "fp32,int8",
                   "--calibration-samples", "4", *QUICK_CONVERT], {"NNLITE_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    entries = [m for m in cache.rglob("meta.json") if json.loads(m.read_text()).get("ok")]
    assert len(entries) == 2, proc.stdout[-2000:]  # the fp32 conversion and the int8 derivation
    for meta in entries:
        artifact = meta.with_name("model.tflite")
        assert b"WRITTEN-THROUGH-A-LINK" not in artifact.read_bytes()
        assert sha256(artifact) == json.loads(meta.read_text())["artifact_sha256"]


def test_a_pickle_through_the_cluster_actors_worker_runs_nothing(tmp_path):
    folder = hostile_folder(tmp_path, ["pickles_socket", "b_after_patch"])
    run = tmp_path / "run"
    proc = nnlite(["run", str(folder), "--out", str(run), "--cluster", "local", *QUICK],
                  {"NNLITE_CACHE_DIR": str(tmp_path / "cache")})
    assert not (folder / "PWNED").exists()
    assert proc.returncode == 0, proc.stderr[-3000:]
    reports = {r["model_name"]: r for r in load_reports(run)}
    conversion = reports["pickles_socket"]["conversion"]
    assert (reports["pickles_socket"]["valid"], conversion["cause"]) == (False, "protocol"), conversion
    assert reports["b_after_patch"]["valid"] is True, reports["b_after_patch"].get("error_message")
