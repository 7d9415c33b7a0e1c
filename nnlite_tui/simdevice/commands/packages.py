"""`pm` and `cmd package`: install (from a path or streamed with -S), list packages, path,
uninstall, clear. Before the package manager is up they fail like Android does early in boot."""

from __future__ import annotations

from nnlite_tui.simdevice.commands import command
from nnlite_tui.simdevice.interp import Ctx
from nnlite_tui.simdevice.pm import InstallFailure

NOT_READY = "cmd: Can't find service: package\n"


@command("pm")
async def pm(ctx: Ctx) -> int:
    return await _package(ctx, ctx.argv[1:])


@command("cmd")
async def cmd(ctx: Ctx) -> int:
    if len(ctx.argv) < 2:
        ctx.err("cmd: No service specified; use -l to list all running services.\n")
        return 20
    if ctx.argv[1] != "package":
        ctx.err(f"cmd: Can't find service: {ctx.argv[1]}\n")
        return 20
    return await _package(ctx, ctx.argv[2:])


async def _package(ctx: Ctx, args: list[str]) -> int:
    if not ctx.device.boot.at_least("ready"):
        ctx.err(NOT_READY)
        return 20
    if not args:
        ctx.err("Package manager (package) commands:\n  install, list packages, path, uninstall, clear\n")
        return 1
    sub, rest = args[0], args[1:]
    if sub == "install":
        return await _install(ctx, rest)
    if sub == "list" and rest[:1] == ["packages"]:
        return _list(ctx, rest[1:])
    if sub == "path":
        pkg = ctx.device.packages.get(rest[0]) if rest else None
        if pkg is None:
            return 1
        ctx.out(f"package:{pkg.path}\n")
        return 0
    if sub == "uninstall":
        name = [a for a in rest if not a.startswith("-")]
        if name and ctx.device.pm.uninstall(name[0]):
            ctx.out("Success\n")
            return 0
        ctx.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
        return 1
    if sub == "clear":
        ctx.out("Success\n" if rest and rest[0] in ctx.device.packages else "Failed\n")
        return 0
    ctx.err(f"Unknown command: {sub}\n")
    return 1


def _list(ctx: Ctx, args: list[str]) -> int:
    flags = {a for a in args if a.startswith("-")}
    needle = next((a for a in args if not a.startswith("-")), "")
    for pkg in sorted(ctx.device.packages.values(), key=lambda p: p.name):
        if "-3" in flags and pkg.system or "-s" in flags and not pkg.system or needle not in pkg.name:
            continue
        ctx.out(f"package:{pkg.path}={pkg.name}\n" if "-f" in flags else f"package:{pkg.name}\n")
    return 0


async def _install(ctx: Ctx, args: list[str]) -> int:
    flags, size, path = [], None, None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-S" and i + 1 < len(args):
            size, i = int(args[i + 1]), i + 2
            continue
        if a in ("-i", "--user", "--install-reason", "--originating-uri", "--referrer", "--abi", "-p"):
            i += 2
            continue
        if a.startswith("-"):
            flags.append(a)
        else:
            path = a
        i += 1
    if size is not None:
        data = await ctx.read_stdin(size)
    elif path is not None:
        try:
            data = ctx.fs.read_bytes(path, ctx.shell.cwd)
        except OSError:
            ctx.err(f"Error: Unable to open file: {path}\nConsider using a file under /data/local/tmp/\n")
            return 1
    else:
        ctx.err("Error: must either specify a package size or an APK file\n")
        return 1
    try:
        ctx.device.pm.install(data, flags)
    except InstallFailure as exc:
        ctx.out(f"{exc}\n")
        return 1
    ctx.out("Success\n")
    return 0
