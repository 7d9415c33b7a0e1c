"""A learning-free latency predictor built from measured per-op profiles.

An exact table: the time of every op configuration (op type, tensors and cost parameters: the graph
op's key) seen in the profiles. For a configuration never seen, a fit of time on FLOPs and bytes moved
(non-negative least squares weighted to relative error) over the table entries of its group (type,
kernel size, stride, grouped or not), else of its type, else of all entries. A model's prediction is
the sum over its ops: the time of a run that nothing interrupted. The time a run spends outside
every op (a block's `unattributed_us`: the runtime's per-run work and the whole-µs rounding of each
op's time) is left out; the profiler's own cost is not in the blocks' totals to begin with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from nnlite_tui.core.tflite_graph import Graph

MIN_FIT_POINTS = 3


@dataclass
class Fit:
    """time_us = a * flops + b * bytes_moved + c, all coefficients >= 0."""
    a: float
    b: float
    c: float
    points: int

    def __call__(self, flops: int, bytes_moved: int) -> float:
        return self.a * flops + self.b * bytes_moved + self.c


@dataclass
class OpPrediction:
    index: int
    type: str
    us: float
    source: str  # "table", "type-fit" or "global-fit"


@dataclass
class Prediction:
    total_us: float
    ops: list[OpPrediction]

    def share(self, source: str) -> float:
        """Share of the predicted op time that came from `source`."""
        op_total = sum(o.us for o in self.ops)
        return sum(o.us for o in self.ops if o.source == source) / op_total if op_total else 0.0


def _nnls_fit(rows: list[tuple[int, int, float]]) -> Fit:
    import numpy as np

    x = np.array([[f, b, 1.0] for f, b, _ in rows], dtype=float)
    y = np.array([t for _, _, t in rows], dtype=float)
    w = 1.0 / np.maximum(y, 1.0)  # relative error: a 5 µs op counts as much as a 500 µs one
    active = [0, 1, 2]
    coef = np.zeros(3)
    while active:  # drop a negative coefficient and refit until all are >= 0 (tiny active-set NNLS)
        sol, *_ = np.linalg.lstsq(x[:, active] * w[:, None], y * w, rcond=None)
        if (sol >= 0).all():
            coef[:] = 0
            coef[active] = sol
            break
        active.pop(int(np.argmin(sol)))
    return Fit(a=float(coef[0]), b=float(coef[1]), c=float(coef[2]), points=len(rows))


def fit_group(op_type: str, params: dict[str, Any]) -> str:
    """The narrower fallback group: a type's kernels differ by kernel size, stride and depthwise-ness."""
    if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "MAX_POOL_2D", "AVERAGE_POOL_2D"):
        grouped = params.get("groups", 1) > 1
        return f"{op_type}|{params.get('kernel')}|{params.get('stride')}" + ("|grouped" if grouped else "")
    return op_type


@dataclass
class OpTable:
    kernel_mode: str
    # Per op, the fastest of its profiled runs: its time when nothing else ran. A busy host preempts
    # a different op in every run, so an op's median carries other processes' time, unevenly across
    # profiles; the minimum does not.
    stat: str = "min_us"
    exact: dict[str, float] = field(default_factory=dict)  # key -> µs
    samples: dict[str, list[float]] = field(default_factory=dict)
    work: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)  # key -> (type, group, flops, bytes)
    fits: dict[str, Fit] = field(default_factory=dict)
    global_fit: Fit | None = None
    models: int = 0

    def add_block(self, block: dict[str, Any]) -> None:
        """One profiled model's ops block."""
        if block.get("error") or not block.get("ops"):
            return
        self.models += 1
        for op in block["ops"]:
            self.samples.setdefault(op["key"], []).append(float(op[self.stat]))
            self.work[op["key"]] = (op["type"], fit_group(op["type"], op.get("params") or {}), int(op["flops"]),
                                    int(op["bytes_moved"]))

    def finish(self) -> OpTable:
        self.exact = {k: median(v) for k, v in self.samples.items()}
        groups: dict[str, list[tuple[int, int, float]]] = {}
        for key, us in self.exact.items():
            op_type, group, flops, nbytes = self.work[key]
            groups.setdefault(op_type, []).append((flops, nbytes, us))
            if group != op_type:
                groups.setdefault(group, []).append((flops, nbytes, us))
        self.fits = {g: _nnls_fit(rows) for g, rows in groups.items() if len(rows) >= MIN_FIT_POINTS}
        everything = [row for g, rows in groups.items() if "|" not in g for row in rows]
        self.global_fit = _nnls_fit(everything) if len(everything) >= MIN_FIT_POINTS else None
        return self

    def predict(self, graph: Graph) -> Prediction:
        out = []
        for op in graph.ops:
            key = op.key()
            group = fit_group(op.type, op.params)
            if key in self.exact:
                us, source = self.exact[key], "table"
            elif group in self.fits:
                us, source = self.fits[group](op.flops, op.bytes_moved), "type-fit"
            elif op.type in self.fits:
                us, source = self.fits[op.type](op.flops, op.bytes_moved), "type-fit"
            elif self.global_fit is not None:
                us, source = self.global_fit(op.flops, op.bytes_moved), "global-fit"
            else:
                us, source = 0.0, "global-fit"
            out.append(OpPrediction(index=op.index, type=op.type, us=us, source=source))
        return Prediction(total_us=sum(o.us for o in out), ops=out)


class TableError(ValueError):
    """No usable per-op profile in the given run directories."""


def precision_of(report: dict[str, Any]) -> str:
    """The report's precision variant; reports written before variants existed are fp32."""
    for block in (report, report.get("benchmark") or {}, report.get("conversion") or {}, report.get("model") or {}):
        if block.get("precision"):
            return str(block["precision"])
    return "fp32"


def ops_blocks(report: dict[str, Any], kernel_mode: str | None = None) -> list[dict[str, Any]]:
    bench = report.get("benchmark") or {}
    blocks = [b for k, b in bench.items() if (k == "ops" or k.startswith("ops_")) and isinstance(b, dict)]
    return [b for b in blocks if kernel_mode is None or b.get("kernel_mode") == kernel_mode]


def load_table(run_dirs: list[Path], kernel_mode: str = "xnnpack", device: str | None = None,
               reports: list[dict[str, Any]] | None = None) -> OpTable:
    """The table from every report in RUN_DIR/reports with an ops block of `kernel_mode`."""
    table = OpTable(kernel_mode=kernel_mode)
    if reports is None:
        reports = []
        for run_dir in run_dirs:
            files = sorted((Path(run_dir) / "reports").glob("*.json"))
            if not files:
                raise TableError(f"{run_dir}: no reports (expected RUN_DIR/reports/*.json)")
            for path in files:
                try:
                    reports.append(json.loads(path.read_text()))
                except (OSError, json.JSONDecodeError) as exc:
                    raise TableError(f"{path}: unreadable report ({exc})") from exc
    for report in reports:
        if device and (report.get("device") or {}).get("serial") != device:
            continue
        for block in ops_blocks(report, kernel_mode):
            table.add_block(block)
    if not table.models:
        where = ", ".join(str(d) for d in run_dirs) or "the given reports"
        if not reports:
            raise TableError(f"{where}: no report matches")
        raise TableError(f"{where}: no report with a {kernel_mode} ops block (run with --profile-ops)")
    return table.finish()
