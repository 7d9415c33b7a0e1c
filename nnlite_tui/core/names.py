"""A unit's name cut to a width, the same way wherever it is shown (console, `nnlite status`, progress lines).

A unit is `<model>` or `<model>@<variant>...` (`@int8`, `@executorch`, `@executorch@int8`). Cutting
such a name at its end loses what tells the units apart: `FractalNet-3094...dcb0` and
`FractalNet-3094...dcb0@int8` both become `FractalNet-3094…`. So the cut is made in the middle of the
model's name, which keeps its start (the family) and its end (in LEMUR, the end of the content hash
that tells one model of a family from another), and the `@...` suffix stays whole.
"""

from __future__ import annotations

ELLIPSIS = "…"
MIN_KEPT = 3  # characters of the model's own name kept around the ellipsis before the suffix is cut too


def cut_end(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at its end (for text whose start says what matters)."""
    if len(text) <= width:
        return text
    return text[:max(0, width - 1)] + ELLIPSIS if width > 0 else ""


def cut_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters: the middle replaced by an ellipsis, two thirds of what
    is kept from the start (it names the thing) and a third from the end."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:max(0, width)]
    head = (width - 1) * 2 // 3
    tail = width - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def short_name(name: str, width: int) -> str:
    """A unit's name in at most `width` characters, its `@...` suffix whole where the width allows
    (else the whole name is cut in its middle, which still keeps the suffix's end)."""
    if len(name) <= width:
        return name
    model, at, variant = name.partition("@")
    suffix = at + variant
    room = width - len(suffix)
    if not suffix or room < MIN_KEPT:
        return cut_middle(name, width)
    return cut_middle(model, room) + suffix


def short_names(names: list[str], width: int, separator: str = ", ", minimum: int = 16) -> str:
    """Names on one line of at most `width` characters: the width shared out (a short name leaves
    what it does not need to the others), none cut below `minimum` characters while more than one
    is shown, and `+N more` for the names that do not fit."""
    joined = separator.join(names)
    if len(joined) <= width:
        return joined
    for shown in range(len(names), 0, -1):
        more = f"{separator}+{len(names) - shown} more" if shown < len(names) else ""
        room = width - len(more) - len(separator) * (shown - 1)
        widths = shares([len(name) for name in names[:shown]], room)
        if shown == 1 or min(w for w, name in zip(widths, names) if w < len(name)) >= minimum:
            text = separator.join(short_name(name, w) for name, w in zip(names, widths)) + more
            return text if len(text) <= width else short_name(names[0], width)
    return joined  # no names


def shares(lengths: list[int], room: int) -> list[int]:
    """Widths summing to at most `room`: equal shares, a length below its share keeping only its length."""
    widths = [0] * len(lengths)
    left = max(0, room)
    for k, i in enumerate(sorted(range(len(lengths)), key=lengths.__getitem__)):
        widths[i] = min(lengths[i], left // (len(lengths) - k))
        left -= widths[i]
    return widths
