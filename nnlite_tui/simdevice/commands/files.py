"""File and text tools: ls, cat, rm, mkdir, touch, mv, cp, echo, true, false, sleep, exit, cd, pwd,
wc, head, grep, md5sum/sha256sum, stat, test."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import stat as stat_mod
import time

from nnlite_tui.simdevice.commands import command
from nnlite_tui.simdevice.interp import Ctx, ExitShell


def _split_flags(argv: list[str]) -> tuple[set[str], list[str]]:
    flags, args, done = set(), [], False
    for a in argv[1:]:
        if not done and a == "--":
            done = True
        elif not done and a.startswith("-") and len(a) > 1:
            flags.update(a[1:])
        else:
            args.append(a)
    return flags, args


def _enoent(ctx: Ctx, tool: str, path: str) -> int:
    ctx.err(f"{tool}: {path}: No such file or directory\n")
    return 1


def _long(p, name: str) -> str:
    st = p.stat()
    kind = "d" if stat_mod.S_ISDIR(st.st_mode) else "-"
    perms = stat_mod.filemode(st.st_mode)[1:]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(st.st_mtime))
    return f"{kind}{perms} 1 shell shell {st.st_size:>8} {when} {name}\n"


@command("ls")
async def ls(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.argv)
    paths = paths or [ctx.shell.cwd]
    status = 0
    for index, path in enumerate(paths):
        host = ctx.fs.resolve(path, ctx.shell.cwd)
        if not host.exists():
            status = _enoent(ctx, "ls", path)
            continue
        if host.is_dir() and "d" not in flags:
            if len(paths) > 1:
                ctx.out(("\n" if index else "") + f"{path}:\n")
            names = sorted(p.name for p in host.iterdir() if "a" in flags or not p.name.startswith("."))
            if "a" in flags:
                names = [".", ".."] + names
            for name in names:
                target = host if name == "." else host.parent if name == ".." else host / name
                ctx.out(_long(target, name) if "l" in flags else name + "\n")
        else:
            ctx.out(_long(host, path) if "l" in flags else path + "\n")
    return status


@command("cat")
async def cat(ctx: Ctx) -> int:
    _, paths = _split_flags(ctx.argv)
    if not paths:
        ctx.out(await ctx.read_stdin())
        return 0
    status = 0
    for path in paths:
        try:
            ctx.out(ctx.fs.read_bytes(path, ctx.shell.cwd))
        except IsADirectoryError:
            ctx.err(f"cat: {path}: Is a directory\n")
            status = 1
        except OSError:
            status = _enoent(ctx, "cat", path)
    return status


@command("rm")
async def rm(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.argv)
    status = 0
    for path in paths:
        host = ctx.fs.resolve(path, ctx.shell.cwd)
        try:
            ctx.fs.check_writable(path, ctx.shell.cwd)
        except OSError as exc:
            ctx.err(f"rm: {path}: {exc.strerror}\n")
            status = 1
            continue
        if not host.exists():
            if "f" not in flags:
                status = _enoent(ctx, "rm", path)
        elif host.is_dir():
            if "r" in flags or "R" in flags:
                shutil.rmtree(host)
            else:
                ctx.err(f"rm: {path}: Is a directory\n")
                status = 1
        else:
            host.unlink()
    return status


@command("mkdir")
async def mkdir(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.argv)
    status = 0
    for path in paths:
        host = ctx.fs.resolve(path, ctx.shell.cwd)
        try:
            ctx.fs.check_writable(path, ctx.shell.cwd)
            host.mkdir(parents="p" in flags, exist_ok="p" in flags)
        except FileExistsError:
            ctx.err(f"mkdir: '{path}': File exists\n")
            status = 1
        except OSError as exc:
            ctx.err(f"mkdir: '{path}': {exc.strerror}\n")
            status = 1
    return status


@command("touch")
async def touch(ctx: Ctx) -> int:
    _, paths = _split_flags(ctx.argv)
    for path in paths:
        try:
            ctx.fs.check_writable(path, ctx.shell.cwd)
            ctx.fs.resolve(path, ctx.shell.cwd).touch()
        except OSError as exc:
            ctx.err(f"touch: '{path}': {exc.strerror}\n")
            return 1
    return 0


@command("mv", "cp")
async def mv_cp(ctx: Ctx) -> int:
    tool = ctx.argv[0].rsplit("/", 1)[-1]
    flags, paths = _split_flags(ctx.argv)
    if len(paths) != 2:
        ctx.err(f"{tool}: Needs 2 arguments\n")
        return 1
    src, dst = (ctx.fs.resolve(p, ctx.shell.cwd) for p in paths)
    if not src.exists():
        return _enoent(ctx, tool, paths[0])
    if dst.is_dir():
        dst = dst / src.name
    if tool == "mv":
        os.replace(src, dst)
    elif src.is_dir():
        if "r" not in flags and "R" not in flags and "a" not in flags:
            ctx.err(f"cp: Skipped dir '{paths[0]}'\n")
            return 1
        shutil.copytree(src, dst)
    else:
        shutil.copyfile(src, dst)
    return 0


@command("echo")
async def echo(ctx: Ctx) -> int:
    args, newline = ctx.argv[1:], True
    while args and args[0] in ("-n", "-e", "-ne", "-en"):
        newline = newline and "n" not in args[0]
        args = args[1:]
    ctx.out(" ".join(args) + ("\n" if newline else ""))
    return 0


@command("true", ":")
async def true(ctx: Ctx) -> int:
    return 0


@command("false")
async def false(ctx: Ctx) -> int:
    return 1


@command("sleep")
async def sleep(ctx: Ctx) -> int:
    try:
        await asyncio.sleep(float(ctx.argv[1]) if len(ctx.argv) > 1 else 0)
    except ValueError:
        ctx.err(f"sleep: invalid number '{ctx.argv[1]}'\n")
        return 1
    return 0


@command("exit")
async def exit_(ctx: Ctx) -> int:
    raise ExitShell(int(ctx.argv[1]) if len(ctx.argv) > 1 and ctx.argv[1].isdigit() else ctx.shell.status)


@command("cd")
async def cd(ctx: Ctx) -> int:
    target = ctx.argv[1] if len(ctx.argv) > 1 else "/"
    if not ctx.fs.resolve(target, ctx.shell.cwd).is_dir():
        ctx.err(f"/system/bin/sh: cd: {target}: No such file or directory\n")
        return 2
    ctx.shell.cwd = ctx.path(target)
    return 0


@command("pwd")
async def pwd(ctx: Ctx) -> int:
    ctx.out(ctx.shell.cwd + "\n")
    return 0


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
