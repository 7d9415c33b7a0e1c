"""The model table of the HTML report: one <tbody> per report, a summary row and its expandable details."""

from __future__ import annotations

from html import escape
from typing import Any

from nnlite_tui.core.ops.block import measured
from nnlite_tui.core.report import svg
from nnlite_tui.core.report.rows import ResultRow

COLUMNS = (("model", ""), ("family", ""), ("task", ""), ("device", ""), ("backend", ""), ("precision", ""),
           ("status", ""), ("params", "num"), ("size KB", "num"), ("median ms", "num"), ("95% interval", "num"),
           ("rounds", "num"), ("p90 ms", "num"), ("std ms", "num"), ("runs", "num"), ("mJ / inference", "num"),
           ("load mW", "num"), ("stage", ""), ("error", ""))
TOP_OPS = 12


def ms(ns: float | None, digits: int = 4) -> str:
    return "" if ns is None else f"{ns / 1e6:.{digits}g}"


def _cell(text: Any, value: Any = None, cls: str = "") -> str:
    attr = f' data-v="{escape(str(value))}"' if value is not None else ""
    klass = f' class="{cls}"' if cls else ""
    return f"<td{klass}{attr}>{escape('' if text is None else str(text))}</td>"


def _num(value: float | None, text: str) -> str:
    return _cell(text, "" if value is None else f"{value:.6g}", "num")


def header() -> str:
    cells = "".join(f'<th class="{cls}">{escape(name)}</th>' for name, cls in COLUMNS)
    return f"<thead><tr>{cells}</tr></thead>"


def _interval(row: ResultRow) -> str:
    if row.interval_ns is None:
        return ""
    return f"{ms(row.interval_ns[0])}–{ms(row.interval_ns[1])}"


def _rounds_cell(row: ResultRow) -> str:
    if not row.rounds:
        return _cell("")
    text = f"{row.rounds}" + (" unstable" if row.stable is False else "")
    return _cell(text, row.rounds, "num unstable" if row.stable is False else "num")


def summary_cells(row: ResultRow) -> str:
    st = row.stats
    error = (row.error_message or "") or ("; ".join(row.instability) if row.stable is False else "")
    return "".join([
        _cell(row.model), _cell(row.family), _cell(row.task or ""), _cell(row.device_label), _cell(row.backend),
        _cell(row.precision), _cell(row.status, cls=f"status-{row.status}"),
        _num(row.params, f"{row.params:,}" if row.params else ""),
        _num(row.artifact_bytes, f"{row.artifact_bytes / 1024:,.1f}" if row.artifact_bytes else ""),
        _num(row.median_ns, ms(row.median_ns)),
        _cell(_interval(row), "" if row.interval_ns is None else f"{row.interval_ns[0]:.6g}", "num"),
        _rounds_cell(row), _num(st.get("p90_ns"), ms(st.get("p90_ns"))),
        _num(st.get("std_ns"), ms(st.get("std_ns"))), _num(st.get("count"), str(st.get("count") or "")),
        *_energy_cells(row),
        _cell(row.error_stage or ""), _cell(error[:120] + ("…" if len(error) > 120 else "")),
    ])


def _energy_cells(row: ResultRow) -> list[str]:
    """Energy per inference and mean power under load beside the latency; empty (the details say why)
    when there is no valid figure."""
    e = row.energy
    if e is None or not e.valid or e.energy_per_inference_mj is None:
        return [_cell(""), _cell("")]
    return [_num(e.energy_per_inference_mj, f"{e.energy_per_inference_mj:.4g}"),
            _num(e.power_load_mw, f"{e.power_load_mw:.0f}" if e.power_load_mw is not None else "")]


def _energy_figures(row: ResultRow) -> str:
    e = row.energy
    if e is None:
        return ""
    if not e.valid:
        return _kv("Energy", [("figure", "none"), ("why", e.reason or "not measured"), ("source", e.source)])
    return _kv("Energy", [("per inference", f"{e.energy_per_inference_mj:.4g} mJ"),
                          ("mean power, load", f"{e.power_load_mw:.1f} mW"),
                          ("mean power, idle", f"{e.power_idle_mw:.1f} mW"),
                          ("load - idle", f"{e.power_delta_mw:.1f} mW"), ("counter", e.counter),
                          ("windows", f"{e.window_seconds:g} s each" if e.window_seconds else None),
                          ("source", e.source),
                          ("meaning", "a consistent relative estimate on this device, not an absolute meter")])


