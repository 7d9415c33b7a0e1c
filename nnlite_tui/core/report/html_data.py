"""The HTML report's data block: every unit once, as columns (one JSON array per field), plus what the
page shows beside the table (summaries, paired units, reference figures).

Columns of repeated text (family, device, status, failure cause...) are stored as indices into a
list of their distinct values; numbers keep four significant digits. The page turns the columns into
the table's rows and draws every plot from the same arrays.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypedDict

from nnlite_tui.core.convert.causes import classify
from nnlite_tui.core.ops.block import OpRow, avg_us
from nnlite_tui.core.report.html_runtimes import RuntimeData, runtime_data
from nnlite_tui.core.report.html_source import HtmlRun, Unit
from nnlite_tui.core.report.rows import DEFAULT_PRECISION, ConversionJson, ResultRow
from nnlite_tui.core.results.summary import lemur_family
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME

TOP_OPS = 8
MAX_PAIRS = 3
FLAGS = {  # code: (short label, what it means); the legend under the table
    "weak": ("weak check", "validation compared outputs on inputs that barely move them: a wrong conversion could pass"),
    "unstable": ("unstable", "the rounds disagreed beyond the tolerance: the median is less trustworthy"),
    "one-round": ("1 round", "a single round: stability was not measured"),
    "throttled": ("throttled", "the device reported thermal throttling while timing"),
    "compute": ("compute?", "the artifact's FLOPs differ from the model's (compute check not ok)"),
    "estimated": ("estimated", "some figures are estimates (per-op times spread over untimed ops, or simulated energy)"),
}


Cell = str | int | float | None  # a table cell: a number, or text as an index into the strings
Column = Sequence[Cell]  # one value per row: numbers, indices into the strings, or the model's name


class Detail(TypedDict, total=False):
    """What a row shows when opened (report.js reads these keys); only the keys that have something."""

    rounds: list[float | None]  # each round's median (ms)
    stats: list[float | None]  # mean, p99, min, max (ms)
    load: list[float | None]  # init, first inference (ms)
    conv: list[list[int | None]]  # (label, value) pairs of the conversion, as string indices
    hist: list[float | int | list[int] | None]  # low, high (ms), runs above p99, the bins' counts
    timeline: list[int | list[int]]  # bucket, runs, each bucket's median per mille of the unit's median
    ops: list[int | list[list[Cell]] | None]  # ops, the top ops' rows, why the block failed its checks
    energy: list[float | int | None]  # mJ, load mW, idle mW, source, counter, why no figure


class Pairs(TypedDict):
    """The same models on two (device, precision) groups, as row indices."""

    x: str
    y: str
    pairs: list[list[int]]


class DataBlock(TypedDict):
    """The page's data (report.js reads these keys)."""

    columns: dict[str, Column]
    details: list[Detail]
    strings: list[str]
    families: list[dict[str, Cell]]
    tasks: list[dict[str, Cell]]
    pairs: list[Pairs]
    reference: dict[str, list[list[float | None]]]
    flags: dict[str, list[str]]
    runtimes: RuntimeData | None
    default_runtime: str


def r4(value: float | None) -> float | None:
    """Four significant digits: what the page shows, at a third of the bytes."""
    return None if value is None else float(f"{value:.4g}")


def ms(ns: float | None) -> float | None:
    return None if ns is None else r4(ns / 1e6)


