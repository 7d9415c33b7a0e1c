"""`nnlite compare A B --format html`: the comparison as the same kind of page as the run report.

One JSON data block (columns of the pairs), Tabulator for the table (virtual rows, sorting) and
filters by verdict, family and device; per pair the ratio of after to before with its interval, the
verdict and its basis. What is only in one run, and energy, follow as small tables. Nothing is
fetched when the page is opened (html_report.py inlines the same libraries).
"""

from __future__ import annotations

import time
from collections import Counter
from html import escape

from nnlite_tui import __version__
from nnlite_tui.core.report.compare import MARKS, Comparison
from nnlite_tui.core.report.compare_format import _header_lines, _summary, energy_table
from nnlite_tui.core.report.html_data import Strings, lemur_family, ms, r4
from nnlite_tui.core.report.html_report import asset, credits, data_script, script, vendor_head
from nnlite_tui.core.report.rows import ResultRow

VERDICT_CLASS = {"slower": "bad", "broken": "bad", "faster": "good", "fixed": "good"}


def pair_columns(cmp: Comparison, s: Strings) -> dict[str, list]:
    pairs = cmp.pairs
    return {
        "model": [p.before.model for p in pairs],
        "family": [s(lemur_family(p.before.model)) for p in pairs],
        "device": [s(p.before.device_label) for p in pairs],
        "backend": [s(p.before.backend) for p in pairs],
        "precision": [s(p.before.precision) for p in pairs],
        "change": [s(p.change) for p in pairs],
        "mark": [s(MARKS.get(p.change, "").strip()) for p in pairs],
        "before": [ms(p.before.median_ns) for p in pairs],
        "after": [ms(p.after.median_ns) for p in pairs],
        "ratio": [r4(p.ratio) for p in pairs],
        "low": [r4(p.ci[0]) if p.ci else None for p in pairs],
        "high": [r4(p.ci[1]) if p.ci else None for p in pairs],
        "basis": [s(p.basis) for p in pairs],
        "p": [r4(p.p_value) for p in pairs],
        "rounds": [s(f"{p.before.rounds} / {p.after.rounds}") for p in pairs],
    }


def _only(title: str, table_id: str, rows: list[ResultRow]) -> str:
    if not rows:
        return ""
    body = "".join(f"<tr><td>{escape(r.model)}</td><td>{escape(r.device_label)}</td><td>{escape(r.backend)}</td>"
                   f"<td>{escape(r.precision)}</td><td>{escape(r.status)}</td></tr>" for r in rows)
    return (f'<div><h3>{escape(title)} ({len(rows):,})</h3><div class="scroll-x"><table id="{table_id}"><thead><tr>'
            "<th>model</th><th>device</th><th>backend</th><th>precision</th><th>status</th></tr></thead>"
            f"<tbody>{body}</tbody></table></div></div>")


def to_html(cmp: Comparison) -> str:
    s = Strings()
    data = {"columns": pair_columns(cmp, s), "strings": s.values, "threshold": cmp.threshold}
    counts = Counter(p.change for p in cmp.pairs)
    cards = "".join(f'<div class="card {VERDICT_CLASS.get(c, "")}"><b>{n:,}</b>{escape(c)}</div>'
                    for c, n in counts.most_common())
    head = "".join(f'<p class="muted">{escape(line)}</p>' for line in _header_lines(cmp))
    energy = energy_table(cmp)
    energy_html = f"<h2>Energy per inference</h2><pre>{escape(chr(10).join(energy[1:]))}</pre>" if energy else ""
    only = _only("Only in before", "only-before", cmp.only_before) + _only("Only in after", "only-after",
                                                                          cmp.only_after)
    return "\n".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>nnlite compare</title>',
        f"{vendor_head()}<style>{asset('report.css')}</style></head><body>",
        f'<h1>nnlite compare</h1><div class="muted">generated {time.strftime("%Y-%m-%d %H:%M:%S %Z")} by nnlite '
        f"{escape(__version__)}</div>{head}<p><b>{escape(_summary(cmp))}</b></p>",
        f'<div class="cards" id="verdicts">{cards}</div>',
        '<h2>Pairs</h2><div id="controls"><input id="filter-text" type="search" placeholder="filter: words in any '
        'column"><select id="filter-change"><option value="">any verdict</option></select>'
        '<select id="filter-family"><option value="">any family</option></select>'
        '<select id="filter-device"><option value="">any device</option></select>'
        '<span><span id="shown"></span> of <span id="total"></span> shown</span></div><div id="compare"></div>',
        f'<div class="two">{only}</div>' if only else "",
        energy_html,
        credits(),
        data_script(data),
        script(asset("compare.js")),
        "</body></html>",
    ])
