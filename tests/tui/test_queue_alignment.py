"""The queue's columns start at the same cell on every row, the cursor's row included, both on screen
and in an exported screenshot (the simplified SVG of the snapshot tests joins neighbouring spans of one
style, and a viewer then places what follows a joined span's "…" where its font puts it)."""

import re

from nnlite_tui.tui.widgets.queue_table import QueueTable

from .conftest import frozen_app
from .test_snapshots import LONG_UNITS, SIZE, long_names

TEXT = re.compile(r'<text class="[^"]*" x="([0-9.]+)" y="[0-9.]+" textLength="([0-9.]+)" '
                  r'clip-path="url\(#[^)]*-line-(\d+)\)">([^<]*)</text>')


def spans_by_line(svg: str) -> tuple[dict[int, list[tuple[int, str]]], float]:
    """The SVG's text spans line by line, each as (the cell it starts at, its text), and the cell width."""
    found = [(float(x), float(length), int(line), text.replace("&#160;", " ").replace("&amp;", "&"))
             for x, length, line, text in TEXT.findall(svg)]
    cell = next(length / len(text) for _, length, _, text in found if len(text) > 3)
    lines: dict[int, list[tuple[int, str]]] = {}
    for x, _, line, text in found:
        lines.setdefault(line, []).append((round(x / cell), text))
    return lines, cell


async def test_every_row_starts_its_status_where_the_header_does_with_the_cursor_on_a_cut_name():
    app = frozen_app()
    async with app.run_test(size=SIZE) as pilot:
        await long_names(pilot)
        table = app.screen.query_one(QueueTable)
        for moves in (1, 2):  # the cursor on the int8 unit of the long name, then on the next long name
            await pilot.press("down")
            await pilot.pause()
            assert table.cursor == moves
            screen = [strip.text for strip in app.screen._compositor.render_strips()]
            header = next(y for y, text in enumerate(screen) if "Status" in text and "Model" in text)
            column = screen[header].index("Status")
            rows = screen[header + 1:header + 1 + len(LONG_UNITS)]
            assert [text[column:].split()[0] for text in rows] == [
                "done", "done", "converting", "converting", "done", "done"]
            spans, _ = spans_by_line(app.export_screenshot(simplify=True))
            for line in range(header, header + 1 + len(LONG_UNITS)):  # a span starts at the Status column
                starts = [text.split()[0] for at, text in spans[line] if at == column and text.strip()]
                assert starts and starts[0] in ("Status", "done", "converting"), (line, spans[line])
