"""Precisions: which ones a run asks for, the units of work they make, and deriving one.

Every model is converted once to fp32; fp16, dynamic-range int8 and full int8 are derived from
that fp32 .tflite in a conversion worker (quantize_worker.py). Each (model, precision) is its own
unit: the spec carries `precision`, and the unit's name is `<model>` for fp32 and
`<model>@<precision>` otherwise, so it has its own state, cache entry, report and summary row.

A derived unit's cache key is the fp32 conversion's key + the recipe + how it was calibrated:
a cached fp32 conversion is reused, and so is a cached derivation.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from nnlite_tui.core.spec import ModelSpec, sha256_file

PRECISIONS = ("fp32", "fp16", "dynamic-int8", "int8")
# Bump when a derivation's output for the same inputs changes (invalidates cached variants).
VARIANT_FORMAT = 3  # 2: full int8 falls back to PT2E when the recipe is beyond tolerance; 3: shared zero points
CALIBRATED = ("int8",)  # precisions whose recipe needs representative inputs


def parse_precisions(text: str | Iterable[str]) -> tuple[str, ...]:
    """"fp32,int8" or "all" -> the precisions in canonical order; ValueError names an unknown one."""
    items = text.split(",") if isinstance(text, str) else list(text)
    wanted = {item.strip().lower() for item in items if item and item.strip()}
    if "all" in wanted:
        return PRECISIONS
    unknown = sorted(wanted - set(PRECISIONS))
    if unknown:
        raise ValueError(f"unknown precision {', '.join(unknown)}; choose from {', '.join(PRECISIONS)} or all")
    if not wanted:
        raise ValueError("no precision given")
    return tuple(p for p in PRECISIONS if p in wanted)


def unit_name(model: str, precision: str) -> str:
    return model if precision == "fp32" else f"{model}@{precision}"


def base_spec(spec: ModelSpec) -> ModelSpec:
    """The fp32 unit a derived unit comes from."""
    if spec.precision == "fp32":
        return spec
    suffix = f"@{spec.precision}"
    name = spec.name[: -len(suffix)] if spec.name.endswith(suffix) else spec.name
    return replace(spec, name=name, precision="fp32")


def expand(specs: Sequence[ModelSpec], precisions: Sequence[str]) -> list[ModelSpec]:
    """One spec per (model, precision), precision by precision: every fp32 unit comes first, so
    that a derived unit mostly finds its fp32 conversion already in the cache."""
    return [spec if precision == "fp32" else replace(spec, name=unit_name(spec.name, precision), precision=precision)
            for precision in precisions for spec in specs]


def calibration_settings(samples: int, directory: Path | None) -> dict[str, Any]:
    """How int8 is calibrated, as the worker job and the cache key see it (a directory by content)."""
    if directory is None:
        return {"samples": int(samples), "dir": None}
    files = sorted(p for p in Path(directory).iterdir() if p.suffix in (".npy", ".npz"))
    return {"samples": None, "dir": str(directory), "files": [[p.name, sha256_file(str(p))] for p in files]}


def check_calibration_dir(directory: Path) -> None:
    """A --calibration directory must hold .npy/.npz arrays; ValueError says what is wrong."""
    if not directory.is_dir():
        raise ValueError(f"calibration directory not found: {directory}")
    if not any(p.suffix in (".npy", ".npz") for p in directory.iterdir()):
        raise ValueError(f"{directory}: no .npy or .npz files to calibrate on")


def variant_key(base_key: str, precision: str, calibration: dict[str, Any] | None, versions: dict[str, str]) -> str:
    from nnlite_tui.core.quantize_worker import ACCURACY_SAMPLES, RECIPES, ROUTE

    payload = json.dumps([VARIANT_FORMAT, base_key, precision, ROUTE, RECIPES[precision], calibration,
                          ACCURACY_SAMPLES, versions.get("ai-edge-quantizer")], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def calibration_of(options: Any, precision: str) -> dict[str, Any] | None:
    """How `precision` is calibrated under these conversion options (None: it needs no calibration)."""
    if precision not in CALIBRATED:
        return None
    return calibration_settings(options.calibration_samples, options.calibration_dir)


def derived_key(base_key: str, precision: str, options: Any, versions: dict[str, str]) -> str:
    """The cache key of `precision` derived from the fp32 conversion cached under `base_key`: the
    same wherever the derivation runs (a local worker or a cluster's conversion actor)."""
    return variant_key(base_key, precision, calibration_of(options, precision),
                       {**versions, "ai-edge-quantizer": _version("ai-edge-quantizer")})


class ConvertsAndCaches(Protocol):
    """What a derivation needs of the converter (core.convert.Converter)."""

    options: Any
    versions: dict[str, str]

    def convert(self, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                cancel: threading.Event | None = None) -> dict[str, Any]: ...

    def cached_job(self, key: str, job: dict[str, Any], dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None) -> dict[str, Any]: ...


def derive_variant(converter: ConvertsAndCaches, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None) -> dict[str, Any]:
    """Convert the fp32 unit (or take it from the cache), then derive `spec.precision` from it.

    Returns a converter result dict for the derived unit; a failed fp32 conversion fails the unit
    at the same stage, so transient faults are retried and deterministic ones are not.
    """
    base = base_spec(spec)
    # The fp32 file the worker reads: a private copy (a hard link to the cache's), gone afterwards, so
    # that the fp32 unit's own run-dir file stays under the run's --keep-tflite policy.
    source = dest.with_name(f"{dest.name}.fp32-source.tflite")
    try:
        return _derive(converter, spec, base, source, dest, log_path, cancel)
    finally:
        source.unlink(missing_ok=True)


def _derive(converter: ConvertsAndCaches, spec: ModelSpec, base: ModelSpec, source: Path, dest: Path,
            log_path: Path | None, cancel: threading.Event | None) -> dict[str, Any]:
    base_result = converter.convert(base, source, log_path, cancel)
    common = {"model": spec.name, "precision": spec.precision, "base_key": base_result.get("key"),
              "fp32_cached": bool(base_result.get("cached"))}
    if not base_result.get("ok"):
        message = f"fp32 conversion failed: {base_result.get('error_message')}"
        return {**base_result, **common, "error_message": message}
    calibration = calibration_of(converter.options, spec.precision)
    key = derived_key(str(base_result.get("key")), spec.precision, converter.options, converter.versions)
    job = {"derive": True, "spec": spec.to_dict(), "fp32_path": base_result["tflite_path"],
           "layout": base_result.get("layout"), "calibration": calibration,
           "log_path": str(log_path) if log_path else None}
    return {**converter.cached_job(key, job, dest, log_path, cancel), **common}


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"