def _kv(title: str, pairs: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in pairs
                   if v is not None and v != "")
    return f'<div><b>{escape(title)}</b><table class="kv">{body}</table></div>' if body else ""


def _rounds_figures(row: ResultRow) -> str:
    if len(row.round_medians_ns) < 2:
        return ""
    pairs: list[tuple[str, Any]] = [("median across rounds", f"{ms(row.median_ns)} ms"),
                                    ("95% interval", f"{_interval(row)} ms" if row.interval_ns else None),
                                    ("verdict", "stable" if row.stable else "unstable")]
    pairs += [(f"round {i}", f"{ms(m)} ms") for i, m in enumerate(row.round_medians_ns, start=1)]
    pairs += [("why unstable", reason) for reason in row.instability]
    return _kv("Rounds", pairs)


def _bench_figures(row: ResultRow) -> str:
    st = row.stats
    pairs = [(name, f"{ms(st.get(key))} ms") for name, key in (
        ("median", "median_ns"), ("mean", "mean_ns"), ("p90", "p90_ns"), ("p99", "p99_ns"), ("std", "std_ns"),
        ("min", "min_ns"), ("max", "max_ns")) if st.get(key) is not None]
    pairs.insert(0, ("timed runs (all rounds)" if len(row.round_medians_ns) > 1 else "timed runs", st.get("count")))
    pairs += [("init", f"{ms(row.init_ns)} ms" if row.init_ns else None),
              ("first inference", f"{ms(row.first_inference_ns)} ms" if row.first_inference_ns else None)]
    return _kv("Benchmark", pairs)


def _conversion_figures(conv: dict[str, Any]) -> str:
    validation = conv.get("validation") or {}
    timings = conv.get("timings") or {}
    pairs = [
        ("converter", f"{conv.get('converter', '')} {conv.get('converter_version', '')}".strip()),
        ("seconds", f"{conv['seconds']:.2f}" if isinstance(conv.get("seconds"), (int, float)) else None),
        ("cached", conv.get("cached")),
        ("layout", conv.get("layout")),
        ("input", f"{conv.get('artifact_input_shape')} {conv.get('artifact_input_dtype', '')}"
         if conv.get("artifact_input_shape") else None),
        ("max abs diff", f"{conv['max_abs_diff']:.3g}" if isinstance(conv.get("max_abs_diff"), (int, float))
         else None),
        ("validation", validation.get("strength")),
        ("artifact bytes", f"{conv['artifact_bytes']:,}" if conv.get("artifact_bytes") else None),
        ("worker peak RSS", f"{conv['worker_peak_rss_mb']} MB" if conv.get("worker_peak_rss_mb") else None),
    ]
    pairs += [(k.removesuffix("_s"), f"{v:.3f} s") for k, v in timings.items() if isinstance(v, (int, float))]
    return _kv("Conversion", pairs)


def _op_detail(op: dict[str, Any]) -> str:
    """What tells two ops of one type apart: kernel size and stride, or the output shape."""
    params = op.get("params") or {}
    parts = [f"{k} {params[k]}" for k in ("kernel", "stride") if params.get(k)]
    outputs = op.get("outputs") or []
    if outputs and isinstance(outputs[0], dict) and outputs[0].get("shape"):
        parts.append("→ " + "x".join(str(d) for d in outputs[0]["shape"]))
    return ", ".join(parts)


def _op_time(op: dict[str, Any]) -> str:
    if measured(op):
        return f"{float(op['avg_us']):.1f}"
    if op.get("timing") == "below_resolution":  # read 0 µs in every run
        return f"&lt; {float(op['upper_us']):g}" if op.get("upper_us") is not None else "&lt; resolution"
    return "fused"  # no event of its own: its work is in a neighbour's time


