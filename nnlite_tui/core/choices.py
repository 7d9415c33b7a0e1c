"""A comma-separated choice of names from a fixed, ordered set ("litert,executorch", "fp32,int8", "all")."""

from __future__ import annotations

from collections.abc import Iterable


def parse_choices(text: str | Iterable[str], choices: tuple[str, ...], noun: str) -> tuple[str, ...]:
    """The chosen names in `choices`' order; "all" is every one; ValueError names an unknown one (`noun`:
    what a name is, for the message)."""
    items = text.split(",") if isinstance(text, str) else list(text)
    wanted = {item.strip().lower() for item in items if item and item.strip()}
    if "all" in wanted:
        return choices
    unknown = sorted(wanted - set(choices))
    if unknown:
        raise ValueError(f"unknown {noun} {', '.join(unknown)}; choose from {', '.join(choices)} or all")
    if not wanted:
        raise ValueError(f"no {noun} given")
    return tuple(c for c in choices if c in wanted)
