"""A learning-free latency predictor built from measured per-op profiles.

Only measured op times go in: the rows a block marks "measured", of blocks that pass the checks
(block_check.py; older blocks read as the current schema first), never an estimate. An exact table
holds the time of every op configuration (op type, tensors and cost parameters: the graph op's key)
measured in the profiles. For a configuration never measured, a fit of time on FLOPs and bytes moved
(non-negative least squares weighted to relative error) over the table entries of its group (type,
kernel size, stride, grouped or not), else of its type, else of all entries; with none of these, no
prediction. A configuration the profiles only ever saw below resolution or fused into a neighbour
has no time of its own: its time is in the run's remainder.

The remainder is the time a profiled run spends outside its measured ops (a block's
`unattributed_us`: the runtime's per-run work, the ops below resolution, what each whole-µs reading
drops), fitted on the model's number of ops over the profiles whose total was resolved. A model's
prediction is its ops' times plus that remainder, the time of a run that nothing interrupted, with
the share that came from the exact table, from the fits, and from the remainder. A model with an op
nothing covers, or a table with too few resolved totals to fit the remainder on, has no prediction,
and says why. The profiler's own cost is not in the blocks' totals to begin with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Literal
from nnlite_tui.core.ops.block import FUSED, OpsBlockJson, measured
from nnlite_tui.core.ops.block_versions import read_block
from nnlite_tui.core.ops.fit import MIN_FIT_POINTS, Fit, nnls_fit
from nnlite_tui.core.ops.graph import Graph, ParamValue
from nnlite_tui.core.results import Report, ReportError, RunResults, parse_report

TABLE, GROUP_FIT, TYPE_FIT, GLOBAL_FIT = "table", "group-fit", "type-fit", "global-fit"
BELOW_RESOLUTION, NO_TIME, NONE = "below-resolution", "fused", "none"
FITS = (GROUP_FIT, TYPE_FIT, GLOBAL_FIT)
REMAINDER = "remainder"


@dataclass
class OpPrediction:
    index: int
    type: str
    us: float | None  # None: no time of its own (below resolution, fused) or nothing to predict it from
    source: str  # TABLE, one of FITS, BELOW_RESOLUTION, NO_TIME ("fused") or NONE
    upper_us: float | None = None  # below resolution: it took less than this per run in the profiles


@dataclass
class Prediction:
    ops: list[OpPrediction]
    remainder_us: float | None  # None: too few resolved totals to fit it on

    @property
    def missing(self) -> list[str]:
        """Op types of this model that no table entry or fit covers."""
        return sorted({o.type for o in self.ops if o.source == NONE})

    @property
    def ops_us(self) -> float | None:
        return None if self.missing else sum(o.us for o in self.ops if o.us is not None)

    @property
    def total_us(self) -> float | None:
        """The predicted run, or None: no prediction (why_none says why)."""
        ops = self.ops_us
        return None if ops is None or self.remainder_us is None else ops + self.remainder_us

    @property
    def why_none(self) -> str | None:
        if self.missing:
            return f"no profile or fit for {', '.join(self.missing)}"
        if self.remainder_us is None:
            return (f"fewer than {MIN_FIT_POINTS} profiles with a resolved total to fit the run's time outside "
                    "its ops on")
        return None

    def share(self, *sources: str) -> float | None:
        """Share of the predicted run from these sources (TABLE, the FITS, REMAINDER); None without one."""
        total = self.total_us
        if not total:
            return None
        part = sum(o.us for o in self.ops if o.source in sources and o.us is not None)
        remainder = self.remainder_us if REMAINDER in sources and self.remainder_us is not None else 0.0
        return (part + remainder) / total


def fit_group(op_type: str, params: Mapping[str, ParamValue]) -> str:
    """The narrower fallback group: a type's kernels differ by kernel size, stride and depthwise-ness."""
    if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "MAX_POOL_2D", "AVERAGE_POOL_2D"):
        groups = params.get("groups", 1)
        grouped = groups is not None and not isinstance(groups, str) and groups > 1
        return f"{op_type}|{params.get('kernel')}|{params.get('stride')}" + ("|grouped" if grouped else "")
    return op_type


