"""A scroll view whose lines share what one frame reads once: styles and geometry.

Each read of a widget's style walks the DOM; a pane that drew every line with its own reads paid
that per line, which at 10,000 models was most of a frame.
"""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.strip import Strip


class FrameView(ScrollView):
    """`render_line` finds this frame's `_frame_context()` in `self._frame` (None outside a frame)."""

    _frame: Any = None

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame = self._frame_context()
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def _frame_context(self) -> Any:
        raise NotImplementedError
