"""Border titles that repaint their border row only.

Setting Widget.border_title (or border_subtitle) refreshes the whole widget. For a pane that is
a container this marks its whole area dirty, so the next frame re-renders and re-composes every
line of every widget inside it: the queue's status counts change with every burst of events,
and that alone cost the 10,000-model console most of a frame. This sets the same title and marks
only the top (title) or bottom (subtitle) row of the border dirty.
"""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget


def _border_row(widget: Widget, row: int) -> Region:
    """The widget's outer row `row` (0: top, -1: bottom) in its content coordinates (what refresh takes)."""
    offset = widget.content_offset
    width, height = widget.outer_size
    y = row if row >= 0 else height + row
    return Region(-offset.x, y - offset.y, width, 1)


def set_border_text(widget: Widget, title: str | None = None, subtitle: str | None = None) -> None:
    """Set the border title and/or subtitle (None: leave it) and repaint only the rows that changed."""
    # The texts this function last set, and what it stored for them (a direct assignment of
    # border_title since then replaces the stored object).
    last = widget.__dict__.get("_border_texts")
    if (last is not None and (title is None or title == last[0]) and (subtitle is None or subtitle == last[1])
            and widget._border_title is last[2] and widget._border_subtitle is last[3]):
        return  # the usual case during a run (parsing the markup again costs more than the check)
    styles = widget.styles
    rows, whole = [], not widget.is_mounted or not widget.outer_size
    for text, attribute, row, edge in ((title, "_border_title", 0, styles.border_top),
                                       (subtitle, "_border_subtitle", -1, styles.border_bottom)):
        if text is None:
            continue
        old = getattr(widget, attribute)
        # As Widget's border-title descriptor stores it: markup, tabs expanded, one line.
        new = widget.render_str(text).expand_tabs(4).split()[0]
        if old is not None and old.markup == new.markup:
            continue
        setattr(widget, attribute, new)
        rows.append(row)
        whole |= edge[0] in ("", "none", "hidden")  # no border row: the title goes elsewhere
    widget.__dict__["_border_texts"] = (title if title is not None else (last[0] if last else None),
                                        subtitle if subtitle is not None else (last[1] if last else None),
                                        widget._border_title, widget._border_subtitle)
    if whole and rows:
        widget.refresh()  # not laid out yet, or no border row to confine the repaint to
    elif rows:
        widget.refresh(*(_border_row(widget, row) for row in rows))
