"""Text and query tools: md5sum/sha1sum/sha256sum, wc, head, grep, stat, test/[."""

from __future__ import annotations

import hashlib

from nnlite_tui.simdevice.commands import command
from nnlite_tui.simdevice.commands.files import _enoent, _split_flags
from nnlite_tui.simdevice.interp import Ctx


async def _inputs(ctx: Ctx, paths: list[str], tool: str) -> list[tuple[str, bytes]] | None:
    if not paths:
        return [("-", await ctx.read_stdin())]
    out = []
    for path in paths:
        try:
            out.append((path, ctx.fs.read_bytes(path, ctx.shell.cwd)))
        except OSError:
            _enoent(ctx, tool, path)
            return None
    return out


@command("md5sum", "sha1sum", "sha256sum")
async def checksum(ctx: Ctx) -> int:
    tool = ctx.argv[0].rsplit("/", 1)[-1]
    _, paths = _split_flags(ctx.argv)
    inputs = await _inputs(ctx, paths, tool)
    if inputs is None:
        return 1
    for name, data in inputs:
        ctx.out(f"{hashlib.new(tool[:-3], data).hexdigest()}  {name}\n")
    return 0


@command("wc")
async def wc(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.argv)
    inputs = await _inputs(ctx, paths, "wc")
    if inputs is None:
        return 1
    for name, data in inputs:
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        shown = [counts[k] for k in "lwc" if k in flags] or list(counts.values())
        ctx.out(" ".join(str(c) for c in shown) + ("" if name == "-" else f" {name}") + "\n")
    return 0


@command("head")
async def head(ctx: Ctx) -> int:
    args, n = ctx.argv[1:], 10
    if args and args[0] == "-n" and len(args) > 1:
        n, args = int(args[1]), args[2:]
    elif args and args[0].startswith("-") and args[0][1:].isdigit():
        n, args = int(args[0][1:]), args[1:]
    inputs = await _inputs(ctx, args, "head")
    if inputs is None:
        return 1
    for _, data in inputs:
        ctx.out(b"".join(data.splitlines(keepends=True)[:n]))
    return 0


@command("grep")
async def grep(ctx: Ctx) -> int:
    flags, args = _split_flags(ctx.argv)
    if not args:
        ctx.err("usage: grep [-iv] PATTERN [FILE...]\n")
        return 2
    pattern, paths = args[0], args[1:]
    inputs = await _inputs(ctx, paths, "grep")
    if inputs is None:
        return 2
    found = False
    for _, data in inputs:
        for line in data.decode("utf-8", "replace").splitlines():
            hit = (pattern.lower() in line.lower()) if "i" in flags else (pattern in line)
            if hit != ("v" in flags):
                found = True
                ctx.out(line + "\n")
    return 0 if found else 1


@command("stat")
async def stat_(ctx: Ctx) -> int:
    _, paths = _split_flags(ctx.argv)
    for path in paths:
        host = ctx.fs.resolve(path, ctx.shell.cwd)
        if not host.exists():
            ctx.err(f"stat: '{path}': No such file or directory\n")
            return 1
        st = host.stat()
        ctx.out(f"  File: {path}\n  Size: {st.st_size}\t Blocks: {st.st_blocks}\t IO Blocks: 4096\t"
                f"{'directory' if host.is_dir() else 'regular file'}\n")
    return 0


@command("test", "[")
async def test(ctx: Ctx) -> int:
    args = ctx.argv[1:-1] if ctx.argv[0] == "[" else ctx.argv[1:]
    if len(args) == 2 and args[0] in ("-e", "-f", "-d", "-s"):
        host = ctx.fs.resolve(args[1], ctx.shell.cwd)
        ok = {"-e": host.exists(), "-f": host.is_file(), "-d": host.is_dir(),
              "-s": host.is_file() and host.stat().st_size > 0}[args[0]]
        return 0 if ok else 1
    if len(args) == 3 and args[1] in ("=", "!="):
        return 0 if (args[0] == args[2]) == (args[1] == "=") else 1
    if len(args) == 2 and args[0] in ("-n", "-z"):
        return 0 if bool(args[1]) == (args[0] == "-n") else 1
    return 0 if len(args) == 1 and args[0] else 1
