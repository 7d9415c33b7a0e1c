"""`input keyevent` and `wm dismiss-keyguard`, acting on the simulated display."""

from __future__ import annotations

from nnlite_tui.simdevice.commands import command
from nnlite_tui.simdevice.interp import Ctx
from nnlite_tui.simdevice.screen import KEYCODES


@command("input")
async def input_cmd(ctx: Ctx) -> int:
    args = ctx.argv[1:]
    if len(args) < 2 or args[0] != "keyevent":
        ctx.err("Usage: input [<source>] <command> [<arg>...]\n  keyevent [--longpress|--doubletap] <key code number or name> ...\n")
        return 1
    for key in (a for a in args[1:] if not a.startswith("--")):
        code = int(key) if key.isdigit() else KEYCODES.get(key if key.startswith("KEYCODE_") else f"KEYCODE_{key}")
        if code is None:
            ctx.err(f"Error: Unknown keycode: {key}\n")  # what `input` prints, exit status 0 on Android
            continue
        ctx.device.screen.keyevent(code)
    return 0


@command("wm")
async def wm(ctx: Ctx) -> int:
    if ctx.argv[1:2] == ["dismiss-keyguard"]:
        ctx.device.screen.dismiss_keyguard()
        return 0
    if ctx.argv[1:2] == ["size"]:
        ctx.out("Physical size: 1080x2400\n")
        return 0
    ctx.err(f"Unknown command: {' '.join(ctx.argv[1:2])}\n")
    return 255
