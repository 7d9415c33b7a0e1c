"""$ANDROID_ADB_SERVER_PORT, checked before adbutils reads it (adbutils parses it with int() at import)."""

from __future__ import annotations

import os

DEFAULT_PORT = 5037


class AdbPortError(ValueError):
    """$ANDROID_ADB_SERVER_PORT is not a TCP port: a usage error (the CLI exits 2 naming it)."""

    exit_code = 2


def server_port() -> int:
    text = os.environ.get("ANDROID_ADB_SERVER_PORT", str(DEFAULT_PORT))
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise AdbPortError(f"ANDROID_ADB_SERVER_PORT={text!r} is not a TCP port "
                           f"(1-65535; adb's default is {DEFAULT_PORT})")
    return port