class Strings:
    """Distinct texts, each stored once; cells hold the index."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: object) -> int | None:
        if text is None or text == "":
            return None
        text = str(text)
        if text not in self._index:
            self._index[text] = len(self.values)
            self.values.append(text)
        return self._index[text]


def flags(unit: Unit) -> list[str]:
    row = unit.row
    out = []
    strength = str((row.conversion.get("validation") or {}).get("strength") or "")
    if strength.startswith("weak"):
        out.append("weak")
    if row.stable is False:
        out.append("unstable")
    elif row.status == "done" and row.rounds == 1:
        out.append("one-round")
    if unit.throttled:
        out.append("throttled")
    verdict = (row.conversion.get("compute_check") or {}).get("verdict")
    if verdict not in (None, "ok"):
        out.append("compute")
    simulated = row.energy is not None and row.energy.source == "simulated"
    if simulated or any(op.get("estimated_us") is not None for op in row.ops):
        out.append("estimated")
    return out


def cause(row: ResultRow) -> str:
    """Why the row is not a clean figure: the error, else the reasons the rounds disagreed."""
    if row.error_message:
        return row.error_message
    return "; ".join(row.instability) if row.stable is False else ""


def ms_per_gflop(row: ResultRow) -> float | None:
    if not row.median_ns or not row.flops:
        return None
    return r4(row.median_ns / 1e6 / (row.flops / 1e9))


def _op_detail(op: OpRow) -> str:
    """What tells two ops of one type apart: kernel size and stride, and the output shape."""
    params = op.get("params") or {}
    parts = [f"{k} {params[k]}" for k in ("kernel", "stride") if params.get(k)]
    outputs = op.get("outputs") or []
    first = outputs[0] if outputs else None
    if isinstance(first, dict) and first.get("shape"):
        parts.append("→ " + "x".join(str(d) for d in first["shape"]))
    return ", ".join(parts)


def _op_rows(row: ResultRow, s: Strings) -> list[list[Cell]]:
    timed = [(op, avg_us(op)) for op in row.ops]
    ranked = sorted(timed, key=lambda t: float(t[1]) if t[1] is not None else -1.0, reverse=True)
    total = sum(float(us) for _, us in timed if us is not None) or 1.0
    return [[op.get("index"), s(op.get("type")), s(_op_detail(op)),
             r4(float(us)) if us is not None else None,
             r4(100 * float(us) / total) if us is not None else None] for op, us in ranked[:TOP_OPS]]


def _conversion(conv: ConversionJson, s: Strings) -> list[list[int | None]]:
    pairs = [("converter", f"{conv.get('converter', '')} {conv.get('converter_version', '')}".strip()),
             ("seconds", f"{conv['seconds']:.2f}" if isinstance(conv.get("seconds"), (int, float)) else None),
             ("cached", conv.get("cached")), ("layout", conv.get("layout")),
             ("max abs diff", f"{conv['max_abs_diff']:.3g}" if isinstance(conv.get("max_abs_diff"), (int, float))
              else None),
             ("validation", (conv.get("validation") or {}).get("strength")),
             ("compute check", (conv.get("compute_check") or {}).get("verdict")),
             ("worker peak RSS", f"{conv['worker_peak_rss_mb']} MB" if conv.get("worker_peak_rss_mb") else None)]
    return [[s(k), s(v)] for k, v in pairs if v is not None and v != ""]


def detail(unit: Unit, s: Strings) -> Detail:
    """What a row shows when opened; only the keys that have something."""
    row, st = unit.row, unit.row.stats
    out = Detail()
    if len(row.round_medians_ns) > 1:
        out["rounds"] = [ms(m) for m in row.round_medians_ns]
    if st:
        out["stats"] = [ms(st.get(k)) for k in ("mean_ns", "p99_ns", "min_ns", "max_ns")]
    if row.init_ns or row.first_inference_ns:
        out["load"] = [ms(row.init_ns), ms(row.first_inference_ns)]
    if row.conversion:
        out["conv"] = _conversion(row.conversion, s)
    if unit.sketch is not None:
        k = unit.sketch
        out["hist"] = [ms(k.hist_lo_ns), ms(k.hist_hi_ns), k.above_p99, k.hist_counts]
        # per mille of the unit's median: a run-order drift view needs no more, at half the bytes
        scale = 1000 / (row.median_ns or k.timeline_ns[0] or 1)
        out["timeline"] = [k.bucket, k.count, [round(v * scale) for v in k.timeline_ns]]
    if row.ops:
        out["ops"] = [len(row.ops), _op_rows(row, s), s("; ".join(row.ops_invalid))]
    e = row.energy
    if e is not None:
        out["energy"] = [r4(e.energy_per_inference_mj), r4(e.power_load_mw), r4(e.power_idle_mw), s(e.source),
                         s(e.counter), s(None if e.valid else (e.reason or "not measured"))]
    return out


def _column(values: Sequence[Cell], s: Strings | None = None) -> Column:
    return [s(v) for v in values] if s is not None else values


def table(run: HtmlRun, s: Strings) -> tuple[dict[str, Column], list[Detail]]:
    """The table's columns and each row's details, units first, then models the store knows without a report."""
    units = sorted(run.units, key=lambda u: (u.row.model, u.row.device, u.row.backend, u.row.precision))
    reported = {u.row.model for u in units}
    pending = [(m, st, run.errors.get(m) or {}) for m, st in sorted(run.statuses.items()) if m not in reported]
    rows = [u.row for u in units]

    def col(get: Callable[[ResultRow], Cell], default: Cell = None) -> list[Cell]:
        return [get(r) for r in rows] + [default] * len(pending)

    cols: dict[str, Column] = {
        "model": [r.model for r in rows] + [m for m, _, _ in pending],
        "family": _column([lemur_family(r.model) for r in rows] + [lemur_family(m) for m, _, _ in pending], s),
        "task": _column(col(lambda r: r.task), s),
        "device": _column(col(lambda r: r.device_label), s),
        "runtime": _column(col(lambda r: r.runtime), s),
        "backend": _column(col(lambda r: r.backend), s),
        "precision": _column(col(lambda r: r.precision), s),
        "status": _column([r.status for r in rows] + [st for _, st, _ in pending], s),
        "flags": _column([" ".join(flags(u)) for u in units] + [None] * len(pending), s),
        "params": col(lambda r: r.params),
        "flops": col(lambda r: r4(r.flops)),
        "ms_gflop": col(ms_per_gflop),
        "kb": col(lambda r: r4(r.artifact_bytes / 1024) if r.artifact_bytes else None),
        "median": col(lambda r: ms(r.median_ns)),
        "low": col(lambda r: ms(r.interval_ns[0]) if r.interval_ns else None),
        "high": col(lambda r: ms(r.interval_ns[1]) if r.interval_ns else None),
        "s_low": [ms(u.session_interval_ns[0]) if u.session_interval_ns else None for u in units] + [None] * len(pending),
        "s_high": [ms(u.session_interval_ns[1]) if u.session_interval_ns else None for u in units]
        + [None] * len(pending),
        "rounds": col(lambda r: r.rounds or None),
        "p90": col(lambda r: ms(r.stats.get("p90_ns"))),
        "std": col(lambda r: ms(r.stats.get("std_ns"))),
        "runs": col(lambda r: r.stats.get("count")),
        "mj": col(lambda r: r4(r.energy.energy_per_inference_mj) if r.energy and r.energy.valid else None),
        "mw": col(lambda r: r4(r.energy.power_load_mw) if r.energy and r.energy.valid else None),
        "stage": _column([r.error_stage for r in rows] + [e.get("stage") for _, _, e in pending], s),
        "cause": _column([cause(r) for r in rows] + [e.get("message") for _, _, e in pending], s),
    }
    return cols, [detail(u, s) for u in units]


CAUSES_SHOWN = 4  # per family or task, most frequent first


def cause_code(row: ResultRow) -> str:
    """A failed row's cause as `nnlite status` names it: the conversion's own code, else classified
    from the failing stage and its message."""
    code = row.conversion.get("cause")
    if isinstance(code, str) and code:
        return code
    return classify({"ok": False, "stage": row.error_stage, "error_message": row.error_message})


def causes_text(rows: list[ResultRow]) -> str | None:
    """`export-error 3, data-dependent 1`: the failed rows' causes with counts, most first."""
    counts = Counter(cause_code(r) for r in rows if r.status == "failed")
    if not counts:
        return None
    shown = ", ".join(f"{code} {n}" for code, n in counts.most_common(CAUSES_SHOWN))
    more = len(counts) - CAUSES_SHOWN
    return shown + (f", {more} more" if more > 0 else "")


