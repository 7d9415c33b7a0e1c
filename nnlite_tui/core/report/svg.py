"""Plots as inline SVG strings: scatter (log axes), box plots, bars, histogram, timeline.

Drawn here in Python so that a report opens offline with nothing to load, and costs only its own
bytes: no plotting library travels inside every HTML file. Every plot is an <svg class="plot"
data-plot=NAME> with a <title> on each mark, which the browser shows as a tooltip.
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


def _quartiles(values: Sequence[float]) -> tuple[float, float, float, float, float]:
    from nnlite_tui.core.bench.stats import percentile

    s = sorted(values)
    return s[0], percentile(s, 0.25), percentile(s, 0.5), percentile(s, 0.75), s[-1]


def box_plot(name: str, title: str, groups: dict[str, Sequence[float]], y_label: str, log_y: bool = True) -> str:
    """One box (quartiles, whiskers at min and max) per group, with every value as a jittered dot."""
    groups = {k: [v for v in vals if v > 0 or not log_y] for k, vals in groups.items()}
    groups = {k: v for k, v in groups.items() if v}
    out = _open(name, title)
    if not groups:
        return "\n".join(out + ['<text class="empty" x="320" y="180">no data</text></svg>'])
    every = [v for vals in groups.values() for v in vals]
    y = Scale(min(every), max(every), H - BOTTOM, TOP, log_y)
    out += _axes(None, y, "", y_label)
    slot = (W - RIGHT - LEFT) / len(groups)
    for i, (label, vals) in enumerate(groups.items()):
        cx = LEFT + slot * (i + 0.5)
        half = min(40.0, slot * 0.3)
        lo, q1, med, q3, hi = _quartiles(vals)
        c = colour(i)
        out.append(f'<g class="box"><title>{escape(label)}: n={len(vals)}, median {fmt_num(med)}, '
                   f'IQR {fmt_num(q1)}-{fmt_num(q3)}</title>'
                   f'<line class="whisker" x1="{cx:.1f}" y1="{y(lo):.1f}" x2="{cx:.1f}" y2="{y(hi):.1f}"/>'
                   f'<rect x="{cx - half:.1f}" y="{y(q3):.1f}" width="{2 * half:.1f}" '
                   f'height="{max(1.0, y(q1) - y(q3)):.1f}" fill="{c}" fill-opacity="0.35" stroke="{c}"/>'
                   f'<line class="median" x1="{cx - half:.1f}" y1="{y(med):.1f}" x2="{cx + half:.1f}" '
                   f'y2="{y(med):.1f}"/></g>')
        for j, v in enumerate(vals[:400]):  # dots beyond a few hundred add bytes, not information
            jitter = ((j * 0.618034) % 1 - 0.5) * half
            out.append(f'<circle class="dot" cx="{cx + jitter:.1f}" cy="{y(v):.1f}" r="1.8" fill="{c}"/>')
        out.append(f'<text class="tick" x="{cx:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">'
                   f'{escape(label[:34])}</text>')
    out.append("</svg>")
    return "\n".join(out)


def bars(name: str, title: str, items: Sequence[tuple[str, int]], x_label: str = "count") -> str:
    """Horizontal bars, one per (label, count), in the order given."""
    height = max(120, TOP + 24 * len(items) + BOTTOM)
    out = _open(name, title, height=height)
    if not items:
        return "\n".join(out + ['<text class="empty" x="320" y="60">none</text></svg>'])
    top = max(c for _, c in items) or 1
    left = 200
    for i, (label, count) in enumerate(items):
        y0 = TOP + 24 * i
        w = (W - RIGHT - left - 40) * count / top
        out.append(f'<text class="tick" x="{left - 6}" y="{y0 + 15}" text-anchor="end">{escape(label[:30])}</text>'
                   f'<rect class="bar" x="{left}" y="{y0 + 3}" width="{w:.1f}" height="16" fill="{colour(i)}">'
                   f'<title>{escape(label)}: {count}</title></rect>'
                   f'<text class="tick" x="{left + w + 4:.1f}" y="{y0 + 15}">{count}</text>')
    out.append(f'<text class="label" x="{(left + W) / 2}" y="{height - 8}" text-anchor="middle">'
               f'{escape(x_label)}</text></svg>')
    return "\n".join(out)


def histogram(name: str, title: str, values: Sequence[float], x_label: str, bins: int = 30,
              width: int = 420, height: int = 220) -> str:
    """All bars as one <path>: a report of a thousand models carries a thousand histograms."""
    import numpy as np

    out = _open(name, title, width, height)
    if not len(values):
        return "\n".join(out + ['<text class="empty" x="40" y="60">no samples</text></svg>'])
    counts, edges = np.histogram(np.asarray(values, dtype=np.float64), bins=bins)
    x = Scale(float(edges[0]), float(edges[-1]), LEFT, width - RIGHT, False)
    y = Scale(0, int(counts.max()), height - BOTTOM, TOP, False)
    out += _axes(x, y, x_label, "runs", width, height)
    base = y(0)
    path = "".join(f"M{x(edges[i]):.1f} {base:.0f}V{y(c):.1f}H{max(x(edges[i]) + 0.5, x(edges[i + 1]) - 0.5):.1f}"
                   f"V{base:.0f}Z" for i, c in enumerate(counts.tolist()) if c)
    out.append(f'<path class="bar" d="{path}" fill="{PALETTE[0]}"/></svg>')
    return "\n".join(out)


def timeline(name: str, title: str, values: Sequence[float], y_label: str, max_points: int = 200,
             width: int = 420, height: int = 220) -> str:
    """Samples in run order. Long runs are drawn as the min and max of each bucket: spikes survive."""
    import numpy as np

    out = _open(name, title, width, height)
    if not len(values):
        return "\n".join(out + ['<text class="empty" x="40" y="60">no samples</text></svg>'])
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    x = Scale(0, max(1, n - 1), LEFT, width - RIGHT, False)
    y = Scale(float(v.min()), float(v.max()), height - BOTTOM, TOP, False)
    out += _axes(x, y, "run", y_label, width, height)
    if n <= max_points:
        idx = np.arange(n)
    else:
        size = -(-n // (max_points // 2))
        pairs = []
        for start in range(0, n, size):
            chunk = v[start:start + size]
            a, b = start + int(np.argmin(chunk)), start + int(np.argmax(chunk))
            pairs += [a, b] if a <= b else [b, a]
        idx = np.asarray(pairs)
    line = " ".join(f"{x(i):.0f},{y(val):.0f}" for i, val in zip(idx.tolist(), v[idx].tolist()))
    out.append(f'<polyline class="series" points="{line}" fill="none" stroke="{PALETTE[0]}"/></svg>')
    return "\n".join(out)
