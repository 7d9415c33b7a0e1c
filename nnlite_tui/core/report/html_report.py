"""`nnlite report --format html`: one self-contained HTML page for a run, readable offline.

The page carries its data once, as one JSON block of columns (html_data.py), and two maintained
libraries, inlined so that nothing is fetched when it is opened:

- Tabulator (MIT) for the tables: a virtual DOM (only the visible rows exist), sorting, filtering
  and column hiding on 10,000+ rows in a few milliseconds, and frozen columns;
- Apache ECharts (Apache-2.0, its "common" build) for the plots: canvas drawing with a large-data
  mode, log axes, legends that hide a series, and tooltips that name the unit under the cursor.

Their files and licences are in assets/vendor/. Python prepares the data; assets/report.js turns
it into the tables and plots, and draws a plot only when it scrolls into view.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from html import escape
from importlib.resources import files

import orjson

from nnlite_tui import __version__
from nnlite_tui.core.report.html_data import data_block
from nnlite_tui.core.report.html_runtimes import runtime_section
from nnlite_tui.core.report.html_source import HtmlRun, from_results
from nnlite_tui.core.report.rows import RunResults

TOP_ERRORS = 10
DEVICE_FIELDS = ("serial", "kind", "model", "manufacturer", "os_version", "soc", "abi", "emulator")
VENDOR = {"tabulator": ("tabulator-6.5.3", "tabulator.min.js", "tabulator.min.css", "Tabulator 6.5.3", "MIT"),
          "echarts": ("echarts-6.1.0", "echarts.common.min.js", None, "Apache ECharts 6.1.0", "Apache-2.0")}


def asset(*parts: str) -> str:
    """A file under assets/, as text; a source-map comment is dropped (it would name a file not shipped)."""
    text = files("nnlite_tui.core.report").joinpath("assets", *parts).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if "sourceMappingURL=" not in line)


def script(code: str) -> str:
    if "</script" in code.lower():  # it would end the element early; none of the inlined files has one
        raise ValueError("inline script contains </script")
    return f"<script>{code}</script>"


def data_script(data: Mapping[str, object]) -> str:
    # "<" only occurs inside JSON strings, where \u003c means the same: a model name or message holding
    # "</script>" or "<!--" cannot end or bend the element
    text = orjson.dumps(data).decode().replace("<", "\\u003c")
    return f'<script type="application/json" id="nnlite-data">{text}</script>'


def vendor_head() -> str:
    parts = []
    for folder, js, css, _, _ in VENDOR.values():
        if css:
            parts.append(f"<style>{asset('vendor', folder, css)}</style>")
        parts.append(script(asset("vendor", folder, js)))
    return "".join(parts)


def credits() -> str:
    names = ", ".join(f"{name} ({licence})" for _, _, _, name, licence in VENDOR.values())
    return f'<footer class="muted">Tables and plots drawn with {escape(names)}, inlined in this file.</footer>'


def _table(table_id: str, head: list[str], rows: list[list[str]]) -> str:
    heads = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table id="{table_id}"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>'


def summary_section(run: HtmlRun) -> str:
    counts = Counter(run.statuses.values())
    cards = [("models", len(run.statuses)), ("reports", len(run.units)), *sorted(counts.items())]
    cards_html = "".join(f'<div class="card status-{escape(k)}"><b>{v:,}</b>{escape(k)}</div>' for k, v in cards)
    settings = [[k, ", ".join(sorted(v))] for k, v in sorted(run.settings.items())]
    devices = [[str(dev.get(k)) if dev.get(k) is not None else "" for k in DEVICE_FIELDS]
               for dev in run.devices.values()]
    return (f'<h2>Run summary</h2><div class="cards" id="counts">{cards_html}</div>'
            '<div class="two"><div><h3>Settings</h3>'
            f'{_table("settings", ["setting", "value(s) in this run"], settings)}</div>'
            f'<div><h3>Devices</h3><div class="scroll-x">{_table("devices", list(DEVICE_FIELDS), devices)}'
            "</div></div></div>")


def failure_section(run: HtmlRun) -> str:
    failures = [(u.row.error_stage or "unknown", u.row.error_message or "") for u in run.units
                if u.row.status == "failed"]
    reported = {u.row.model for u in run.units}
    failures += [(e.get("stage") or "unknown", e.get("message") or "") for m, e in run.errors.items()
                 if m not in reported and run.statuses.get(m) == "failed"]
    if not failures:
        return '<h2>Failures</h2><p id="no-failures">No model failed.</p>'
    stages = Counter(stage for stage, _ in failures).most_common()
    most = stages[0][1]
    stage_rows = "".join(f'<tr><td>{escape(stage)}</td><td class="num">{n:,}</td><td class="barcell">'
                         f'<span class="bar" style="width:{100 * n / most:.0f}%"></span></td></tr>'
                         for stage, n in stages)
    messages = Counter((stage, (msg.splitlines() or [""])[0][:300]) for stage, msg in failures)
    top = "".join(f'<tr><td class="num">{n:,}</td><td>{escape(stage)}</td><td class="err">{escape(msg)}</td></tr>'
                  for (stage, msg), n in messages.most_common(TOP_ERRORS))
    return (f'<h2>Failures ({len(failures):,})</h2><div class="two"><div><table id="failures-by-stage"><thead><tr>'
            f'<th>stage</th><th class="num">models</th><th></th></tr></thead><tbody>{stage_rows}</tbody></table></div>'
            '<div><table id="top-errors"><thead><tr><th class="num">models</th><th>stage</th><th>message (first line)'
            f"</th></tr></thead><tbody>{top}</tbody></table></div></div>")


def energy_missing(run: HtmlRun) -> str:
    """Why reports that asked for energy have no figure, counted by reason."""
    asked = [u.row.energy for u in run.units if u.row.energy is not None]
    why = Counter((e.reason or "not measured").split(";")[0][:160] for e in asked
                  if not (e.valid and e.energy_per_inference_mj is not None))
    if not why:
        return ""
    rows = "".join(f'<tr><td class="num">{n:,}</td><td>{escape(reason)}</td></tr>' for reason, n in why.most_common())
    return (f'<div><b>Reports without an energy figure ({sum(why.values()):,})</b><table id="energy-missing"><thead>'
            f'<tr><th class="num">reports</th><th>why</th></tr></thead><tbody>{rows}</tbody></table></div>')


def plot_section() -> str:
    boxes = "".join(f'<div class="plot" id="plot-{name}"></div>' for name in (
        "latency-vs-params", "latency-vs-size", "latency-vs-flops", "latency-distribution"))
    return f'<h2>Latency</h2><div class="plots" id="plots">{boxes}<div id="paired-plots" class="plots"></div></div>'


def models_section() -> str:
    return ('<h2>Models</h2><div id="controls"><input id="filter-text" type="search" placeholder="filter: words in '
            'any column"><select id="filter-status"><option value="">any status</option></select>'
            '<select id="filter-family"><option value="">any family</option></select>'
            '<select id="filter-device"><option value="">any device</option></select>'
            '<details id="column-chooser"><summary>columns</summary><div id="column-list"></div></details>'
            '<span><span id="shown"></span> of <span id="total"></span> shown; click a header to sort, a row for its '
            'details</span></div><div id="models"></div><div id="flag-legend" class="muted"></div>'
            '<div id="detail" hidden></div>')


def build_html(run: HtmlRun | RunResults, title: str | None = None) -> str:
    """The page of a run read by html_source.read_run (or, all in memory, by rows.load_run)."""
    if isinstance(run, RunResults):
        run = from_results(run)
    title = title or f"nnlite run {run.run_dir.name}"
    generated = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    data = data_block(run)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>{vendor_head()}<style>{asset('report.css')}</style></head><body>",
        f'<h1>{escape(title)}</h1><div class="muted">{escape(run.run_dir.name)} · generated {generated} '
        f"by nnlite {escape(__version__)} from the run's reports and state</div>",
        summary_section(run),
        '<h2>Per family</h2><p class="muted">Medians over each family\'s units on one device and precision; '
        'click a family to filter the models.</p><div id="families"></div>',
        '<div id="tasks-block"><h2>Per task</h2><div id="tasks"></div></div>',
        plot_section(),
        '<div id="drift-block"><h2>Drift</h2><p class="muted">The reference model (the same file on every device) '
        'timed between units; medians are not rescaled by it.</p><div class="plots" id="drift"></div></div>',
        '<div id="energy-block"><h2>Energy</h2><p class="muted">Energy per inference from the device\'s own counters '
        "(battery current or RAPL): a consistent relative estimate on one device, not an absolute measurement; "
        f'compare models on the same device only.</p><div class="plots" id="energy-plots"></div>{energy_missing(run)}</div>',
        runtime_section(data["runtimes"]),
        failure_section(run),
        models_section(),
        credits(),
        data_script(data),
        script(asset("report.js")),
        "</body></html>",
    ])
