"""A Comparison as a text table (after `asv compare`), CSV, or a self-contained HTML page."""

from __future__ import annotations

import csv
import io
from html import escape

from nnlite_tui.core.results.compare import MARKS, Comparison, Pair
from nnlite_tui.core.results.html_assets import CSS
from nnlite_tui.core.results.rows import ResultRow

CSV_COLUMNS = ("change", "model", "device", "backend", "precision", "before_median_ms", "after_median_ms", "ratio",
               "ci_low", "ci_high", "before_samples", "after_samples", "before_error", "after_error")


def _ms(row: ResultRow) -> str:
    return f"{row.median_ns / 1e6:.4g}" if row.median_ns else "failed"


def _spread(row: ResultRow) -> str:
    """Median ± half the interquartile range, as asv prints a value with its spread."""
    if not row.samples_ns or not row.median_ns:
        return _ms(row)
    from nnlite_tui.core.stats import percentile

    s = sorted(row.samples_ns)
    half_iqr = (percentile(s, 0.75) - percentile(s, 0.25)) / 2
    return f"{row.median_ns / 1e6:.4g}±{half_iqr / 1e6:.2g}"


def _ratio(p: Pair) -> str:
    return "" if p.ratio is None else f"{p.ratio:.3f}"


def _ci(p: Pair) -> str:
    return "" if p.ci is None else f"[{p.ci[0]:.3f}, {p.ci[1]:.3f}]"


def _summary(cmp: Comparison) -> str:
    counts = cmp.counts()
    parts = [f"{n} {change}" for change, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    return (f"{len(cmp.pairs)} matched: " + (", ".join(parts) or "none")
            + f"; {len(cmp.only_before)} only in before, {len(cmp.only_after)} only in after")


def _header_lines(cmp: Comparison) -> list[str]:
    lines = [f"before: {cmp.before.run_dir}", f"after:  {cmp.after.run_dir}", cmp.method,
             "before/after: median ± half the interquartile range of the raw samples, in ms"]
    for k, (b, a) in cmp.settings_changed.items():
        lines.append(f"settings differ: {k} {b} -> {a}")
    for model, (b, a) in cmp.inputs_changed.items():
        lines.append(f"input differs: {model} {b} -> {a}")
    return lines


def to_table(cmp: Comparison) -> str:
    rows = [("", "before ms", "after ms", "ratio", "CI", "change", "model", "device", "backend", "precision")]
    for p in cmp.pairs:
        rows.append((MARKS[p.change], _spread(p.before), _spread(p.after), _ratio(p), _ci(p), p.change,
                     p.before.model, p.before.device, p.before.backend, p.before.precision))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {1, 2, 3}
    out = _header_lines(cmp) + [""]
    for r in rows:
        out.append("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                   .rstrip())
    for label, only in (("only in before", cmp.only_before), ("only in after", cmp.only_after)):
        if only:
            out.append(f"\n{label} ({len(only)}):")
            out += [f"  {r.model}  {r.device}  {r.backend}  {r.precision}  {r.status}" for r in only]
    out.append("\n" + _summary(cmp))
    out.append("marks: + slower, - faster, ! broken (failed after), * fixed, ~ uncertain (CI crosses the threshold),"
               " x failed in both, ? no raw samples")
    return "\n".join(out) + "\n"


def _csv_row(p: Pair | None, row: ResultRow, change: str) -> dict:
    before = p.before if p else (row if change == "only before" else None)
    after = p.after if p else (row if change == "only after" else None)
    med = (lambda r: "" if r is None or not r.median_ns else f"{r.median_ns / 1e6:.6g}")
    return {"change": change, "model": row.model, "device": row.device, "backend": row.backend,
            "precision": row.precision, "before_median_ms": med(before), "after_median_ms": med(after),
            "ratio": f"{p.ratio:.4f}" if p and p.ratio is not None else "",
            "ci_low": f"{p.ci[0]:.4f}" if p and p.ci else "",
            "ci_high": f"{p.ci[1]:.4f}" if p and p.ci else "",
            "before_samples": len(before.samples_ns) if before else "",
            "after_samples": len(after.samples_ns) if after else "",
            "before_error": (before.error_message or "") if before else "",
            "after_error": (after.error_message or "") if after else ""}


def to_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows([_csv_row(p, p.before, p.change) for p in cmp.pairs]
                     + [_csv_row(None, r, "only before") for r in cmp.only_before]
                     + [_csv_row(None, r, "only after") for r in cmp.only_after])
    return buf.getvalue()


def to_html(cmp: Comparison) -> str:
    colour = {"slower": "status-failed", "broken": "status-failed", "faster": "status-done", "fixed": "status-done"}
    body = "".join(
        f'<tr class="{colour.get(p.change, "")}"><td>{escape(MARKS[p.change])} {escape(p.change)}</td>'
        f'<td class="num">{escape(_spread(p.before))}</td><td class="num">{escape(_spread(p.after))}</td>'
        f'<td class="num">{_ratio(p)}</td><td class="num">{_ci(p)}</td><td>{escape(p.before.model)}</td>'
        f"<td>{escape(p.before.device)}</td><td>{escape(p.before.backend)}</td><td>{escape(p.before.precision)}</td>"
        "</tr>" for p in cmp.pairs)
    only = "".join(f"<h2>{label} ({len(rows)})</h2><ul>" + "".join(
        f"<li>{escape(r.model)} · {escape(r.device)} · {escape(r.backend)} · {escape(r.precision)}</li>"
        for r in rows) + "</ul>" for label, rows in (("Only in before", cmp.only_before),
                                                     ("Only in after", cmp.only_after)) if rows)
    head = "".join(f"<p>{escape(line)}</p>" for line in _header_lines(cmp))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>nnlite compare</title>"
            f"<style>{CSS}</style></head><body><h1>nnlite compare</h1>{head}<p><b>{escape(_summary(cmp))}</b></p>"
            '<table id="compare"><tr><th>change</th><th class="num">before ms</th><th class="num">after ms</th>'
            '<th class="num">ratio</th><th class="num">CI</th><th>model</th><th>device</th><th>backend</th>'
            f"<th>precision</th></tr>{body}</table>{only}</body></html>")
