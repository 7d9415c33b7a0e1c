"""`nnlite lemur fetch` through the real pip (offline: --find-links a folder holding a wheel built here
from the committed LEMUR fixture tree), then the fetched tree read by discovery."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from nnlite_tui.core.sources.discover import discover
from tests.conftest import LEMUR_TREE

VERSION = "0.0.1"


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(folder: Path, extra: dict[str, bytes] | None = None, tamper: str | None = None) -> Path:
    """A wheel of the fixture tree's ab/ with a RECORD, like nn-dataset's; `tamper` changes one file after RECORD."""
    files = {p.relative_to(LEMUR_TREE).as_posix(): p.read_bytes()
             for p in sorted((LEMUR_TREE / "ab").rglob("*")) if p.is_file()}
    files["ab/__init__.py"] = b""
    files.update(extra or {})
    info = f"nn_dataset-{VERSION}.dist-info"
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: nn-dataset\nVersion: {VERSION}\n".encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in files.items())
    record += f"{info}/RECORD,,\n"
    if tamper:
        files[tamper] = files[tamper] + b"\n# changed after RECORD\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"nn_dataset-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(f"{info}/RECORD", record)
    return wheel


def nnlite(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nnlite_tui", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PIP_NO_INPUT": "1"})


def fixture_models() -> list[str]:
    return sorted(p.stem for p in (LEMUR_TREE / "ab/nn/nn").glob("*.py") if p.name != "__init__.py")


def test_fetch_with_pip_unpacks_a_verified_tree_that_discovery_reads(tmp_path):
    build_wheel(tmp_path / "index")
    dest = tmp_path / "corpus"
    proc = nnlite("lemur", "fetch", str(dest), "--version", VERSION, "--find-links", str(tmp_path / "index"))
    assert proc.returncode == 0, proc.stderr
    models = fixture_models()
    assert f"nn-dataset {VERSION}: {len(models)} models in" in proc.stdout
    manifest = json.loads((dest / "nnlite-lemur.json").read_text())
    assert manifest["models_list"] == models and manifest["sample"] is None
    # Every model file arrives byte for byte, and discovery reads the trials it came with.
    for name in models:
        assert (dest / f"ab/nn/nn/{name}.py").read_bytes() == (LEMUR_TREE / f"ab/nn/nn/{name}.py").read_bytes()
    fetched = {s.name: s.in_shape for s in discover([str(dest)])}
    original = {s.name: s.in_shape for s in discover([str(LEMUR_TREE)])}
    assert fetched == original


def test_a_sample_is_the_same_slice_for_the_same_seed_with_its_trials(tmp_path):
    wheel = build_wheel(tmp_path / "index")
    picks = []
    for attempt in ("a", "b", "c"):
        seed = "7" if attempt != "c" else "8"
        proc = nnlite("lemur", "fetch", str(tmp_path / attempt), "--wheel", str(wheel), "--sample", "4", "--seed", seed)
        assert proc.returncode == 0, proc.stderr
        assert f"a sample of 4 of {len(fixture_models())}, seed {seed}" in proc.stdout
        picks.append(sorted(p.stem for p in (tmp_path / attempt / "ab/nn/nn").glob("*.py") if p.stem != "__init__"))
    assert picks[0] == picks[1] and len(picks[0]) == 4
    assert picks[0] != picks[2]  # 4 of 10 drawn with another seed: 1 chance in 210 of the same set
    # A sampled model keeps its trials; a model left out leaves none behind.
    trials = {d.name.split("_", 3)[-1] for d in (tmp_path / "a/ab/nn/stat/train").iterdir()}
    assert trials <= set(picks[0])
    assert (tmp_path / "a/ab/nn/transform").is_dir()


@pytest.mark.parametrize("case", ["tampered", "escape", "no-models", "exists"])
def test_a_bad_wheel_or_destination_is_one_clear_error_and_leaves_no_tree(tmp_path, case):
    dest = tmp_path / "corpus"
    if case == "tampered":
        wheel = build_wheel(tmp_path / "w", tamper="ab/nn/nn/ga-56.py")
        want = "ab/nn/nn/ga-56.py does not match its sha256 in RECORD"
    elif case == "escape":
        wheel = build_wheel(tmp_path / "w", extra={"ab/../../escaped.py": b"x = 1\n"})
        want = "is not a plain file inside ab/"
    elif case == "no-models":
        wheel = tmp_path / "w" / f"nn_dataset-{VERSION}-py3-none-any.whl"
        wheel.parent.mkdir()
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr("ab/__init__.py", b"")
            z.writestr(f"nn_dataset-{VERSION}.dist-info/RECORD", f"ab/__init__.py,{_digest(b'')},0\n")
        want = "holds no model files"
    else:
        wheel = build_wheel(tmp_path / "w")
        (dest / "ab").mkdir(parents=True)
        want = "exists: fetch into an empty folder"
    proc = nnlite("lemur", "fetch", str(dest), "--wheel", str(wheel))
    assert proc.returncode == 1
    assert want in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "escaped.py").exists()
    if case != "exists":
        assert not (dest / "ab").exists() and not (dest / "nnlite-lemur.json").exists()


def test_a_version_pip_cannot_find_names_it(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = nnlite("lemur", "fetch", str(tmp_path / "c"), "--version", "9.9.9", "--find-links", str(tmp_path / "empty"))
    assert proc.returncode == 1
    assert "pip could not download nn-dataset==9.9.9" in proc.stderr and "Traceback" not in proc.stderr
