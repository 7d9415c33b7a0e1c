"""File tools and shell builtins: ls, cat, rm, mkdir, touch, mv, cp, echo, true, false, sleep, exit,
cd, pwd."""

from __future__ import annotations

import asyncio
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


@command("chmod")
async def chmod(ctx: Ctx) -> int:
    flags, args = _split_flags(ctx.argv)
    if len(args) < 2 or not all(c in "01234567" for c in args[0]):
        ctx.err("chmod: only octal modes are simulated: chmod [-R] MODE FILE...\n")
        return 1
    mode, status = int(args[0], 8), 0
    for path in args[1:]:
        host = ctx.fs.resolve(path, ctx.shell.cwd)
        if not host.exists():
            ctx.err(f"chmod: {path}: No such file or directory\n")
            status = 1
            continue
        targets = [host] + (list(host.rglob("*")) if "R" in flags and host.is_dir() else [])
        for target in targets:
            target.chmod(mode)
    return status


@command("chown", "chgrp", "restorecon", "sync")
async def no_op(ctx: Ctx) -> int:
    return 0