def _ops_table(ops: list[dict[str, Any]], invalid: list[str] | None = None) -> str:
    if not ops:
        return ""
    ranked = sorted(ops, key=lambda o: float(o["avg_us"]) if measured(o) else -1.0, reverse=True)
    total = sum(float(o["avg_us"]) for o in ops if measured(o)) or 1.0
    body = ""
    for op in ranked[:TOP_OPS]:
        share = f"{100 * float(op['avg_us']) / total:.1f}%" if measured(op) else ""
        kernels = ", ".join(sorted(set(op.get("kernels") or [])))
        body += ("<tr>" + _cell(op.get("index", "")) + _cell(op.get("type")) + _cell(_op_detail(op))
                 + _cell(kernels) + f'<td class="num">{_op_time(op)}</td>' + _cell(share, cls="num") + "</tr>")
    by_type: dict[str, float] = {}
    for op in ops:
        if measured(op):
            by_type[str(op.get("type"))] = by_type.get(str(op.get("type")), 0.0) + float(op["avg_us"])
    types = ", ".join(f"{t} {100 * v / total:.0f}%" for t, v in sorted(by_type.items(), key=lambda kv: -kv[1])[:5])
    untimed = sum(1 for op in ops if not measured(op))
    warning = (f'<div class="err"><b>per-op profile invalid</b>: {escape("; ".join(invalid))}</div>'
               if invalid else "")
    return (f'<div class="ops">{warning}<b>Top ops</b> <span class="muted">({len(ops)} profiled, {untimed} without '
            f'a measured time; by type: {escape(types)})</span><table><tr><th>#</th><th>op</th>'
            '<th>shape</th><th>kernel</th><th class="num">avg µs</th>'
            f'<th class="num">share</th></tr>{body}</table></div>')


def _sample_plots(row: ResultRow) -> str:
    import numpy as np

    if not row.samples_ns:
        return ""
    samples_ms = np.asarray(row.samples_ns, dtype=np.float64) / 1e6
    cut = float(np.percentile(samples_ms, 99))  # the same type-7 percentile as core.stats
    shown = samples_ms[samples_ms <= cut]
    hidden = len(samples_ms) - len(shown)
    title = f"latency histogram ({hidden} above p99 not drawn)" if hidden else "latency histogram"
    return (svg.histogram("histogram", title, shown, "ms")
            + svg.timeline("timeline", f"raw samples in run order (n={len(samples_ms)})", samples_ms, "ms"))


def detail_cells(row: ResultRow) -> str:
    parts = []
    if row.error_message:
        parts.append(f'<div class="err"><b>{escape(row.error_stage or "failed")}</b>: {escape(row.error_message)}'
                     "</div>")
    parts += [_rounds_figures(row), _bench_figures(row) if row.stats else "", _energy_figures(row),
              _conversion_figures(row.conversion), _sample_plots(row), _ops_table(row.ops, row.ops_invalid)]
    if row.source_file:
        parts.append(f'<div class="muted">reports/{escape(row.source_file)}</div>')
    # Inside a <template> the details stay inert until a row is opened: a thousand-model page then
    # lays out and filters its table without carrying thousands of hidden plots in the document.
    return (f'<td colspan="{len(COLUMNS)}"><template><div class="detail-grid">{"".join(p for p in parts if p)}'
            "</div></template></td>")


def model_body(row: ResultRow) -> str:
    return (f'<tbody data-status="{escape(row.status)}"><tr class="row">{summary_cells(row)}</tr>'
            f'<tr class="detail" hidden>{detail_cells(row)}</tr></tbody>')


def pending_body(model: str, status: str, error: dict[str, Any] | None) -> str:
    """A model the store knows but that has no report (queued, running, or failed before one was written)."""
    error = error or {}
    row = ResultRow(model=model, family="", task=None, device="", device_label="", backend="", precision="",
                    status=status, error_stage=error.get("stage"), error_message=error.get("message"))
    return (f'<tbody data-status="{escape(status)}"><tr class="row">{summary_cells(row)}</tr>'
            f'<tr class="detail" hidden>{detail_cells(row)}</tr></tbody>')
