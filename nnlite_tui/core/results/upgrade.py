"""Every earlier report schema (1-3) read as today's (4), in this one place (as asv's Results does).

What each version lacks, and what it becomes here:
- 1: the conversion block's `tflite_*` keys (now `artifact_*`), no runtime (LiteRT was the only one),
  no precision (fp32 was the only one), no `model.base_name` (the unit was the model).
- 2: a per-op profile might sit at the top level as a bare list of ops (now `benchmark.ops`).
- 1-2: no rounds: the benchmark is one round, its median the samples' (Benchmark.headline_median_ns).
- 1-3: no `model.flops` (the ops block's count stands in where a profile counted them).
- any: the parameter count might only be in the conversion block (now `model.params` too).

Nothing is invented: a key an old release did not measure stays absent.
"""

from __future__ import annotations

from collections.abc import Mapping

from nnlite_tui.core.outcomes import conversion_record
from nnlite_tui.core.results.model import SCHEMA_VERSION, Report
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME


class ReportError(ValueError):
    """A report file that cannot be read; the message names the file."""


def _block(data: Mapping[str, object], key: str) -> dict[str, object]:
    value = data.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def _precision(data: Mapping[str, object]) -> str:
    """Reports written before precisions existed are fp32; older ones kept it in other blocks."""
    for block in (data, _block(data, "benchmark"), _block(data, "conversion"), _block(data, "model")):
        if block.get("precision"):
            return str(block["precision"])
    return "fp32"


def upgrade(raw: Mapping[str, object]) -> dict[str, object]:
    """A report's JSON object in today's key names and places (the input is not changed); Report
    validates it next."""
    data = dict(raw)
    version = data.get("schema_version")
    conversion = conversion_record(_block(data, "conversion"))
    model = _block(data, "model")
    bench = _block(data, "benchmark")
    runtime = data.get("runtime") or model.get("runtime") or conversion.get("runtime") or DEFAULT_RUNTIME
    model.setdefault("name", data.get("model_name"))
    model["precision"] = _precision(data)
    model["runtime"] = model.get("runtime") or runtime
    model.setdefault("base_name", data.get("model_name"))
    if not model.get("params"):
        counted = conversion.get("params") or data.get("params")
        if counted:
            model["params"] = counted
    loose_ops = data.pop("ops", None)
    if not bench.get("ops") and isinstance(loose_ops, list) and loose_ops:
        bench["ops"] = {"schema_version": 1, "ops": loose_ops}
    if not model.get("flops"):
        counted = next((b.get("flops") for k, b in bench.items() if k.startswith("ops") and isinstance(b, Mapping)
                        and b.get("flops")), None)
        if counted:
            model["flops"] = counted
    if data.get("conversion") is not None or conversion:
        data["conversion"] = conversion
    data.update(model=model, runtime=runtime)
    if data.get("benchmark") is not None or bench:
        data["benchmark"] = bench
    if isinstance(version, int) and version < SCHEMA_VERSION:
        data["upgraded_from"] = version
    return data


def parse_report(raw: object, source: str = "a report") -> Report:
    """A Report from a report's JSON object of any schema; ReportError names `source` and the problem."""
    from pydantic import ValidationError

    if not isinstance(raw, Mapping):
        raise ReportError(f"{source}: not an nnlite report (a JSON {type(raw).__name__}, not an object)")
    if "model_name" not in raw:
        raise ReportError(f"{source}: not an nnlite report (no model_name)")
    version = raw.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise ReportError(f"{source}: report schema {version} is newer than this release reads ({SCHEMA_VERSION}); "
                          "upgrade nnlite-tui")
    try:
        return Report.model_validate(upgrade(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReportError(f"{source}: {where}: {first['msg']} ({exc.error_count()} problem(s))") from None