@dataclass
class OpTable:
    kernel_mode: str
    # Per op, the fastest of its profiled runs: its time when nothing else ran. A busy host preempts
    # a different op in every run, so an op's median carries other processes' time, unevenly across
    # profiles; the minimum does not.
    stat: Literal["min_us", "median_us", "avg_us"] = "min_us"
    exact: dict[str, float] = field(default_factory=dict)  # key -> µs, measured configurations only
    samples: dict[str, list[float]] = field(default_factory=dict)
    untimed: dict[str, tuple[str, float | None]] = field(default_factory=dict)  # key -> (source, upper_us)
    work: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)  # key -> (type, group, flops, bytes)
    fits: dict[str, Fit] = field(default_factory=dict)
    global_fit: Fit | None = None
    remainders: list[tuple[int, float]] = field(default_factory=list)  # (ops, unattributed_us) per profile
    remainder_fit: Fit | None = None
    models: int = 0
    skipped: list[str] = field(default_factory=list)  # blocks that failed the checks, with the first reason

    def add_block(self, given: object, name: str = "") -> bool:
        """One profiled model's ops block; False when it has nothing measured to give (error, invalid, or
        ops that are not graph ops, as ExecuTorch's ETDump rows: no work to learn from)."""
        block = read_block(given)
        if block is None or block.get("error") or not block.get("ops") or block.get("graph_ops_mapped") is False:
            return False
        if not block.get("valid"):
            self.skipped.append(f"{name or 'a block'}: {(block.get('invalid_reasons') or ['invalid'])[0]}")
            return False
        self.models += 1
        for op in block.get("ops", []):
            key = op["key"]
            self.work[key] = (op["type"], fit_group(op["type"], op.get("params") or {}), int(op["flops"]),
                              int(op["bytes_moved"]))
            if measured(op) and (us := op.get(self.stat)) is not None:
                self.samples.setdefault(key, []).append(float(us))
            elif key not in self.untimed or self.untimed[key][0] == NO_TIME:
                below = op.get("timing") != FUSED
                self.untimed[key] = (BELOW_RESOLUTION if below else NO_TIME, op.get("upper_us"))
        if (unattributed := block.get("unattributed_us")) is not None:
            self.remainders.append((len(block["ops"]), float(unattributed)))
        return True

    def finish(self) -> OpTable:
        self.exact = {k: median(v) for k, v in self.samples.items()}
        groups: dict[str, list[tuple[float, float, float]]] = {}
        for key, us in self.exact.items():
            op_type, group, flops, nbytes = self.work[key]
            groups.setdefault(op_type, []).append((flops, nbytes, us))
            if group != op_type:
                groups.setdefault(group, []).append((flops, nbytes, us))
        self.fits = {g: f for g, rows in groups.items() if (f := nnls_fit(rows)) is not None}
        self.global_fit = nnls_fit([row for g, rows in groups.items() if "|" not in g for row in rows])
        self.remainder_fit = nnls_fit(self.remainders)
        return self

    def _predict_op(self, key: str, op_type: str, group: str, flops: int, nbytes: int) -> tuple[float | None, str]:
        if key in self.exact:
            return self.exact[key], TABLE
        if key in self.untimed:
            return None, self.untimed[key][0]
        for name, source in ((group, GROUP_FIT), (op_type, TYPE_FIT)):
            if name in self.fits:
                return self.fits[name](flops, nbytes), source
        if self.global_fit is not None:
            return self.global_fit(flops, nbytes), GLOBAL_FIT
        return None, NONE

    def predict(self, graph: Graph) -> Prediction:
        out = []
        for op in graph.ops:
            key = op.key()
            us, source = self._predict_op(key, op.type, fit_group(op.type, op.params), op.flops, op.bytes_moved)
            upper = self.untimed[key][1] if source == BELOW_RESOLUTION else None
            out.append(OpPrediction(index=op.index, type=op.type, us=us, source=source, upper_us=upper))
        remainder = self.remainder_fit(len(graph.ops)) if self.remainder_fit is not None else None
        return Prediction(ops=out, remainder_us=remainder)


class TableError(ValueError):
    """No usable per-op profile in the given run directories."""


def ops_blocks(report: Report | Mapping[str, object], kernel_mode: str | None = None) -> list[OpsBlockJson]:
    """The report's ops blocks in the current schema, checked (see block_versions.read_block)."""
    if not isinstance(report, Report):
        report = parse_report(report)
    blocks = [read_block(b.model_dump(mode="json", exclude_unset=True)) for b in report.benchmark.ops_blocks().values()]
    return [b for b in blocks if b is not None and (kernel_mode is None or b.get("kernel_mode") == kernel_mode)]


def load_table(run_dirs: list[Path], kernel_mode: str = "xnnpack", device: str | None = None,
               reports: list[Report] | None = None) -> OpTable:
    """The table from every report of the runs (or the given reports) with a valid ops block of `kernel_mode`."""
    table = OpTable(kernel_mode=kernel_mode)
    if reports is None:
        reports = []
        for run_dir in run_dirs:
            try:
                results = RunResults(run_dir, strict=True)
                if not len(results):
                    raise TableError(f"{run_dir}: no reports (expected RUN_DIR/reports/*.json)")
                reports.extend(results)
            except ReportError as exc:
                raise TableError(str(exc)) from exc
    for report in reports:
        if device and report.device.serial != device:
            continue
        for block in ops_blocks(report, kernel_mode):
            table.add_block(block, report.model_name)
    if not table.models:
        where = ", ".join(str(d) for d in run_dirs) or "the given reports"
        if not reports:
            raise TableError(f"{where}: no report matches")
        if table.skipped:
            raise TableError(f"{where}: every {kernel_mode} ops block failed its checks ({'; '.join(table.skipped)})")
        raise TableError(f"{where}: no report with a {kernel_mode} ops block (run with --profile-ops)")
    return table.finish()
