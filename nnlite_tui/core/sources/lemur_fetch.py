"""Getting the LEMUR corpus from its PyPI release (nn-dataset) as a tree nnlite reads, without git.

The release's wheel holds the whole dataset: `ab/nn/nn/*.py` (the models), `ab/nn/stat/` (training
trials and legacy reports), `ab/nn/transform/` and LEMUR's own package (`ab/...`) that a few models
import. `pip download` fetches the wheel (pip checks the index's hash); every file taken out of it is
checked against the wheel's RECORD (sha256) before the tree is moved into place, so a tree is either
whole and verified or absent. A sample keeps N models drawn by a seeded generator, with their trials,
and every shared file (transforms, the package), so the same seed gives the same slice anywhere.

The wheel is data from outside: member names are checked to stay inside the destination, links are
not extracted, and nothing in it is imported here.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath


DISTRIBUTION = "nn-dataset"
# The last release that ships the model files and their trials (later releases ship the code only).
DEFAULT_VERSION = "2.1.2"
MODELS = "ab/nn/nn/"
STAT = "ab/nn/stat/"
MANIFEST = "nnlite-lemur.json"


class LemurFetchError(Exception):
    """A fetch that cannot complete; the message names what and why."""


@dataclass(frozen=True)
class FetchResult:
    dest: str
    version: str
    wheel: str
    wheel_sha256: str
    models: int  # model files in the tree
    models_in_release: int
    with_trials: int  # of `models`, those with recorded training trials
    files_verified: int
    sample: int | None
    seed: int | None


def download_wheel(version: str, into: Path, find_links: str | None = None) -> Path:
    """`pip download` the release's wheel into `into`; LemurFetchError with pip's own last words."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
           "--disable-pip-version-check", "-d", str(into), f"{DISTRIBUTION}=={version}"]
    if find_links:
        cmd += ["--no-index", "--find-links", find_links]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(into.glob("nn_dataset-*.whl"))
    if proc.returncode != 0 or not wheels:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip() and "WARNING" not in ln]
        raise LemurFetchError(f"pip could not download {DISTRIBUTION}=={version}: "
                              f"{lines[-1] if lines else f'exit {proc.returncode}'}")
    return wheels[0]


def _record(z: zipfile.ZipFile, wheel: Path) -> dict[str, str]:
    """Member name -> urlsafe-base64 sha256, from the wheel's RECORD."""
    names = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")]
    if len(names) != 1:
        raise LemurFetchError(f"{wheel.name}: not a wheel (no single .dist-info/RECORD)")
    rows = csv.reader(io.StringIO(z.read(names[0]).decode("utf-8")))
    out: dict[str, str] = {}
    for row in rows:
        if len(row) >= 2 and row[1].startswith("sha256="):
            out[row[0]] = row[1][len("sha256="):]
    return out


def _safe_member(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\x00" in name or name.endswith("/"):
        return None
    return path


def _is_link(info: zipfile.ZipInfo) -> bool:
    mode = info.external_attr >> 16
    return (mode & 0o170000) == 0o120000


def _model_name(member: str) -> str | None:
    rest = member[len(MODELS):]
    if not member.startswith(MODELS) or "/" in rest or not rest.endswith(".py") or rest == "__init__.py":
        return None
    return rest[:-3]


def _stat_owner(member: str) -> str | None:
    """The model a stat file belongs to: `stat/train/<task>_<dataset>_<metric>_<nn>/…` or `stat/run/<task>_<nn>/…`."""
    parts = member[len(STAT):].split("/")
    if len(parts) < 3:
        return None
    kind, folder = parts[0], parts[1]
    fields = folder.split("_", 3 if kind == "train" else 1)
    return fields[-1] if len(fields) == (4 if kind == "train" else 2) else None


def choose(models: list[str], sample: int | None, seed: int | None) -> set[str]:
    if sample is None:
        return set(models)
    if sample <= 0:
        raise LemurFetchError(f"--sample must be at least 1 (got {sample})")
    ordered = sorted(models)
    return set(random.Random(seed).sample(ordered, min(sample, len(ordered))))


def unpack(wheel: Path, dest: Path, version: str, sample: int | None = None, seed: int | None = None) -> FetchResult:
    """Extract the verified tree into `dest/ab` (absent before, whole after)."""
    if (dest / "ab").exists():
        raise LemurFetchError(f"{dest / 'ab'} exists: fetch into an empty folder (or remove it first)")
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    try:
        z = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile as exc:
        raise LemurFetchError(f"{wheel.name}: not a zip archive ({exc})") from None
    with z:
        record = _record(z, wheel)
        infos = [i for i in z.infolist() if i.filename.startswith("ab/") and not i.is_dir()]
        all_models = [m for m in (_model_name(i.filename) for i in infos) if m]
        if not all_models:
            raise LemurFetchError(f"{wheel.name}: holds no model files under {MODELS} "
                                  f"(releases after {DEFAULT_VERSION} ship the code only)")
        chosen = choose(all_models, sample, seed)
        dest.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".nnlite-lemur.", dir=dest))
        try:
            verified, trained = _extract(z, infos, record, chosen, staging, wheel)
            os.replace(staging / "ab", dest / "ab")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    result = FetchResult(str(dest), version, wheel.name, sha, len(chosen), len(all_models),
                         len(trained & chosen), verified, sample, seed if sample is not None else None)
    manifest = dest / MANIFEST
    tmp = manifest.with_name(manifest.name + ".tmp")
    tmp.write_text(json.dumps({**asdict(result), "models_list": sorted(chosen)}, indent=1))
    os.replace(tmp, manifest)
    return result


def _extract(z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], record: dict[str, str], chosen: set[str],
             staging: Path, wheel: Path) -> tuple[int, set[str]]:
    verified = 0
    trained: set[str] = set()
    for info in infos:
        name = info.filename
        model = _model_name(name)
        owner = _stat_owner(name) if name.startswith(STAT) else None
        if (model is not None and model not in chosen) or (owner is not None and owner not in chosen):
            continue
        path = _safe_member(name)
        if path is None or _is_link(info):
            raise LemurFetchError(f"{wheel.name}: member {name!r} is not a plain file inside ab/")
        expected = record.get(name)
        if expected is None:
            raise LemurFetchError(f"{wheel.name}: {name} is not listed in the wheel's RECORD")
        data = z.read(info)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if digest != expected:
            raise LemurFetchError(f"{wheel.name}: {name} does not match its sha256 in RECORD")
        target = staging.joinpath(*path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        verified += 1
        if owner is not None and name[len(STAT):].startswith("train/"):
            trained.add(owner)
    return verified, trained


def fetch(dest: Path, version: str = DEFAULT_VERSION, sample: int | None = None, seed: int | None = None,
          wheel: Path | None = None, find_links: str | None = None) -> FetchResult:
    """Download (unless `wheel` is given) and unpack the corpus into `dest`."""
    if wheel is not None:
        if not wheel.is_file():
            raise LemurFetchError(f"{wheel}: no such wheel file")
        return unpack(wheel, dest, version, sample, seed)
    with tempfile.TemporaryDirectory(prefix="nnlite-lemur-wheel.") as tmp:
        return unpack(download_wheel(version, Path(tmp), find_links), dest, version, sample, seed)
