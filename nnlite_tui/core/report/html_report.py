"""`nnlite report --format html`: one self-contained HTML page for a run, readable offline.

Everything is inline: CSS, a few lines of JavaScript (sort, filter, expand) and every plot as SVG
drawn here in Python. Nothing is fetched when the page is opened.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from html import escape
from typing import Any

from nnlite_tui import __version__
from nnlite_tui.core.report import svg
from nnlite_tui.core.report.html_assets import CSS, JS
from nnlite_tui.core.report.html_models import header, model_body, pending_body
from nnlite_tui.core.report.html_runtimes import runtime_section
from nnlite_tui.core.report.rows import DEFAULT_PRECISION, ResultRow, RunResults

TOP_ERRORS = 10
MAX_PAIRS = 3


def _colour_key(rows: list[ResultRow]):
    """Colour by task when the run mixes tasks, otherwise by model family."""
    tasks = {r.task for r in rows if r.task}
    if len(tasks) > 1:
        return "task", lambda r: r.task or "unknown"
    return "family", lambda r: r.family


def _tip(row: ResultRow, extra: str) -> str:
    return f"{row.model} on {row.group}: median {row.median_ns / 1e6:.4g} ms, {extra}"


def latency_plots(rows: list[ResultRow]) -> list[str]:
    done = [r for r in rows if r.median_ns]
    by, key = _colour_key(done)
    plots = [
        svg.scatter("latency-vs-params", f"median latency vs parameters (colour: {by})",
                    [(r.params, r.median_ns / 1e6, key(r), _tip(r, f"{r.params:,} params"))
                     for r in done if r.params], "parameters", "median latency (ms)"),
        svg.scatter("latency-vs-size", f"median latency vs artifact size (colour: {by})",
                    [(r.artifact_bytes, r.median_ns / 1e6, key(r), _tip(r, f"{r.artifact_bytes:,} bytes"))
                     for r in done if r.artifact_bytes], "artifact bytes", "median latency (ms)"),
    ]
    with_flops = [r for r in done if r.flops]
    if with_flops:
        plots.append(svg.scatter("latency-vs-flops", f"median latency vs FLOPs (colour: {by})",
                                 [(r.flops, r.median_ns / 1e6, key(r), _tip(r, f"{r.flops:.3g} FLOPs"))
                                  for r in with_flops], "FLOPs", "median latency (ms)"))
    return plots


def distribution_plots(rows: list[ResultRow]) -> list[str]:
    done = [r for r in rows if r.median_ns]
    by_group: dict[str, list[float]] = {}
    for r in done:
        by_group.setdefault(r.group, []).append(r.median_ns / 1e6)
    plots = [svg.box_plot("latency-distribution", "median latency per device · precision", by_group,
                          "median latency (ms)")]
    plots += paired_plots(done)
    return plots


def _pair_title(a: tuple[str, str], b: tuple[str, str]) -> tuple[str, str, str]:
    """Title and axis names of a paired plot, naming only what differs between the two groups."""
    if a[0] == b[0]:
        return f"{a[1]} vs {b[1]} on {a[0][:40]}", a[1], b[1]
    if a[1] == b[1]:
        return f"{a[0][:28]} vs {b[0][:28]} ({a[1]})", a[0][:40], b[0][:40]
    return f"{a[0][:20]} {a[1]} vs {b[0][:20]} {b[1]}", f"{a[0][:30]} {a[1]}", f"{b[0][:30]} {b[1]}"


def paired_plots(done: list[ResultRow]) -> list[str]:
    """The same models on two (device, precision) groups: one dot per model, y = x means equal."""
    groups: dict[tuple[str, str], dict[tuple[str, str], ResultRow]] = {}
    for r in done:
        groups.setdefault((r.device_label, r.precision), {})[(r.model, r.backend)] = r
    # fp32 first, so that it is the x axis (the baseline) of every pair it is in
    order = sorted(groups, key=lambda g: (g[1] != DEFAULT_PRECISION, g))
    plots = []
    for a, b in itertools.combinations(order, 2):
        common = sorted(set(groups[a]) & set(groups[b]))
        if not common:
            continue
        _, key = _colour_key([groups[a][k] for k in common])
        points = [(groups[a][k].median_ns / 1e6, groups[b][k].median_ns / 1e6, key(groups[a][k]),
                   f"{k[0]}: {groups[a][k].median_ns / 1e6:.4g} ms vs {groups[b][k].median_ns / 1e6:.4g} ms")
                  for k in common]
        title, x_name, y_name = _pair_title(a, b)
        plots.append(svg.scatter("paired", f"same {len(common)} models: {title}", points,
                                 f"{x_name} median (ms)", f"{y_name} median (ms)", diagonal=True))
        if len(plots) >= MAX_PAIRS:
            break
    return plots


def energy_section(run: RunResults) -> str:
    """Energy per inference against median latency, one plot per device (the figure is relative to its
    device: never compared across devices); nothing when no report asked for energy."""
    asked = [r for r in run.rows if r.energy is not None]
    if not asked:
        return ""
    measured = [r for r in asked if r.energy.valid and r.energy.energy_per_inference_mj is not None and r.median_ns]
    by_device: dict[str, list[ResultRow]] = {}
    for r in measured:
        by_device.setdefault(r.device_label, []).append(r)
    plots = []
    for device, rows in sorted(by_device.items()):
        _, key = _colour_key(rows)
        simulated = " · simulated" if any(r.energy.source == "simulated" for r in rows) else ""
        plots.append(svg.scatter("energy-vs-latency", f"energy vs latency on {device[:26]}{simulated}",
                                 [(r.median_ns / 1e6, r.energy.energy_per_inference_mj, key(r),
                                   f"{r.model} on {r.group}: {r.energy.energy_per_inference_mj:.4g} mJ, "
                                   f"{r.energy.power_load_mw:.0f} mW, median {r.median_ns / 1e6:.4g} ms")
                                  for r in rows], "median latency (ms)", "energy per inference (mJ)"))
    why = Counter((r.energy.reason or "not measured").split(";")[0][:160] for r in asked if r not in measured)
    missing = "".join(f'<tr><td class="num">{n}</td><td>{escape(reason)}</td></tr>' for reason, n in why.most_common())
    missing_html = (f'<div><b>Reports without an energy figure ({sum(why.values())})</b><table id="energy-missing">'
                    f'<tr><th class="num">reports</th><th>why</th></tr>{missing}</table></div>') if why else ""
    return ("<h2>Energy</h2><p>Energy per inference from the device's own counters (battery current or RAPL): "
            "a consistent relative estimate on one device, not an absolute measurement; compare models on the "
            f'same device only.</p><div class="plots" id="energy-plots">{"".join(plots)}{missing_html}</div>')


def failure_section(run: RunResults) -> str:
    failures = [(r.error_stage or "unknown", r.error_message or "") for r in run.rows if r.status == "failed"]
    reported = {r.model for r in run.rows}
    failures += [((e.get("stage") or "unknown"), e.get("message") or "") for m, e in run.errors.items()
                 if m not in reported and run.statuses.get(m) == "failed"]
    if not failures:
        return "<h2>Failures</h2><p>No model failed.</p>"
    stages = Counter(stage for stage, _ in failures).most_common()
    messages = Counter((stage, (msg.splitlines() or [""])[0][:200]) for stage, msg in failures).most_common(TOP_ERRORS)
    rows = "".join(f'<tr><td class="num">{n}</td><td>{escape(stage)}</td><td class="err">{escape(msg)}</td></tr>'
                   for (stage, msg), n in messages)
    return (f"<h2>Failures ({len(failures)})</h2><div class=\"plots\">"
            + svg.bars("failures-by-stage", "failures by stage", stages, "models")
            + f'<div><b>Top error messages</b><table id="top-errors"><tr><th class="num">models</th><th>stage</th>'
              f"<th>message</th></tr>{rows}</table></div></div>")


def reference_series(run: RunResults) -> dict[str, list[tuple[float, float]]]:
    """Each device's reference-model figures (wall time, median ns) as its units' rounds recorded them."""
    series: dict[str, set[tuple[float, float]]] = {}
    for report in run.reports:
        serial = str((report.get("device") or {}).get("serial"))
        for rnd in (report.get("benchmark") or {}).get("rounds") or []:
            ref = rnd.get("reference") or {}
            if ref.get("at") is not None and ref.get("median_ns"):
                series.setdefault(serial, set()).add((float(ref["at"]), float(ref["median_ns"])))
    return {serial: sorted(points) for serial, points in sorted(series.items())}


def drift_section(run: RunResults) -> str:
    """The reference model over the run, per device: how much the device itself drifted."""
    plots = []
    for serial, points in reference_series(run).items():
        values = [m / 1e6 for _, m in points]
        span = (points[-1][0] - points[0][0]) / 60
        plots.append(svg.timeline(f"reference-{serial}", f"reference model on {serial}: {len(values)} figures over "
                                  f"{span:.1f} min, max/min {max(values) / min(values):.3f}", values, "ms"))
    if not plots:
        return ""
    return ('<h2>Drift</h2><p class="muted">The reference model (the same file on every device) timed between '
            "units; medians are not rescaled by it.</p>"
            f'<div class="plots" id="drift">{"".join(plots)}</div>')


def _devices(run: RunResults) -> str:
    seen: dict[str, dict[str, Any]] = {}
    for report in run.reports:
        dev = report.get("device") or {}
        seen.setdefault(str(dev.get("serial")), dev)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(dev.get(k) if dev.get(k) is not None else ''))}</td>"
                         for k in ("serial", "kind", "model", "manufacturer", "os_version", "soc", "abi", "emulator"))
        + "</tr>" for dev in seen.values())
    return ('<table id="devices"><tr><th>serial</th><th>kind</th><th>model</th><th>manufacturer</th><th>OS</th>'
            f"<th>SoC</th><th>ABI</th><th>emulator</th></tr>{body}</table>")


def _settings(run: RunResults) -> str:
    settings: dict[str, set[str]] = {}
    for report in run.reports:
        bench = report.get("benchmark") or {}
        items = dict(bench.get("settings") or {})
        items["isolation"] = (report.get("isolation") or {}).get("method")
        items["huge pages"] = (bench.get("huge_pages") or {}).get("glibc_tunables")
        items["nnlite"] = (report.get("tool") or {}).get("nnlite")
        items["converter"] = (report.get("tool") or {}).get("litert-torch")
        for k, v in items.items():
            if v is not None:
                settings.setdefault(k, set()).add(str(v))
    body = " ".join(f'<span class="setting"><span class="muted">{escape(k)}</span> {escape(", ".join(sorted(v)))}'
                   "</span>" for k, v in settings.items())
    return f'<div id="settings">{body}</div>'


def summary_section(run: RunResults) -> str:
    counts = run.status_counts()
    cards = [("models", len(run.statuses)), ("reports", len(run.rows))]
    cards += sorted(counts.items())
    stage_counts = Counter(r.error_stage or "unknown" for r in run.rows if r.status == "failed")
    cards_html = "".join(f'<div class="card status-{escape(k)}"><b>{v}</b>{escape(k)}</div>' for k, v in cards)
    stages = ", ".join(f"{escape(s)} {n}" for s, n in stage_counts.most_common()) or "none"
    return (f'<h2>Run summary</h2><div class="cards" id="counts">{cards_html}</div>'
            f"<p>Failures by stage: {stages}</p>"
            f'<div class="block"><b>Settings</b> {_settings(run)}</div><div class="block"><b>Devices</b>'
            f"{_devices(run)}</div>")


def model_table(run: RunResults) -> str:
    bodies = [model_body(r) for r in sorted(run.rows, key=lambda r: (r.model, r.device, r.backend, r.precision))]
    reported = {r.model for r in run.rows}
    bodies += [pending_body(m, s, run.errors.get(m)) for m, s in sorted(run.statuses.items()) if m not in reported]
    statuses = sorted({r.status for r in run.rows} | set(run.statuses.values()))
    options = "".join(f'<option value="{escape(s)}">{escape(s)}</option>' for s in statuses)
    return ('<h2>Models</h2><div id="controls"><input id="filter-text" type="search" '
            'placeholder="filter: words in any column"><select id="filter-status"><option value="">any status'
            f'</option>{options}</select><span><span id="shown">{len(bodies)}</span> of {len(bodies)} shown; '
            "click a header to sort, a row for its details</span></div>"
            f'<table id="models">{header()}{"".join(bodies)}</table>')


def build_html(run: RunResults, title: str | None = None) -> str:
    title = title or f"nnlite run {run.run_dir.name}"
    generated = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    plots = latency_plots(run.rows) + distribution_plots(run.rows)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f'<h1>{escape(title)}</h1><div class="muted">{escape(str(run.run_dir))} · generated {generated} '
        f"by nnlite {escape(__version__)} from the run's reports and state</div>",
        summary_section(run),
        f'<h2>Latency</h2><div class="plots" id="plots">{"".join(plots)}</div>',
        drift_section(run),
        energy_section(run),
        runtime_section(run),
        failure_section(run),
        model_table(run),
        f"<script>{JS}</script></body></html>",
    ])
