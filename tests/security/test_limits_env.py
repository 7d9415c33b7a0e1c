"""Only variables named in an exact list enter the sandbox: a model that puts its whole environment in
its error message, run while secret-looking variables of every family the sandbox once passed by
prefix are set, leaves none of their values in any file of the run or the cache, or on the terminal."""

from __future__ import annotations

import secrets

import pytest

from nnlite_tui.core.results import load_reports
from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here
from tests.security.limits_helpers import QUICK, files_under, models, nnlite

SECRET_NAMES = ("TF_VAR_db_password", "TORCH_HUB_TOKEN", "NNLITE_API_TOKEN", "OMP_SECRET", "MKL_LICENSE_KEY",
                "LITERT_SIGNING_KEY", "XLA_CREDENTIALS", "JAX_TOKEN", "AWS_SECRET_ACCESS_KEY")


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    tmp = tmp_path_factory.mktemp("env")
    values = {name: f"s3cr3t-{secrets.token_hex(8)}" for name in SECRET_NAMES}
    folder = models(tmp / "m", ["dumps_env"])
    run, cache = tmp / "run", tmp / "cache"
    quick = [a for a in QUICK if a != "--no-cache"]  # the cache's meta.json is one of the places looked at
    proc = nnlite(["run", str(folder), "--out", str(run), *quick],
                  {**values, "NNLITE_CACHE_DIR": str(cache), "LANG": "C.UTF-8"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"values": values, "run": run, "cache": cache, "proc": proc,
            "reports": {r["model_name"]: r for r in load_reports(run)}}


def test_the_model_did_dump_its_environment(dumped):
    """The check below means something: the model's message carries what it saw (LANG is on the list)."""
    log = (dumped["run"] / "logs" / "dumps_env.log").read_text()
    assert "environment: [" in log and "'LANG', 'C.UTF-8'" in log


def test_no_secret_value_is_in_any_file_of_the_run_or_the_cache(dumped):
    files = files_under(dumped["run"], dumped["cache"])
    assert any(p.name == "events.jsonl" for p in files) and any(p.name == "state.json" for p in files)
    leaked = {str(p): name for p in files for name, value in dumped["values"].items() if value.encode() in p.read_bytes()}
    assert leaked == {}


def test_no_secret_value_reaches_the_terminal(dumped):
    out = dumped["proc"].stdout + dumped["proc"].stderr
    assert [name for name, value in dumped["values"].items() if value.encode() in out] == []
