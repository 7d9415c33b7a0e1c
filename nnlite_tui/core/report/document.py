"""The report: one JSON file per (model, device, backend), its writer, and the run's exports.

Top level carries the keys LEMUR imports from NN-Lite reports (durations in ns, see LEMUR_KEYS);
beside them a richer, versioned block. Every value is measured or derived from a measurement:
`valid` is false with `error_message` set whenever any stage failed, and the failure still gets a
report. `duration` is the median across the rounds (each round the median of its timed runs), `cpu_duration` the mean of all timed runs.
"""

from __future__ import annotations

import csv
import io
import platform
import time
from pathlib import Path
from collections.abc import Mapping, Sequence

from nnlite_tui import __version__
from nnlite_tui.core.outcomes import BenchResult, ConversionResult, StageError
from nnlite_tui.core.json_file import write_json_atomic
from nnlite_tui.core.report.energy import SUMMARY_COLUMNS as ENERGY_COLUMNS
from nnlite_tui.core.report.energy import lemur_extra, summary_columns
from nnlite_tui.core.results.model import (LEMUR_KEYS, SCHEMA, SCHEMA_VERSION, Accuracy, Benchmark, ErrorBlock,
                                           Interval, Report, Stability, Stats)
from nnlite_tui.core.results.upgrade import parse_report
from nnlite_tui.core.run_dir import safe_name
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME
from nnlite_tui.core.safe_paths import inside
from nnlite_tui.core.sources.units import model_of
from nnlite_tui.core.spec import ModelSpec

# summary.csv's column of a unit's median over the default runtime's (its name as in the first releases
# with runtimes: ratio_to_litert)
RATIO_KEY = f"ratio_to_{DEFAULT_RUNTIME}"

# The report's schema, its version and LEMUR's keys are the typed model's (core/results/model.py).
SUMMARY_COLUMNS = ("model", "status", "device", "backend", "params", "artifact_bytes", "median_ms", "p90_ms",
                   "mean_ms", "iterations", "throttled", "error_stage", "error", "precision", "speedup_vs_fp32",
                   "accuracy", "top1_agreement", "max_abs_err_rel", "mean_abs_err_rel", "cosine", "rounds",
                   "interval_low_ms", "interval_high_ms", "stability", "instability",
                   # the unit's runtime, and its median against the default runtime's for the same model,
                   # precision, device and backend (summary.add_runtime_ratios)
                   "runtime", "runtime_version", RATIO_KEY,
                   # energy per inference and mean power where the run asked for it (report/energy.py)
                   *ENERGY_COLUMNS)


# A cell of summary.csv (SUMMARY_COLUMNS): a figure, a flag, a name or empty.
CsvCell = str | int | float | bool | None


def base_name(name: str | None, precision: str, runtime: str = DEFAULT_RUNTIME) -> str | None:
    """The model a unit measures: its name without the "@<runtime>" and "@<precision>" suffixes."""
    return model_of(name, precision, runtime) if name else name


def weights_text(given: object) -> str:
    """What the model's weights are, in words: random, and whether a requested checkpoint was skipped
    (`given`: the conversion's weights record, dense_weights.WeightsRecord.to_dict())."""
    record = _block(given)
    text = "random (seed 0)"
    if record.get("policy") == "dense" and record.get("redrawn"):
        text += f", {record['redrawn']} all-zero or duplicated tensors re-drawn (conversion.weights)"
    urls = record.get("not_downloaded") or []
    if isinstance(urls, list) and urls:
        text += f"; pretrained weights requested at construction were not downloaded: {', '.join(map(str, urls))}"
    return text


def _int(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"not a figure: {value!r}")
    return int(round(float(value)))


def _dim(value: object) -> int:
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"not a dimension: {value!r}")
    return int(value)


def _block(value: object) -> Mapping[str, object]:
    """A block of the outcomes or the device's facts; {} when it is absent."""
    return value if isinstance(value, Mapping) else {}


def _first_shape(bench: Mapping[str, object], conversion: Mapping[str, object]) -> list[object]:
    """The first input's shape: as the benchmark ran it, else as the artifact declares it."""
    shapes = bench.get("input_shapes") or [conversion.get("artifact_input_shape") or []]
    first = shapes[0] if isinstance(shapes, list) and shapes else None
    return list(first) if isinstance(first, (list, tuple)) else []


