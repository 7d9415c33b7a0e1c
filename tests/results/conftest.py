"""Two real runs of the same fixture models (two good, one that fails at validate), made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from .runs import real_run


@pytest.fixture(scope="session")
def real_runs(tmp_path_factory, isolated_cache) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("runs")
    return real_run(base / "run_a"), real_run(base / "run_b")
