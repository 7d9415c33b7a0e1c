"""Derived precisions: each (model, precision) unit comes from its fp32 artifact, in a worker.

Every model is converted once to fp32; fp16, dynamic-range int8 and full int8 are derived from
that fp32 artifact in a conversion worker, by the unit's runtime (runtimes.base.Runtime.derive).
A derived unit's cache key is the fp32 conversion's key + what determines the derivation (the
runtime's recipe and route) + how it was calibrated: a cached fp32 conversion is reused, and so is
a cached derivation.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Protocol

from nnlite_tui.core.convert.options import cache_key
from nnlite_tui.core.convert.record import CalibrationSettings, ConversionJob, ConversionRecord, subset
from nnlite_tui.core.runtimes import get_runtime
from nnlite_tui.core.sources.units import base_spec
from nnlite_tui.core.spec import ModelSpec, sha256_file

# Bump when a derivation's output for the same inputs changes (invalidates cached variants).
VARIANT_FORMAT = 3  # 2: full int8 falls back to PT2E when the recipe is beyond tolerance; 3: shared zero points


CALIBRATED = ("int8",)  # precisions whose recipe needs representative inputs


def calibration_settings(samples: int, directory: Path | None) -> CalibrationSettings:
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


def variant_key(base_key: str, precision: str, calibration: CalibrationSettings | None, derivation: list[Any]) -> str:
    payload = json.dumps([VARIANT_FORMAT, base_key, precision, calibration, derivation], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def calibration_of(options: Any, precision: str) -> CalibrationSettings | None:
    """How `precision` is calibrated under these conversion options (None: it needs no calibration)."""
    if precision not in CALIBRATED:
        return None
    return calibration_settings(options.calibration_samples, options.calibration_dir)


def unit_key(spec: ModelSpec, options: Any) -> str:
    """The cache key of any unit: its conversion's, or for a derived precision the derivation's (made
    from the fp32 conversion's key). Local and cluster converters key alike, so they share the cache."""
    runtime = get_runtime(spec.runtime)
    key = cache_key(base_spec(spec), options, runtime.versions(), runtime.format_version)
    return key if spec.precision == "fp32" else derived_key(key, spec, options)


def derived_key(base_key: str, spec: ModelSpec, options: Any) -> str:
    """The cache key of `spec` (a derived precision) made from the fp32 conversion cached under
    `base_key`: the same wherever the derivation runs (a local worker or a cluster's actor)."""
    return variant_key(base_key, spec.precision, calibration_of(options, spec.precision),
                       get_runtime(spec.runtime).derivation(spec.precision))


class ConvertsAndCaches(Protocol):
    """What a derivation needs of the converter (convert.converter.Converter, the cluster's RayConverter)."""

    options: Any

    def convert(self, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                cancel: threading.Event | None = None) -> ConversionRecord: ...

    def cached_job(self, key: str, job: ConversionJob, dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None) -> ConversionRecord: ...


UNSUPPORTED = "unsupported"  # the stage of a unit whose runtime does not make its precision: skipped


def unsupported(spec: ModelSpec) -> ConversionRecord:
    """The result of a unit its runtime cannot make: not the model's failure, so the unit is skipped."""
    runtime = get_runtime(spec.runtime)
    return {"ok": False, "stage": UNSUPPORTED, "error_type": "UnsupportedPrecision", "model": spec.name,
            "precision": spec.precision, "runtime": spec.runtime,
            "error_message": f"{spec.precision} is not supported by this runtime ({runtime.label} makes "
                             f"{', '.join(runtime.precisions)})"}


def derive_variant(converter: ConvertsAndCaches, spec: ModelSpec, dest: Path, log_path: Path | None = None,
                   cancel: threading.Event | None = None) -> ConversionRecord:
    """Convert the fp32 unit (or take it from the cache), then derive `spec.precision` from it.

    Returns a converter result dict for the derived unit; a failed fp32 conversion fails the unit
    at the same stage, so transient faults are retried and deterministic ones are not.
    """
    runtime = get_runtime(spec.runtime)
    if spec.precision not in runtime.precisions:
        return unsupported(spec)
    base = base_spec(spec)
    # The fp32 file the worker reads: a private copy (a hard link to the cache's), gone afterwards, so
    # that the fp32 unit's own run-dir file stays under the run's --keep-artifacts policy.
    source = dest.with_name(f"{dest.name}.fp32-source{get_runtime(spec.runtime).suffix}")
    try:
        return _derive(converter, spec, base, source, dest, log_path, cancel)
    finally:
        source.unlink(missing_ok=True)


def _derive(converter: ConvertsAndCaches, spec: ModelSpec, base: ModelSpec, source: Path, dest: Path,
            log_path: Path | None, cancel: threading.Event | None) -> ConversionRecord:
    base_result = converter.convert(base, source, log_path, cancel)
    common: ConversionRecord = {"model": spec.name, "precision": spec.precision, "runtime": spec.runtime,
                              "base_key": base_result.get("key"), "fp32_cached": bool(base_result.get("cached"))}
    if not base_result.get("ok"):
        message = f"fp32 conversion failed: {base_result.get('error_message')}"
        return {**base_result, **common, "error_message": message}
    calibration = calibration_of(converter.options, spec.precision)
    key = derived_key(str(base_result.get("key")), spec, converter.options)
    policy = (base_result.get("weights") or {}).get("policy")  # the weights the fp32 artifact was made with
    job: ConversionJob = {"derive": True, "spec": spec.to_dict(), "runtime": spec.runtime,
                          "fp32_path": str(base_result["artifact_path"]),
                          "layout": base_result.get("layout"), "calibration": calibration,
                          "weights": policy if isinstance(policy, str) else None,
                          # the same part of the model as the fp32 one
                          "measured_graph": base_result.get("measured_graph"),
                          "log_path": str(log_path) if log_path else None}
    # The fp32 artifact's inputs (their ranges), and what of the model it is, hold for what derives from it.
    inherited = subset(base_result, ("input_signature", "measured_graph", "rewrites"))
    return {**inherited, **converter.cached_job(key, job, dest, log_path, cancel), **common}
