"""A Comparison as a text table (after `asv compare`), CSV, or a self-contained HTML page."""

from __future__ import annotations

import csv
import io

from nnlite_tui.core.report.compare import MARKS, SINGLE_ROUND, Comparison, Pair
from nnlite_tui.core.report.compare_sessions import SINGLE_SESSION
from nnlite_tui.core.report.rows import ResultRow

CSV_COLUMNS = ("change", "model", "device", "backend", "precision", "before_median_ms", "after_median_ms", "ratio",
               "ci_low", "ci_high", "basis", "rank_p", "before_rounds", "after_rounds", "before_stability",
               "after_stability", "before_samples", "after_samples", "before_error", "after_error",
               "before_energy_mj", "after_energy_mj", "energy_ratio", "energy_ci_low", "energy_ci_high",
               "energy_change", "sessions", "ci_within_low", "ci_within_high", "host_factor")


def _ms(row: ResultRow) -> str:
    return f"{row.median_ns / 1e6:.4g}" if row.median_ns else "failed"


def _stability(row: ResultRow) -> str:
    return "" if row.stable is None else ("stable" if row.stable else "unstable")


def _spread(row: ResultRow) -> str:
    """With rounds: the median across rounds, their count, and `!` when unstable; a single round: the
    median ± half the interquartile range of its samples, as asv prints a value with its spread."""
    if len(row.round_medians_ns) >= 2 and row.median_ns:
        return f"{row.median_ns / 1e6:.4g} ({row.rounds}r{'!' if row.stable is False else ''})"
    if not row.samples_ns or not row.median_ns:
        return _ms(row)
    from nnlite_tui.core.bench.stats import percentile

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
    single = sum(1 for p in cmp.pairs if p.basis == SINGLE_ROUND and p.ci is not None)
    unstable = sum(1 for p in cmp.pairs if p.before.stable is False or p.after.stable is False)
    return (f"{len(cmp.pairs)} matched: " + (", ".join(parts) or "none")
            + (f" ({single} compared as single rounds)" if single else "")
            + (f"; {unstable} with an unstable side" if unstable else "")
            + ("; single session" if cmp.hosts is None and cmp.sides is None
               and not getattr(cmp, "remeasured", None) else "")
            + f"; {len(cmp.only_before)} only in before, {len(cmp.only_after)} only in after")


def _header_lines(cmp: Comparison) -> list[str]:
    before, after = cmp.sides or (str(cmp.before.run_dir), str(cmp.after.run_dir))
    lines = [f"before: {before}", f"after:  {after}", cmp.method,
             "before/after, in ms: with rounds the median across them (Nr: N rounds, ! unstable); a single "
             "round: the median ± half the interquartile range of its raw samples"]
    lines += _session_lines(cmp)
    for k, (b, a) in cmp.settings_changed.items():
        lines.append(f"settings differ: {k} {b} -> {a}")
    for model, (b, a) in cmp.inputs_changed.items():
        lines.append(f"input differs: {model} {b} -> {a}")
    return lines


def _session_lines(cmp: Comparison) -> list[str]:
    """How far each device moved between the runs, or that the comparison cannot know it."""
    if cmp.sides is not None:
        return []
    remeasured = getattr(cmp, "remeasured", None)
    if remeasured:
        return [remeasured] + [f"missing artifact (not re-measured): {line}" for line in getattr(cmp, "missing", [])]
    if cmp.hosts is None:
        return ["single session: a run has no reference figures (an earlier release), so each interval covers its "
                "own session only and a move of the whole device between the runs is not seen"]
    lines = ["two sessions: each interval is widened by the devices' between-session spread (benchmark."
             "between_session of each report), the band by how far the device moved (its reference workloads)"]
    return lines + [f"  {move.text()}" for move in cmp.hosts.values()]


