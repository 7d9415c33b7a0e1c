"""How the console writes numbers, flags and runs of labelled fields.

Numbers: three significant digits with a unit; tiny differences in scientific notation.
Spacing: the gap after a field belongs to that field's span, never to the start of the next one,
so that no span of text starts with blanks (renderers of exported screens that trim each span,
e.g. some SVG viewers, would otherwise glue neighbouring fields together).
"""

from __future__ import annotations

from typing import Any, Iterable, Union

from textual.content import Content

from nnlite_tui.core.names import cut_middle

Span = Union[str, tuple[str, str]]  # text, or (text, style) as Content.assemble takes them
GAP = "  "


def sig3(value: float) -> str:
    """Three significant digits, without exponent for everyday magnitudes: 1.82, 18.2, 182, 1820."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:.0f}"
    if magnitude < 0.001:
        return f"{value:.2e}"
    return f"{value:#.3g}".rstrip(".")  # '#' keeps trailing zeros: 1.90, 2.00


def milliseconds(value_ms: float | None) -> str:
    return "-" if value_ms is None else f"{sig3(value_ms)} ms"


def seconds(value_s: float | None) -> str:
    if value_s is None:
        return "-"
    if value_s < 1:
        return f"{sig3(value_s * 1000)} ms"
    if value_s < 120:
        return f"{sig3(value_s)} s"
    minutes, secs = divmod(int(round(value_s)), 60)
    return f"{minutes}m{secs:02d}s"


def tiny(value: float | None) -> str:
    """A difference that is usually far below 1 (e.g. max |torch - tflite|): scientific when small."""
    if value is None:
        return "-"
    return f"{value:.2e}" if value != 0 and abs(value) < 0.01 else sig3(value)


def byte_size(count: float | None) -> str:
    if count is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{sig3(count)} {unit}"
        count /= 1024
    return f"{count} GiB"  # not reached


def yes_no(value: Any) -> str:
    if value is None:
        return "-"
    return "yes" if value else "no"


def shorten(text: str, width: int) -> str:
    """One line of at most `width` cells: the first line of `text`, middle cut out when too long
    (the start names the thing, the end usually says what happened to it). A unit's name is cut
    with core.names.short_name instead, which keeps its `@...` suffix whole."""
    return cut_middle(text.splitlines()[0] if text else "", width)


def spans(*parts: Span | Content) -> list[tuple[str, str] | Content]:
    """The parts, with the leading blanks of each moved onto the end of the previous one."""
    out: list[tuple[str, str] | Content] = []
    for part in parts:
        if isinstance(part, Content):
            out.append(part)  # built by line()/fields(): starts with no blank
            continue
        text, style = (part, "") if isinstance(part, str) else part
        stripped = text.lstrip(" ")
        if out and len(stripped) != len(text) and not painted(style):
            blanks, prev = text[:len(text) - len(stripped)], out[-1]
            out[-1] = prev + blanks if isinstance(prev, Content) else (prev[0] + blanks, prev[1])
            text = stripped
        if text:
            out.append((text, style))
    return out


def painted(style: str) -> bool:
    """Does the style paint the cells' background (so its blanks are visible and must stay)?"""
    return "reverse" in style or " on " in f" {style} " or "underline" in style


def line(*parts: Span | Content) -> Content:
    return Content.assemble(*spans(*parts))


def fields(pairs: Iterable[tuple[str, Span]], label_style: str = "dim") -> Content:
    """label value  label value ... with the gap after each value."""
    parts: list[Span] = []
    for label, value in pairs:
        parts.append((f"{label} ", label_style))
        text, style = (value, "") if isinstance(value, str) else value
        parts.append((text + GAP, style))
    return line(*parts).rstrip()
