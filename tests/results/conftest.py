"""Two real runs of the same fixture models (two good, one that fails at validate), and one of the good models
in both runtimes, made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from .runs import real_run, runtime_run


@pytest.fixture(scope="session")
def real_runs(tmp_path_factory, isolated_cache) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("runs")
    return real_run(base / "run_a"), real_run(base / "run_b")


@pytest.fixture(scope="session")
def both_runtimes(tmp_path_factory, isolated_cache) -> Path:
    """A real run of the good models in LiteRT and ExecuTorch."""
    return runtime_run(tmp_path_factory.mktemp("runtimes") / "run")