def to_table(cmp: Comparison) -> str:
    rows = [("", "before ms", "after ms", "ratio", "CI", "change", "model", "device", "backend", "precision")]
    for p in cmp.pairs:
        change = p.change + (" (single round)" if p.basis == SINGLE_ROUND and p.ci is not None else "") \
            + (" (single session)" if p.sessions == SINGLE_SESSION and cmp.sides is None and p.ci is not None else "")
        rows.append((MARKS[p.change], _spread(p.before), _spread(p.after), _ratio(p), _ci(p), change,
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
    out += energy_table(cmp)
    out.append("\n" + _summary(cmp))
    out.append("marks: + slower, - faster, ! broken (failed after), * fixed, ~ uncertain (single round: CI crosses "
               "the threshold), x failed in both, ? no raw samples; within noise: the CI or the rank test does not "
               "support a change beyond the threshold")
    return "\n".join(out) + "\n"


def energy_table(cmp: Comparison) -> list[str]:
    """Energy per inference of the pairs where either run has it, by the same statistics as latency."""
    if not cmp.energy:
        return []
    rows = [("before mJ", "after mJ", "ratio", "CI", "change", "model", "device", "backend", "precision")]
    for e in cmp.energy:
        mj = (lambda v: "-" if v is None else f"{v:.4g}")
        rows.append((mj(e.before_mj), mj(e.after_mj), "" if e.ratio is None else f"{e.ratio:.3f}",
                     "" if e.ci is None else f"[{e.ci[0]:.3f}, {e.ci[1]:.3f}]",
                     e.change + (f" ({e.why[:100]})" if e.why else ""), e.pair.before.model, e.pair.before.device,
                     e.pair.before.backend, e.pair.before.precision))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = ["", "energy per inference (mJ; a relative estimate per device): ratio = after / before; "
               f"{cmp.confidence:.0%} CI: percentile bootstrap over each window's counter updates "
               f"({cmp.resamples} resamples, seed {cmp.seed}); more/less only when the whole CI lies outside "
               f"[{1 - cmp.threshold:.2f}, {1 + cmp.threshold:.2f}]"]
    for r in rows:
        out.append("  ".join(c.rjust(w) if i < 3 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return out


def _csv_row(p: Pair | None, row: ResultRow, change: str) -> dict:
    before = p.before if p else (row if change == "only before" else None)
    after = p.after if p else (row if change == "only after" else None)
    med = (lambda r: "" if r is None or not r.median_ns else f"{r.median_ns / 1e6:.6g}")
    return {"change": change, "model": row.model, "device": row.device, "backend": row.backend,
            "precision": row.precision, "before_median_ms": med(before), "after_median_ms": med(after),
            "ratio": f"{p.ratio:.4f}" if p and p.ratio is not None else "",
            "ci_low": f"{p.ci[0]:.4f}" if p and p.ci else "",
            "ci_high": f"{p.ci[1]:.4f}" if p and p.ci else "",
            "basis": p.basis if p and p.ci else "", "rank_p": f"{p.p_value:.4f}" if p and p.p_value is not None else "",
            "before_rounds": before.rounds if before else "", "after_rounds": after.rounds if after else "",
            "before_stability": _stability(before) if before else "",
            "after_stability": _stability(after) if after else "",
            "before_samples": len(before.samples_ns) if before else "",
            "after_samples": len(after.samples_ns) if after else "",
            "before_error": (before.error_message or "") if before else "",
            "after_error": (after.error_message or "") if after else "",
            "sessions": p.sessions if p else "",
            "ci_within_low": f"{p.ci_within[0]:.4f}" if p and p.ci_within else "",
            "ci_within_high": f"{p.ci_within[1]:.4f}" if p and p.ci_within else "",
            "host_factor": f"{p.host.factor:.4f}" if p and p.host else ""}


def _energy_csv(cmp: Comparison, p: Pair) -> dict:
    e = next((e for e in cmp.energy if e.pair is p), None)
    if e is None:
        return {}
    num = (lambda v, digits=6: "" if v is None else f"{v:.{digits}g}")
    return {"before_energy_mj": num(e.before_mj), "after_energy_mj": num(e.after_mj), "energy_ratio": num(e.ratio, 5),
            "energy_ci_low": num(e.ci[0], 5) if e.ci else "", "energy_ci_high": num(e.ci[1], 5) if e.ci else "",
            "energy_change": e.change}


def to_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows([{**_csv_row(p, p.before, p.change), **_energy_csv(cmp, p)} for p in cmp.pairs]
                     + [_csv_row(None, r, "only before") for r in cmp.only_before]
                     + [_csv_row(None, r, "only after") for r in cmp.only_after])
    return buf.getvalue()

