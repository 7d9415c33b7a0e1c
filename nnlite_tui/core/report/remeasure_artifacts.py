"""Where `compare --remeasure` finds the two runs' artifacts: the run directory, else the conversion cache.

A run keeps its artifacts only with --keep-artifacts (else only its failures'); the conversion cache
keeps every conversion, of every runtime, by its key (report: conversion.key) until its size cap evicts it. An
artifact found is checked against the report's conversion.artifact_sha256, so that the bytes timed
again are the bytes the run timed; what cannot be found is named with where it was looked for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.report.rows import ResultRow, RunResults
from nnlite_tui.core.results import Report
from nnlite_tui.core.run_dir import LEGACY_ARTIFACTS_DIR, artifact_path, safe_name
from nnlite_tui.core.runtimes import get_runtime, runtime_names


@dataclass(frozen=True)
class Found:
    path: Path | None
    where: str  # "run directory", "conversion cache", or why it is missing


@dataclass(frozen=True)
class Unit:
    """One (model, device, backend, precision) of both runs, with both sides' artifacts."""

    key: tuple[str, str, str, str]
    name: str  # the unit's name in its reports (model_name)
    runtime: str
    before: Found
    after: Found
    settings: Mapping[str, object]  # the before run's benchmark settings (threads, backend), as written

    @property
    def id(self) -> str:
        return "|".join(self.key)

    def missing(self) -> list[str]:
        return [f"{self.name}: {side}: {found.where}" for side, found in (("before", self.before), ("after", self.after))
                if found.path is None]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def find_artifact(run: RunResults, row: ResultRow, report: Report, cache_root: Path, fetched: Path) -> Found:
    """The unit's artifact in its run directory, else fetched from the cache to `fetched` + its runtime's suffix."""
    from nnlite_tui.core.convert.cache import ConversionCache

    unit = report.model_name or row.model
    if row.runtime not in runtime_names():
        return Found(None, f"its runtime {row.runtime!r} is not installed here")
    suffix = get_runtime(row.runtime).suffix
    dest = fetched.with_name(fetched.name + suffix)
    want = report.conversion.artifact_sha256
    for candidate in (artifact_path(run.run_dir, unit, suffix),
                      Path(run.run_dir) / LEGACY_ARTIFACTS_DIR / f"{safe_name(unit)}{suffix}"):
        if candidate.is_file() and (not want or sha256(candidate) == want):
            return Found(candidate, "run directory")
    written_key = report.conversion.extra("key")  # the conversion cache's key (convert/cache.py)
    key = written_key if isinstance(written_key, str) else None
    looked = f"not in {Path(run.run_dir) / 'artifacts'} (kept there only with --keep-artifacts)"
    if not key:
        return Found(None, looked + "; no conversion key in its report")
    if dest.is_file() and (not want or sha256(dest) == want):
        return Found(dest, "conversion cache")  # fetched by an earlier, interrupted re-measurement
    result = ConversionCache(cache_root).fetch(key, dest)
    if result and result.get("ok") and dest.is_file():
        if not want or sha256(dest) == want:
            return Found(dest, "conversion cache")
        return Found(None, f"{looked}; the conversion cache's entry {key[:12]} has other bytes than the run timed")
    return Found(None, f"{looked} nor in the conversion cache {cache_root} (key {key[:12]}: evicted or another cache)")


def find_units(before: RunResults, after: RunResults, cache_root: Path, fetched: Path) -> list[Unit]:
    """The units valid in both runs, each with its two artifacts (or why one is missing)."""
    rows_b = {r.key: (r, rep) for r, rep in zip(before.rows, before.typed) if r.status == "done"}
    rows_a = {r.key: (r, rep) for r, rep in zip(after.rows, after.typed) if r.status == "done"}
    units = []
    for key in sorted(set(rows_b) & set(rows_a)):
        (rb, repb), (ra, repa) = rows_b[key], rows_a[key]
        name = repb.model_name or rb.model
        units.append(Unit(key, name, rb.runtime,
                          find_artifact(before, rb, repb, cache_root, fetched / f"before-{safe_name('|'.join(key))}"),
                          find_artifact(after, ra, repa, cache_root, fetched / f"after-{safe_name('|'.join(key))}"),
                          dict(repb.benchmark.settings or {})))
    return units
