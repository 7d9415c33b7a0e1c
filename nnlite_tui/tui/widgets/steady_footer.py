"""A Footer that rebuilds its keys only when the keys it shows change.

Textual's Footer removes and mounts all its key widgets whenever the active bindings change,
which is on every focus change (the queue table, the name filter, a pane): a dozen new widgets to
style and a layout pass of the whole screen, for the same keys as before.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class SteadyFooter(Footer):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None

    def shown_keys(self, screen: Screen) -> tuple:
        """What compose() would show: the keys with show=True and the command palette's key."""
        active = screen.active_bindings
        keys = tuple((b.key, b.description, b.action, b.group, enabled, tooltip)
                     for (_, b, enabled, tooltip) in active.values() if b.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return keys, None if palette is None else palette[2]

    def bindings_changed(self, screen: Screen) -> None:
        if not (screen.app.app_focus and self.is_attached and screen is self.screen):
            super().bindings_changed(screen)  # nothing is rebuilt now; the next change rebuilds
            self._shown = None
            return
        shown = self.shown_keys(screen)
        if shown != self._shown:
            self._shown = shown
            super().bindings_changed(screen)
