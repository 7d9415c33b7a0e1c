"""A secret beside a model file (a `.env`, a `.git` folder) is not in the sandbox's view, through `nnlite
run`: a model that reads every dotfile it can see and fails with their text puts none of it in the
run's files."""

from __future__ import annotations

import pytest

from tests.core.sandbox_helpers import SKIP_REASON, sandbox_here
from tests.security.test_boundary_run import QUICK, hostile_folder, nnlite

SECRET = "db-password-4c1f9e"


def test_dotfiles_beside_a_model_are_shown_empty(tmp_path):
    if not sandbox_here():
        pytest.skip(SKIP_REASON)
    folder = hostile_folder(tmp_path, ["reads_dotfiles"])
    (folder / ".env").write_text(f"PASSWORD={SECRET}\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text(f"token = {SECRET}\n")
    run = tmp_path / "run"
    proc = nnlite(["run", str(folder), "--out", str(run), *QUICK], {"NNLITE_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = [p for p in run.rglob("*") if p.is_file()]
    assert any("read: " in p.read_text(errors="replace") for p in written)  # the model ran and failed
    assert not [str(p) for p in written if SECRET in p.read_text(errors="replace")]
    assert SECRET not in proc.stdout + proc.stderr
