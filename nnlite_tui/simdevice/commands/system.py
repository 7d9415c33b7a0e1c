"""System tools: getprop, setprop, id, whoami, uname, date, sh -c, reboot, logcat, dumpsys, settings."""

from __future__ import annotations

import asyncio
import time

from nnlite_tui.simdevice.commands import command
from nnlite_tui.simdevice.interp import Ctx, Shell

READONLY_PREFIX = "ro."


@command("getprop")
async def getprop(ctx: Ctx) -> int:
    props = ctx.device.props
    if len(ctx.argv) == 1:
        for key in sorted(props):
            ctx.out(f"[{key}]: [{props[key]}]\n")
        return 0
    default = ctx.argv[2] if len(ctx.argv) > 2 else ""
    ctx.out(props.get(ctx.argv[1], default) + "\n")
    return 0


@command("setprop")
async def setprop(ctx: Ctx) -> int:
    if len(ctx.argv) != 3:
        ctx.err("setprop: Need 2 arguments\n")
        return 1
    key, value = ctx.argv[1], ctx.argv[2]
    if key.startswith(READONLY_PREFIX) and key in ctx.device.props:
        ctx.err(f"Failed to set property '{key}' to '{value}'.\n"
                "See dmesg for error reason.\n")
        return 1
    ctx.device.props[key] = value
    return 0


@command("id")
async def id_(ctx: Ctx) -> int:
    ctx.out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),"
            "1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet) "
            "context=u:r:shell:s0\n")
    return 0


@command("whoami")
async def whoami(ctx: Ctx) -> int:
    ctx.out("shell\n")
    return 0


@command("uname")
async def uname(ctx: Ctx) -> int:
    machine = "aarch64" if ctx.device.profile.arch == "arm64" else "x86_64"
    if "-m" in ctx.argv:
        ctx.out(machine + "\n")
    elif "-a" in ctx.argv:
        ctx.out(f"Linux localhost 6.1.23-android14-4 #1 SMP PREEMPT {machine} Toybox\n")
    else:
        ctx.out("Linux\n")
    return 0


@command("date")
async def date(ctx: Ctx) -> int:
    if "+%s" in ctx.argv:
        ctx.out(f"{int(time.time())}\n")
    else:
        ctx.out(time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime()) + "\n")
    return 0


@command("sh")
async def sh(ctx: Ctx) -> int:
    if len(ctx.argv) >= 3 and ctx.argv[1] == "-c":
        return await Shell(ctx.device, stdin_stream=ctx.shell.stdin_stream).run(ctx.argv[2], ctx.sink, ctx.stdin)
    ctx.err("sh: interactive sub-shells are not simulated\n")
    return 2


@command("reboot")
async def reboot(ctx: Ctx) -> int:
    ctx.device.schedule_reboot(0.2)
    await asyncio.sleep(3600)  # the transport drops before this returns, as on a real device
    return 0


@command("logcat")
async def logcat(ctx: Ctx) -> int:
    args = ctx.argv[1:]
    if "-c" in args or "--clear" in args:
        ctx.device.logcat_lines.clear()
        return 0
    tags: set[str] = set()
    for i, a in enumerate(args):
        if a == "-s":
            tags.update(t.split(":")[0] for t in args[i + 1:] if not t.startswith("-"))
    sent = 0
    while True:
        lines = ctx.device.logcat_lines
        for tag, line in lines[sent:]:
            if not tags or tag in tags:
                ctx.out(line + "\n")
        sent = len(lines)
        if "-d" in args:
            return 0
        await asyncio.sleep(0.2)


@command("dumpsys")
async def dumpsys(ctx: Ctx) -> int:
    service = ctx.argv[1] if len(ctx.argv) > 1 else ""
    if service == "battery":
        ctx.out(ctx.device.hardware.battery())
    elif service == "package" and len(ctx.argv) > 2:
        pkg = ctx.device.packages.get(ctx.argv[2])
        if pkg is not None:
            ctx.out(pkg.dumpsys())
    elif service == "meminfo":
        ctx.out(ctx.fs.read_bytes("/proc/meminfo"))
    elif service in ("activity", "window", "power", "display", "thermalservice", "cpuinfo"):
        ctx.out(f"DUMP OF SERVICE {service} (simulated: no details)\n")
    else:
        ctx.err(f"Can't find service: {service}\n")
        return 0
    return 0


@command("settings")
async def settings(ctx: Ctx) -> int:
    if len(ctx.argv) >= 4 and ctx.argv[1] == "get":
        ctx.out(ctx.device.settings.get((ctx.argv[2], ctx.argv[3]), "null") + "\n")
    elif len(ctx.argv) >= 5 and ctx.argv[1] == "put":
        ctx.device.settings[(ctx.argv[2], ctx.argv[3])] = ctx.argv[4]
    else:
        ctx.err("usage: settings [get|put] NAMESPACE KEY [VALUE]\n")
        return 1
    return 0


@command("nproc")
async def nproc(ctx: Ctx) -> int:
    ctx.out(f"{ctx.device.profile.cores}\n")
    return 0


@command("pidof")
async def pidof(ctx: Ctx) -> int:
    """The benchmark app is the only process the simulator models; it has pid 4321 while it runs."""
    from nnlite_tui.simdevice.app import PACKAGE

    if PACKAGE in ctx.argv[1:] and ctx.device.app.running:
        ctx.out("4321\n")
        return 0
    return 1


@command("df")
async def df(ctx: Ctx) -> int:
    ctx.out("Filesystem     1K-blocks    Used Available Use% Mounted on\n"
            "/dev/block/dm-5  6082144 2178456   3887304  36% /data\n"
            "/dev/fuse        6082144 2178456   3887304  36% /storage/emulated\n")
    return 0