def build_report(*, spec: ModelSpec, conversion: ConversionResult | None, bench: BenchResult | None,
                 device: Mapping[str, object], settings: Mapping[str, object], run_id: str,
                 error: StageError | None = None, isolation: Mapping[str, object] | None = None, attempts: int = 1,
                 tool_versions: dict[str, str] | None = None) -> dict[str, object]:
    """Assemble one report, a JSON object that Report validates next. `error` marks a failure at any
    stage; an invalid benchmark is one too."""
    if error is None:
        error = bench.error if bench is not None else StageError("benchmark", "NoResult", "no benchmark result")
    before = dict(bench.before) if bench is not None and bench.before is not None else None
    after = dict(bench.after) if bench is not None and bench.after is not None else None
    bench_block = bench.report_block() if bench is not None else {}
    # What ran, as the device says it (the host's library, an app's own build); null when nothing ran or
    # an app before protocol 3 did not say.
    version = bench_block.get("runtime_version")
    return _assemble(spec=spec, conversion=dict(conversion.details) if conversion else {},
                     bench=bench_block, device=dict(device), before=before, after=after, settings=settings,
                     run_id=run_id, error=error, isolation=isolation, attempts=attempts,
                     tool_versions=tool_versions, runtime_version=version if isinstance(version, str) else None)


def _assemble(*, spec: ModelSpec, conversion: Mapping[str, object], bench: Mapping[str, object],
              device: Mapping[str, object], before: Mapping[str, object] | None, after: Mapping[str, object] | None,
              settings: Mapping[str, object], run_id: str, error: StageError | None,
              isolation: Mapping[str, object] | None, attempts: int, tool_versions: dict[str, str] | None,
              runtime_version: str | None = None) -> dict[str, object]:
    valid = error is None
    written = spec.to_dict()
    stats = _block(bench.get("stats"))
    memory = _block(_block(before).get("memory"))
    shape = _first_shape(bench, conversion)
    dims = {f"in_dim_{i}": (_dim(shape[i]) if i < len(shape) else None) for i in range(4)}
    top = {
        "model_name": spec.name,
        "device_type": device.get("model"),
        "os_version": device.get("os_version"),
        "valid": valid,
        "emulator": bool(device.get("emulator")),
        "error_message": None if error is None else error.text(),
        "iterations": stats.get("count") if valid else None,
        "duration": _int(bench.get("median_ns", stats.get("median_ns"))) if valid else None,
        "unit": "ns",
        "cpu_duration": _int(stats.get("mean_ns")) if valid else None,
        "cpu_min_duration": _int(stats.get("min_ns")) if valid else None,
        "cpu_max_duration": _int(stats.get("max_ns")) if valid else None,
        "cpu_std_dev": _int(stats.get("std_ns")) if valid else None,
        **{k: memory.get(k) for k in ("total_ram_kb", "free_ram_kb", "available_ram_kb", "cached_kb")},
        **dims,
        "device_analytics": {
            "timestamp": _block(before).get("timestamp"),
            "memory_info": memory,
            "cpu_info": device.get("cpu"),
            "thermal_before_c": _block(before).get("thermal_c"),
            "thermal_after_c": _block(after).get("thermal_c"),
            "battery": _block(before).get("battery"),
        },
    }
    conv_keys = ("ok", "stage", "error_type", "error_message", "cached", "key", "converter", "converter_version",
                 "torch_version", "layout", "input_shape", "artifact_input_shape", "artifact_input_dtype", "output_shapes",
                 "max_abs_diff", "validation", "artifact_sha256", "artifact_bytes", "params", "timings", "seconds", "worker_peak_rss_mb",
                 "phases", "cached_phases", "precision", "quantization", "base_key", "fp32_cached", "runtime",
                 "delegation", "flops", "compute_check", "weights", "input_signature",
                 # what was rewritten for the converter, and which part of the model the artifact is
                 "rewrites", "measured_graph",
                 # why it failed, and where its model code ran and what it tried there (convert/sandbox)
                 "cause", "sandbox", "sandbox_attempts")
    runtime, precision = spec.runtime or DEFAULT_RUNTIME, spec.precision
    return {
        **top,
        # Beside LEMUR's keys: the runtime the unit ran in and its library's version.
        "runtime": runtime,
        "runtime_version": runtime_version,
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "created_at": time.time(),
        "attempts": attempts,
        "error": None if error is None else error.to_dict(),
        "model": {
            "name": spec.name, "kind": written.get("kind"), "source": written.get("file") or
            f"{written.get('module')}:{written.get('factory')}", "sha256": written.get("sha256"),
            "in_shape": written.get("in_shape"), "out_shape": written.get("out_shape"), "prm": written.get("prm"),
            "task": written.get("task"), "dataset": written.get("dataset"), "transform": written.get("transform"),
            "origin": written.get("origin"), "params": conversion.get("params"),
            # PyTorch's multiply-accumulate FLOPs of one eval forward (conversion.compute_check); absent
            # when they could not be counted
            "flops": conversion.get("model_flops"),
            "weights": weights_text(conversion.get("weights")), "precision": precision, "runtime": runtime,
            "base_name": base_name(spec.name, precision, runtime),
        },
        # A derived precision's cost against PyTorch fp32 (core/convert/worker/accuracy.py); None for fp32.
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


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value / 1e6, 6)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def summary_row(report: Report | Mapping[str, object], status: str | None = None) -> dict[str, CsvCell]:
    """summary.csv's row of one report (SUMMARY_COLUMNS); speed-ups and ratios need the whole run."""
    if not isinstance(report, Report):
        report = parse_report(report)
    bench = report.benchmark
    stats = bench.stats or Stats()
    error = report.error or ErrorBlock()
    accuracy = report.accuracy or Accuracy()
    return {
        "model": report.model_name,
        "status": status or ("done" if report.valid else "failed"),
        "device": report.device.serial,
        "backend": bench.backend_used or (bench.settings or {}).get("backend"),
        "params": report.model.params,
        "artifact_bytes": report.conversion.artifact_bytes,
        "median_ms": _ms(bench.headline_median_ns),
        "p90_ms": _ms(stats.p90_ns),
        "mean_ms": _ms(stats.mean_ns),
        "iterations": stats.count,
        "throttled": report.conditions.throttled if report.conditions else None,
        "error_stage": error.stage,
        "error": error.message,
        "precision": report.precision, "speedup_vs_fp32": None,
        "runtime": report.runtime_name, "runtime_version": report.runtime_version, RATIO_KEY: None,
        "accuracy": accuracy.verdict, "top1_agreement": _rounded(accuracy.top1_agreement),
        "max_abs_err_rel": _rounded(accuracy.max_abs_err_rel),
        "mean_abs_err_rel": _rounded(accuracy.mean_abs_err_rel), "cosine": _rounded(accuracy.cosine),
        **_rounds_columns(bench if report.valid else None),
        **summary_columns(report.benchmark.energy),
    }


