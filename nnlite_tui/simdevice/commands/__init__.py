"""The simulated device's command table: toybox-style file tools, props, pm, am, dumpsys, logcat.

A command is `async def name(ctx: Ctx) -> int`; it writes with ctx.out()/ctx.err() and returns the
exit status. Messages copy the wording of Android's toybox, mksh and framework commands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

COMMANDS: dict[str, Callable[..., Awaitable[int]]] = {}


def command(*names: str):
    def register(func):
        for name in names:
            COMMANDS[name] = func
        return func
    return register


def lookup(name: str):
    if not COMMANDS:
        from nnlite_tui.simdevice.commands import activity, files, packages, screen, system, text  # noqa: F401
    return COMMANDS.get(name)
