"""A stand-in for the Android SDK's `emulator` binary, at its boundary: `-list-avds` lists AVDs,
`-avd NAME -port P ...` serves a simulated device (`nnlite sim-device`) whose adb port is P+1 and
console port P, so it registers as emulator-P with the adb server, boots, and obeys `adb emu kill`.

install(sdk_dir, avds, boot_seconds) writes it as <sdk_dir>/emulator/emulator.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

SCRIPT = '''#!{python}
import os, sys
AVDS = {avds!r}
args = sys.argv[1:]
if "-list-avds" in args:
    print("\\n".join(AVDS))
    sys.exit(0)
avd = args[args.index("-avd") + 1] if "-avd" in args else None
if avd not in AVDS:
    print(f"PANIC: Unknown AVD name [{{avd}}], use -list-avds to see valid list.", file=sys.stderr)
    sys.exit(1)
port = int(args[args.index("-port") + 1]) if "-port" in args else 5554
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "argv.log"), "a") as f:
    f.write(" ".join(sys.argv) + "\\n")
os.execv(sys.executable, [sys.executable, "-m", "nnlite_tui", "sim-device", "--port", str(port + 1),
                          "--boot-seconds", "{boot}", "--serial-name", avd] + {extra!r})
'''


def install(sdk_dir: Path, avds: tuple[str, ...] = ("Pixel_API_34",), boot_seconds: float = 2.0,
            extra: tuple[str, ...] = ()) -> Path:
    path = Path(sdk_dir) / "emulator" / "emulator"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCRIPT.format(python=sys.executable, avds=list(avds), boot=boot_seconds, extra=list(extra)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


if __name__ == "__main__":
    print(install(Path(sys.argv[1]), tuple(sys.argv[2:]) or ("Pixel_API_34",),
                  float(os.environ.get("FAKE_BOOT_SECONDS", "2"))))
