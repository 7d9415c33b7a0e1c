"""The report: one JSON file per (model, device, backend), its writer, and the run's exports.

Top level carries the keys LEMUR imports from NN-Lite reports (durations in ns, see LEMUR_KEYS);
beside them a richer, versioned block. Every value is measured or derived from a measurement:
`valid` is false with `error_message` set whenever any stage failed, and the failure still gets a
report. `duration` is the median of the timed runs, `cpu_duration` their mean.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import re
import time
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from nnlite_tui import __version__
from nnlite_tui.core.outcomes import BenchResult, ConversionResult, StageError
from nnlite_tui.core.spec import ModelSpec

SCHEMA = "nnlite.report"
# 2: optional blocks `conditions` (thermal/power around the timed runs, protocol 2 apps) and
# `benchmark.ops` (per-op profile), `conversion.phases` (wall/CPU seconds per conversion phase,
# core/convert_phases.py); every version-1 key keeps its meaning.
SCHEMA_VERSION = 2
LEMUR_KEYS = (
    "model_name", "device_type", "os_version", "valid", "emulator", "error_message", "iterations", "duration",
    "unit", "cpu_duration", "cpu_min_duration", "cpu_max_duration", "cpu_std_dev", "total_ram_kb", "free_ram_kb",
    "available_ram_kb", "cached_kb", "in_dim_0", "in_dim_1", "in_dim_2", "in_dim_3", "device_analytics",
)
SUMMARY_COLUMNS = ("model", "status", "device", "backend", "params", "tflite_bytes", "median_ms", "p90_ms",
                   "mean_ms", "iterations", "throttled", "error_stage", "error", "precision", "speedup_vs_fp32",
                   "accuracy", "top1_agreement", "max_abs_err_rel", "mean_abs_err_rel", "cosine")


def safe_name(text: str) -> str:
    # "@" stays: a derived precision's unit is "<model>@<precision>" (core/precision.py).
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text).strip("_") or "x"


def report_filename(model: str, serial: str, backend: str) -> str:
    return f"{safe_name(model)}__{safe_name(serial)}__{safe_name(backend)}.json"


def base_name(name: str | None, precision: str) -> str | None:
    """The model a unit measures: its name without the "@<precision>" of a derived precision."""
    suffix = f"@{precision}"
    return name[: -len(suffix)] if name and precision != "fp32" and name.endswith(suffix) else name


def _int(value: Any) -> int | None:
    return None if value is None else int(round(float(value)))


def build_report(*, spec: ModelSpec, conversion: ConversionResult | None, bench: BenchResult | None,
                 device: Mapping[str, Any], settings: dict[str, Any], run_id: str, error: StageError | None = None,
                 isolation: dict[str, Any] | None = None, attempts: int = 1,
                 tool_versions: dict[str, str] | None = None) -> dict[str, Any]:
    """Assemble one report. `error` marks a failure at any stage; an invalid benchmark is one too."""
    if error is None:
        error = bench.error if bench is not None else StageError("benchmark", "NoResult", "no benchmark result")
    before = dict(bench.before) if bench is not None and bench.before is not None else None
    after = dict(bench.after) if bench is not None and bench.after is not None else None
    bench_block = bench.report_block() if bench is not None else {}
    return _assemble(spec=spec.to_dict(), conversion=dict(conversion.details) if conversion else {},
                     bench=bench_block, device=dict(device), before=before, after=after, settings=settings,
                     run_id=run_id, error=error, isolation=isolation, attempts=attempts,
                     tool_versions=tool_versions)


def _assemble(*, spec: dict[str, Any], conversion: dict[str, Any], bench: dict[str, Any], device: dict[str, Any],
              before: dict[str, Any] | None, after: dict[str, Any] | None, settings: dict[str, Any], run_id: str,
              error: StageError | None, isolation: dict[str, Any] | None, attempts: int,
              tool_versions: dict[str, str] | None) -> dict[str, Any]:
    valid = error is None
    stats = bench.get("stats") or {}
    memory = (before or {}).get("memory") or {}
    shape = (bench.get("input_shapes") or [conversion.get("tflite_input_shape") or []])[0] or []
    dims = {f"in_dim_{i}": (int(shape[i]) if i < len(shape) else None) for i in range(4)}
    top = {
        "model_name": spec.get("name"),
        "device_type": device.get("model"),
        "os_version": device.get("os_version"),
        "valid": valid,
        "emulator": bool(device.get("emulator")),
        "error_message": None if error is None else error.text(),
        "iterations": stats.get("count") if valid else None,
        "duration": _int(stats.get("median_ns")) if valid else None,
        "unit": "ns",
        "cpu_duration": _int(stats.get("mean_ns")) if valid else None,
        "cpu_min_duration": _int(stats.get("min_ns")) if valid else None,
        "cpu_max_duration": _int(stats.get("max_ns")) if valid else None,
        "cpu_std_dev": _int(stats.get("std_ns")) if valid else None,
        **{k: memory.get(k) for k in ("total_ram_kb", "free_ram_kb", "available_ram_kb", "cached_kb")},
        **dims,
        "device_analytics": {
            "timestamp": (before or {}).get("timestamp"),
            "memory_info": memory,
            "cpu_info": device.get("cpu"),
            "thermal_before_c": (before or {}).get("thermal_c"),
            "thermal_after_c": (after or {}).get("thermal_c"),
            "battery": (before or {}).get("battery"),
        },
    }
    conv_keys = ("ok", "stage", "error_type", "error_message", "cached", "key", "converter", "converter_version",
                 "torch_version", "layout", "input_shape", "tflite_input_shape", "tflite_input_dtype", "output_shapes",
                 "max_abs_diff", "validation", "tflite_sha256", "tflite_bytes", "params", "timings", "seconds", "worker_peak_rss_mb",
                 "phases", "cached_phases", "precision", "quantization", "base_key", "fp32_cached")
    return {
        **top,
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "created_at": time.time(),
        "attempts": attempts,
        "error": None if error is None else error.to_dict(),
        "model": {
            "name": spec.get("name"), "kind": spec.get("kind"), "source": spec.get("file") or
            f"{spec.get('module')}:{spec.get('factory')}", "sha256": spec.get("sha256"),
            "in_shape": spec.get("in_shape"), "out_shape": spec.get("out_shape"), "prm": spec.get("prm"),
            "task": spec.get("task"), "dataset": spec.get("dataset"), "transform": spec.get("transform"),
            "origin": spec.get("origin"), "params": conversion.get("params"),
            "weights": "random (seed 0)", "precision": spec.get("precision", "fp32"),
            "base_name": base_name(spec.get("name"), spec.get("precision", "fp32")),
        },
        # A derived precision's cost against PyTorch fp32 (core/accuracy.py); None for fp32.
        "accuracy": conversion.get("accuracy"),
        "conversion": {k: conversion.get(k) for k in conv_keys},
        "benchmark": {**bench, "settings": settings},
        "device": device,
        "conditions": bench.get("conditions"),
        "state_before": before,
        "state_after": after,
        "isolation": isolation,
        "host": {"hostname": platform.node(), "python": platform.python_version(), "platform": platform.platform()},
        "tool": {"nnlite": __version__, **(tool_versions or {})},
    }


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_reports(run_dir: Path) -> list[dict[str, Any]]:
    reports = []
    for path in sorted((run_dir / "reports").glob("*.json")):
        try:
            reports.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: unreadable report ({exc})") from exc
    return reports


def summary_row(report: dict[str, Any], status: str | None = None) -> dict[str, Any]:
    bench = report.get("benchmark") or {}
    stats = bench.get("stats") or {}
    error = report.get("error") or {}
    ms = (lambda v: None if v is None else round(v / 1e6, 6))
    return {
        "model": report.get("model_name"),
        "status": status or ("done" if report.get("valid") else "failed"),
        "device": (report.get("device") or {}).get("serial"),
        "backend": bench.get("backend_used") or (bench.get("settings") or {}).get("backend"),
        "params": (report.get("model") or {}).get("params"),
        "tflite_bytes": (report.get("conversion") or {}).get("tflite_bytes"),
        "median_ms": ms(stats.get("median_ns")),
        "p90_ms": ms(stats.get("p90_ns")),
        "mean_ms": ms(stats.get("mean_ns")),
        "iterations": stats.get("count"),
        "throttled": (report.get("conditions") or {}).get("throttled"),
        "error_stage": error.get("stage"),
        "error": error.get("message"),
        **_precision_columns(report),
    }


def _precision_columns(report: dict[str, Any]) -> dict[str, Any]:
    """The precision and, for a derived one, its accuracy figures (speed-up needs the whole run)."""
    accuracy = report.get("accuracy") or {}
    rounded = (lambda v: None if v is None else round(float(v), 6))
    return {"precision": (report.get("model") or {}).get("precision") or "fp32", "speedup_vs_fp32": None,
            "accuracy": accuracy.get("verdict"), "top1_agreement": rounded(accuracy.get("top1_agreement")),
            "max_abs_err_rel": rounded(accuracy.get("max_abs_err_rel")),
            "mean_abs_err_rel": rounded(accuracy.get("mean_abs_err_rel")), "cosine": rounded(accuracy.get("cosine"))}


def to_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SUMMARY_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def write_lemur(reports: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """LEMUR's import layout: ab/nn/stat/run/<task>_<nn>/<device>.json with the NN-Lite keys only."""
    written = []
    for report in reports:
        model = report.get("model") or {}
        task = model.get("task") or "img-classification"
        device = report.get("device") or {}
        prefix = "android" if device.get("kind") != "host" else "host"
        name = f"{prefix}_{safe_name(str(report.get('device_type') or device.get('serial')))}.json"
        precision = model.get("precision") or "fp32"
        nn = model.get("base_name") or report.get("model_name")
        if precision != "fp32":  # one nn, one file per device and precision
            name = name[: -len(".json")] + f"_{precision}.json"
        path = out_dir / "ab" / "nn" / "stat" / "run" / f"{task}_{nn}" / name
        write_json_atomic(path, {**{k: report.get(k) for k in LEMUR_KEYS}, "model_name": nn, "precision": precision})
        written.append(path)
    return written
