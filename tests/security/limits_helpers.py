"""What the limits and terminal tests share: a folder of hostile models from tests/security/hostile_limits
(with the targets.json they read), one `nnlite` command in a subprocess, and every file a run wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

HOSTILE = Path(__file__).parent / "hostile_limits"
# The well-behaved model beside the hostile ones is the sandbox tests' own.
CONTROL = Path(__file__).parents[1] / "fixtures" / "sandbox_models" / "normal_cnn.py"
QUICK = ["--headless", "--workers", "1", "--no-cache", "--runs", "2", "--min-seconds", "0", "--warmup", "1",
         "--warmup-seconds", "0", "--max-attempts", "1"]


def models(folder: Path, names: list[str], targets: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(CONTROL if name == CONTROL.stem else HOSTILE / f"{name}.py", folder)
    (folder / "targets.json").write_text(json.dumps(targets or {}))
    return folder


def nnlite(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`python -m nnlite_tui args` from the repository, output as bytes (escape bytes and all)."""
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], cwd=REPO, capture_output=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in Path(root).rglob("*") if p.is_file()]