def _rounds_columns(bench: Benchmark | None) -> dict[str, CsvCell]:
    """How many rounds, the interval across them, and the verdict (a report before rounds: one round)."""
    interval = (bench.interval if bench else None) or Interval()
    stability = (bench.stability if bench else None) or Stability()
    rounds = (len(bench.rounds or []) or (1 if bench.stats else None)) if bench else None
    return {"rounds": rounds, "interval_low_ms": _ms(interval.low_ns), "interval_high_ms": _ms(interval.high_ns),
            "stability": stability.verdict or ("single round" if rounds == 1 else None),
            "instability": "; ".join(stability.reasons) or None}


def to_csv(rows: Sequence[Mapping[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SUMMARY_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def write_lemur(reports: Sequence[Report | Mapping[str, object]], out_dir: Path,
                sources: list[Path] | None = None) -> list[Path]:
    """LEMUR's import layout: ab/nn/stat/run/<task>_<nn>/<device>.json with the NN-Lite keys only.
    Every path is checked to stay under out_dir before anything is written (UnsafePath names the
    report, from `sources` when given)."""
    planned = []
    for n, given in enumerate(reports):
        source = sources[n] if sources else f"report {n + 1}"
        report = given if isinstance(given, Report) else parse_report(given, str(source))
        if not sources:
            source = f"report {n + 1} ({report.model_name[:80]!r})"
        model, device = report.model, report.device
        task = model.task or "img-classification"
        prefix = "android" if device.kind != "host" else "host"
        name = f"{prefix}_{safe_name(str(report.device_type or device.serial))}.json"
        precision = model.precision or "fp32"
        runtime = report.runtime_name
        nn = report.base_model
        # One nn, one file per device, runtime and precision (LiteRT fp32 keeps the plain name).
        tail = "".join(f"_{part}" for part in (runtime if runtime != DEFAULT_RUNTIME else "",
                                                precision if precision != "fp32" else "") if part)
        name = name[: -len(".json")] + f"{tail}.json"
        path = inside(out_dir / "ab" / "nn" / "stat" / "run",
                      [(f"{task}_{nn}", "model.task and model_name"), (name, "device, runtime and precision")], source)
        written = report.to_json()
        planned.append((path, {**{k: written.get(k) for k in LEMUR_KEYS}, "model_name": nn, "precision": precision,
                               "runtime": runtime, "runtime_version": report.runtime_version,
                               **lemur_extra(report.benchmark.energy)}))
    for path, data in planned:
        write_json_atomic(path, data)
    return [path for path, _ in planned]
