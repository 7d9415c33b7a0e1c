"""`am start` (with -S, -W, -n and --es/--ei/--ef/--ez/--el extras), `am force-stop`, `monkey -p`.

Like ActivityManagerShellCommand, a failed start prints its error and still exits 0: a host must
read the text, not the exit status.
"""

from __future__ import annotations

import asyncio

from nnlite_tui.simdevice.bench_args import JavaLong
from nnlite_tui.simdevice.commands import command
from nnlite_tui.simdevice.interp import Ctx

EXTRA_TYPES = {"--es": str, "-e": str, "--ei": int, "--el": JavaLong, "--ef": float, "--ed": float,
               "--ez": lambda v: v.lower() in ("true", "t", "1")}


def _full_class(component: str) -> tuple[str, str]:
    pkg, _, cls = component.partition("/")
    return pkg, (pkg + cls if cls.startswith(".") else cls)


@command("am")
async def am(ctx: Ctx) -> int:
    args = ctx.argv[1:]
    if not args:
        ctx.err("usage: am [start|force-stop|kill] ...\n")
        return 1
    if args[0] in ("force-stop", "kill"):
        if len(args) > 1:
            ctx.device.app.force_stop(args[-1])
        return 0
    if args[0] not in ("start", "start-activity"):
        ctx.err(f"Error: Unknown command: {args[0]}\n")
        return 1
    return await _start(ctx, args[1:])


async def _start(ctx: Ctx, args: list[str]) -> int:
    component, extras, stop_first, wait = None, {}, False, False
    i = 0
    try:
        while i < len(args):
            a = args[i]
            if a in EXTRA_TYPES:
                extras[args[i + 1]] = EXTRA_TYPES[a](args[i + 2])
                i += 3
                continue
            if a == "--esn":
                extras[args[i + 1]] = None
                i += 2
                continue
            if a == "-n":
                component, i = args[i + 1], i + 2
                continue
            if a in ("-a", "-d", "-t", "-c", "-f", "--user"):
                i += 2
                continue
            stop_first = stop_first or a == "-S"
            wait = wait or a == "-W"
            i += 1
    except (IndexError, ValueError) as exc:
        ctx.err(f"Error: Bad argument: {exc}\n")
        return 255
    if component is None:
        ctx.err("Error: Intent does not match any activities\n")
        return 0
    pkg, cls = _full_class(component)
    short = component.split("/", 1)[1]
    ctx.out(f"Starting: Intent {{ cmp={component}{' (has extras)' if extras else ''} }}\n")
    installed = ctx.device.packages.get(pkg)
    if installed is None or cls not in installed.activities:
        ctx.err(f"Error type 3\nError: Activity class {{{pkg}/{cls}}} does not exist.\n")
        return 0
    if stop_first:
        ctx.device.app.force_stop(pkg)
    ctx.device.app.launch(pkg, cls, extras)
    if wait:
        delay = ctx.device.config.app_start_delay
        await asyncio.sleep(delay)
        ms = int(delay * 1000) + 12
        ctx.out(f"Status: ok\nLaunchState: COLD\nActivity: {pkg}/{short}\nTotalTime: {ms}\n"
                f"WaitTime: {ms + 4}\nComplete\n")
    return 0


@command("monkey")
async def monkey(ctx: Ctx) -> int:
    if "-p" in ctx.argv:
        pkg = ctx.argv[ctx.argv.index("-p") + 1]
        installed = ctx.device.packages.get(pkg)
        if installed is None or not installed.activities:
            ctx.err("** No activities found to run, monkey aborted.\n")
            return 252
        ctx.device.app.launch(pkg, installed.activities[0], {})
        ctx.out("Events injected: 1\n")
    return 0