def _median(values: list[float]) -> float | None:
    return r4(statistics.median(values)) if values else None


def summary(units: list[Unit], key: Callable[[ResultRow], str | None], name: str) -> list[dict[str, Cell]]:
    """Per key (family, task) and device · precision: counts and medians of the units' figures."""
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for u in units:
        k = key(u.row)
        if k:
            groups.setdefault((k, u.row.group), []).append(u.row)
    out: list[dict[str, Cell]] = []
    for (k, group), rows in sorted(groups.items()):
        done = [r for r in rows if r.median_ns]
        out.append({name: k, "group": group, "units": len(rows), "done": len(done),
                    "failed": sum(r.status == "failed" for r in rows),
                    "causes": causes_text(rows),
                    "median": _median([r.median_ns / 1e6 for r in done if r.median_ns]),
                    "ms_gflop": _median([v for r in done if (v := ms_per_gflop(r)) is not None]),
                    "params": _median([float(r.params) for r in rows if r.params]),
                    "flops": _median([float(r.flops) for r in rows if r.flops])})
    return out


def pairs(rows: list[ResultRow], model_index: dict[tuple[str, str, str, str], int]) -> list[Pairs]:
    """The same models on two (device, precision) groups, as row indices; fp32 is the x axis when present."""
    groups: dict[tuple[str, str], dict[tuple[str, str], ResultRow]] = {}
    for r in rows:
        if r.median_ns:
            groups.setdefault((r.device_label, r.precision), {})[(r.model, r.backend)] = r
    order = sorted(groups, key=lambda g: (g[1] != DEFAULT_PRECISION, g))
    out: list[Pairs] = []
    for a, b in itertools.combinations(order, 2):
        common = sorted(set(groups[a]) & set(groups[b]))
        if common:
            out.append({"x": " · ".join(a), "y": " · ".join(b),
                        "pairs": [[model_index[groups[a][k].key], model_index[groups[b][k].key]] for k in common]})
        if len(out) >= MAX_PAIRS:
            break
    return out


def data_block(run: HtmlRun) -> DataBlock:
    s = Strings()
    cols, details = table(run, s)
    units = sorted(run.units, key=lambda u: (u.row.model, u.row.device, u.row.backend, u.row.precision))
    index = {u.row.key: i for i, u in enumerate(units)}
    return {
        "columns": cols, "details": details, "strings": s.values,
        "families": summary(run.units, lambda r: lemur_family(r.model), "family"),
        "tasks": summary(run.units, lambda r: r.task, "task"),
        "pairs": pairs([u.row for u in units], index),
        "reference": {serial: [[p[0], ms(p[1])] for p in points] for serial, points in run.reference.items()},
        "flags": {code: list(text) for code, text in FLAGS.items()},
        "runtimes": runtime_data(run.rows, run.statuses, run.errors, s),
        "default_runtime": DEFAULT_RUNTIME,  # a row of another runtime names it in its group
    }
