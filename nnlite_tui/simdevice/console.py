"""The emulator console on port-1 (what `adb -s emulator-N emu <cmd>` talks to), minimal.

adb writes `[auth <token>\\n]<cmd>\\nquit\\n` and prints what follows the second OK (the
greeting's, then auth's). Supported: `avd name`, `kill` (stops the simulator like the emulator exits),
`auth` (accepted: the sim does not require a token), `ping`, `help`, `quit`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

log = logging.getLogger(__name__)
GREETING = (b"Android Console: Authentication required\r\nAndroid Console: type 'auth <auth_token>' to "
            b"authenticate\r\nAndroid Console: you can find your <auth_token> in\r\n"
            b"'~/.emulator_console_auth_token'\r\nOK\r\n")
WELCOME = b"Android Console: type 'help' for a list of commands\r\nOK\r\n"


async def start_console(device: "SimDevice", port: int) -> asyncio.AbstractServer | None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GREETING)
        authed = False
        try:
            while line := await reader.readline():
                cmd = line.decode("utf-8", "replace").strip()
                if not authed:
                    # Any token is accepted. adb sends no auth line when it finds no token file;
                    # answering as if it had keeps its "skip two OKs" parsing right either way.
                    authed = True
                    writer.write(WELCOME)
                    if cmd.startswith("auth"):
                        continue
                if cmd == "quit" or cmd == "exit":
                    break
                if cmd.startswith("auth") or cmd == "ping":
                    writer.write(b"OK\r\n" if cmd.startswith("auth") else b"I am alive!\r\nOK\r\n")
                elif cmd == "avd name":
                    writer.write(f"{device.avd_name}\r\nOK\r\n".encode())
                elif cmd == "kill":
                    writer.write(b"OK: killing emulator, bye bye\r\n")
                    await writer.drain()
                    device.loop.call_later(0.05, device.request_stop, "killed via the emulator console")
                    break
                elif cmd == "help":
                    writer.write(b"Android console commands:\r\n    avd name\r\n    kill\r\n    ping\r\nOK\r\n")
                else:
                    writer.write(b"KO: unknown command, try 'help'\r\n")
                await writer.drain()
        except ConnectionError:
            pass  # the client hung up first; nothing left to answer
        finally:
            writer.close()

    try:
        return await asyncio.start_server(handle, "127.0.0.1", port)
    except OSError as exc:
        log.info("console port %d unavailable (%s); `adb emu` will not reach this device", port, exc)
        return None
