"""A scatter plot (log axes) as an inline SVG string: the runtime section's (html_runtimes.py); the rest
of the HTML report draws with ECharts (html_report.py).

It is an <svg class="plot" data-plot=NAME> with a <title> on each mark, which the browser shows as a
tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
W, H = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 28, 48


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def fmt_num(value: float) -> str:
    """Short axis label: 1.5k, 20M, 0.25."""
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= div:
            return f"{value / div:.3g}{suffix}"
    return f"{value:.3g}"


class Scale:
    """Maps data to pixels, linear or log10, with tick positions a person can read."""

    def __init__(self, lo: float, hi: float, p0: float, p1: float, log: bool):
        if log:
            lo, hi = math.log10(lo), math.log10(hi)
        if hi - lo < 1e-12:
            lo, hi = lo - 0.5, hi + 0.5
        pad = (hi - lo) * 0.05
        self.lo, self.hi, self.p0, self.p1, self.log = lo - pad, hi + pad, p0, p1, log

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else value
        return self.p0 + (v - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)

    def ticks(self) -> list[float]:
        if self.log:
            lo, hi = math.floor(self.lo), math.ceil(self.hi)
            mults = (1, 2, 5) if hi - lo <= 3 else (1,)
            ticks = [m * 10.0 ** e for e in range(lo, hi + 1) for m in mults]
            return [t for t in ticks if self.lo <= math.log10(t) <= self.hi]
        span = self.hi - self.lo
        step = 10 ** math.floor(math.log10(span / 5))
        for m in (1, 2, 5, 10):
            if span / (step * m) <= 6:
                step *= m
                break
        first = math.ceil(self.lo / step) * step
        return [first + i * step for i in range(int((self.hi - first) / step) + 1)]


def _open(name: str, title: str, width: int = W, height: int = H) -> list[str]:
    return [f'<svg class="plot" data-plot="{escape(name)}" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" xmlns="http://www.w3.org/2000/svg">',
            f'<text class="title" x="{LEFT}" y="18">{escape(title)}</text>']


def _axes(x: Scale | None, y: Scale, x_label: str, y_label: str, width: int = W, height: int = H,
          right: float | None = None) -> list[str]:
    """Axes, grid and labels; `right` is where the plotting area ends (a legend may sit beyond it)."""
    right = width - RIGHT if right is None else right
    out = [f'<line class="axis" x1="{LEFT}" y1="{height - BOTTOM}" x2="{right}" y2="{height - BOTTOM}"/>',
           f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{height - BOTTOM}"/>']
    for t in y.ticks():
        py = y(t)
        out.append(f'<line class="grid" x1="{LEFT}" y1="{py:.1f}" x2="{right}" y2="{py:.1f}"/>'
                   f'<text class="tick" x="{LEFT - 4}" y="{py + 4:.1f}" text-anchor="end">{fmt_num(t)}</text>')
    if x is not None:
        for t in x.ticks():
            px = x(t)
            out.append(f'<line class="grid" x1="{px:.1f}" y1="{TOP}" x2="{px:.1f}" y2="{height - BOTTOM}"/>'
                       f'<text class="tick" x="{px:.1f}" y="{height - BOTTOM + 16}" text-anchor="middle">'
                       f'{fmt_num(t)}</text>')
    out.append(f'<text class="label" x="{(LEFT + right) / 2}" y="{height - 8}" text-anchor="middle">'
               f'{escape(x_label)}</text>')
    out.append(f'<text class="label" transform="translate(14 {(TOP + height - BOTTOM) / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(y_label)}</text>')
    return out


def _legend(names: Sequence[str], width: int = W) -> list[str]:
    out = []
    for i, name in enumerate(names[:12]):
        y = TOP + 6 + i * 15
        out.append(f'<circle cx="{width - 150}" cy="{y}" r="4" fill="{colour(i)}"/>'
                   f'<text class="legend" x="{width - 142}" y="{y + 4}">{escape(name[:22])}</text>')
    if len(names) > 12:
        out.append(f'<text class="legend" x="{width - 142}" y="{TOP + 6 + 12 * 15 + 4}">'
                   f'+{len(names) - 12} more</text>')
    return out


def scatter(name: str, title: str, points: Sequence[tuple[float, float, str, str]], x_label: str, y_label: str,
            log_x: bool = True, log_y: bool = True, diagonal: bool = False) -> str:
    """points: (x, y, colour group, tooltip). Points that a log axis cannot show are left out."""
    pts = [p for p in points if (not log_x or p[0] > 0) and (not log_y or p[1] > 0)]
    out = _open(name, title)
    if not pts:
        return "\n".join(out + ['<text class="empty" x="320" y="180">no data</text></svg>'])
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    if diagonal:  # the same range on both axes, so that y = x is the diagonal
        xs = ys = xs + ys
    x = Scale(min(xs), max(xs), LEFT, W - RIGHT - 160, log_x)
    y = Scale(min(ys), max(ys), H - BOTTOM, TOP, log_y)
    out += _axes(x, y, x_label, y_label, right=W - RIGHT - 160)
    if diagonal:
        lo, hi = 10 ** x.lo if log_x else x.lo, 10 ** x.hi if log_x else x.hi
        out.append(f'<line class="diag" x1="{x(lo):.1f}" y1="{y(lo):.1f}" x2="{x(hi):.1f}" y2="{y(hi):.1f}"/>')
    groups = sorted({p[2] for p in pts})
    index = {g: i for i, g in enumerate(groups)}
    for px, py, group, tip in pts:
        out.append(f'<circle class="pt" cx="{x(px):.1f}" cy="{y(py):.1f}" r="3.5" fill="{colour(index[group])}">'
                   f'<title>{escape(tip)}</title></circle>')
    out += _legend(groups)
    out.append("</svg>")
    return "\n".join(out)
