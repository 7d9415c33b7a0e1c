"""Bad input, tried as a new user would: every case through the real CLI, in a subprocess.

Prints, per case, the exit code, the seconds it took and the first line of stderr (else stdout);
then how many printed a traceback or ran past the limit. Exits 1 if any did.

    python bench/bad_inputs.py            # all cases
    python bench/bad_inputs.py -k adb     # the cases whose name holds "adb"

A few cases need root (a read-only or full tmpfs); without it they are listed as not run.
"""

from __future__ import annotations

import argparse
import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
LIMIT_S = 60.0
FAST = ["--headless", "--runs", "5", "--min-seconds", "0", "--max-seconds", "1", "--warmup", "1",
        "--warmup-seconds", "0", "--rounds", "1"]


@dataclass
class Case:
    name: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    needs_root: bool = False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only the cases whose name holds this text")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nnlite-bad-") as tmp, Scene(Path(tmp)) as scene:
        cases = [c for c in scene.cases() if opts.k in c.name]
        bad = 0
        for case in cases:
            bad += run_case(case, scene)
        print(f"{len(cases)} cases; {bad} with a traceback or over {LIMIT_S:.0f} s")
    return 1 if bad else 0


def run_case(case: Case, scene: Scene) -> int:
    if case.needs_root and not scene.root:
        print(f"{case.name:<40} not run (needs root: a tmpfs)")
        return 0
    env = {**os.environ, "PYTHONPATH": str(REPO), "NNLITE_CACHE_DIR": str(scene.tmp / "cache"), **case.env}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "nnlite_tui", *case.args], capture_output=True, text=True,
                              timeout=LIMIT_S, env=env, stdin=subprocess.DEVNULL, cwd=scene.tmp)
    except subprocess.TimeoutExpired:
        print(f"{case.name:<40} HANG  over {LIMIT_S:.0f} s")
        return 1
    seconds = time.monotonic() - started
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    first = next((line.strip() for line in lines if line.strip().startswith(("error", "Error", "warning", "adb:"))),
                 lines[0] if lines else "")
    traceback = "Traceback" in done.stderr + done.stdout
    print(f"{case.name:<40} exit {done.returncode:>2} {seconds:6.2f}s  {'TRACEBACK ' if traceback else ''}"
          f"{first[:150]}")
    return int(traceback)


class Scene:
    """The files the cases need: a run with state, corrupt copies, bad model folders, listeners."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.root = os.geteuid() == 0 and shutil.which("mount") is not None
        self._mounts: list[Path] = []
        self._cleanup: list[Callable[[], None]] = []

    def __enter__(self) -> Scene:
        t = self.tmp
        run = t / "run"
        _python(f"from nnlite_tui.core.store import RunStore\nRunStore({str(run)!r}).close()")
        (run / "reports").mkdir()
        (run / "reports" / "m__host__xnnpack.json").write_text('{"model_name": "m"}')
        for name, state, report in (("corrupt_state", '{"meta": {', None), ("corrupt_report", None, "{bad")):
            shutil.copytree(run, t / name)
            if state is not None:
                (t / name / "state.json").write_text(state)
            if report is not None:
                (t / name / "reports" / "m__host__xnnpack.json").write_text(report)
        (t / "empty").mkdir()
        (t / "a_file").write_text("not a folder")
        (t / "model.txt").write_text("not python")
        (t / "no_net.py").write_text("import torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n")
        bad = t / "bad_entries"
        bad.mkdir()
        (bad / "dangling.py").symlink_to("nowhere.py")
        (bad / "loop.py").symlink_to("loop.py")
        (bad / "folder.py").mkdir()
        shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", os.fsencode(bad) + b"/caf\xe9.py")
        shutil.copy(FIXTURES / "good_models" / "tiny_conv.py", bad / ("n" * 200 + ".py"))
        tree = t / "lemur"
        shutil.copytree(FIXTURES / "lemur", tree)
        for transform in (tree / "ab" / "nn" / "transform").glob("*.py"):
            transform.write_text("def transform(:\n")
        (t / "calib_file").write_text("x")
        self.http_port = self._http_listener()
        self.free_port = _free_port()
        self._hold_lock(t / "locked")
        if self.root:
            self.read_only = self._tmpfs(t / "ro", "ro,size=1m")
            self.full = self._tmpfs(t / "full", "size=1m")
            _fill(self.full)
        return self

    def cases(self) -> list[Case]:
        t, good = self.tmp, str(FIXTURES / "good_models")
        out = str(t / "out")
        return [
            Case("run: missing source", ["run", str(t / "missing"), "--out", out]),
            Case("run: source is a .txt file", ["run", str(t / "model.txt"), "--out", out]),
            Case("run: --out is a file", ["run", good, "--out", str(t / "a_file"), *FAST]),
            Case("run: --limit 0", ["run", good, "--out", out, "--limit", "0"]),
            Case("run: --limit -1", ["run", good, "--out", out, "--limit", "-1"]),
            Case("run: --in-shape abc", ["run", good, "--out", out, "--in-shape", "abc"]),
            Case("run: --in-shape 0,3,32,32", ["run", good, "--out", out, "--in-shape", "0,3,32,32"]),
            Case("run: --in-shape 1,3,32", ["run", good, "--out", out, "--in-shape", "1,3,32"]),
            Case("run: --in-shape 1,3,16384,16384", ["run", good, "--out", out, "--in-shape", "1,3,16384,16384"]),
            Case("run: --num-classes 0", ["run", good, "--out", out, "--num-classes", "0"]),
            Case("run: --runtime bogus", ["run", good, "--out", out, "--runtime", "bogus"]),
            Case("run: --precision int3", ["run", good, "--out", out, "--precision", "int3"]),
            Case("run: --timeout abc", ["run", good, "--out", out, "--timeout", "abc"]),
            Case("run: --rounds 3 --max-rounds 1", ["run", good, "--out", out, "--rounds", "3", "--max-rounds", "1"]),
            Case("run: --energy-seconds 0", ["run", good, "--out", out, "--energy-seconds", "0"]),
            Case("run: --require- and --no-sandbox", ["run", good, "--out", out, "--require-sandbox", "--no-sandbox"]),
            Case("run: --calibration missing", ["run", good, "--out", out, "--calibration", str(t / "nocal")]),
            Case("run: --calibration is a file", ["run", good, "--out", out, "--calibration", str(t / "calib_file")]),
            Case("run: --cache-max-gb -1", ["run", good, "--out", out, "--cache-max-gb", "-1"]),
            Case("run: NNLITE_CACHE_MAX_GB=abc", ["run", good, "--out", out], {"NNLITE_CACHE_MAX_GB": "abc"}),
            Case("run: NNLITE_DISK_WAIT_S=abc", ["run", good, "--out", out, *FAST], {"NNLITE_DISK_WAIT_S": "abc"}),
            Case("run: bad factory name", ["run", "x.py:1bad", "--out", out]),
            Case("run: unknown module:factory", ["run", "no_such_module_x:make", "--out", out]),
            Case("run: file without Net", ["run", str(t / "no_net.py"), "--out", out]),
            Case("run: only bad entries", ["run", str(t / "bad_entries"), "--out", out, *FAST]),
            Case("run: unreadable LEMUR transforms", ["run", str(t / "lemur"), "--out", out, "--exclude", "*"]),
            Case("run: corrupt state.json", ["run", good, "--out", str(t / "corrupt_state"), *FAST]),
            Case("run: another process writes the run", ["run", good, "--out", str(t / "locked"), *FAST]),
            Case("run: read-only --out", ["run", good, "--out", str(t / "ro" / "run"), *FAST], needs_root=True),
            Case("run: --out on a full disk", ["run", good, "--out", str(t / "full" / "run"), *FAST],
                 needs_root=True),
            Case("convert: missing source", ["convert", str(t / "missing"), "--out", out]),
            Case("status: corrupt state.json", ["status", str(t / "corrupt_state")]),
            Case("status: not a run directory", ["status", str(t / "empty")]),
            Case("status: missing directory", ["status", str(t / "missing")]),
            Case("status: corrupt report", ["status", str(t / "corrupt_report")]),
            Case("report: corrupt state.json", ["report", str(t / "corrupt_state")]),
            Case("report --format html: corrupt state", ["report", str(t / "corrupt_state"), "--format", "html"]),
            Case("report: corrupt report file", ["report", str(t / "corrupt_report")]),
            Case("report: not a run directory", ["report", str(t / "empty"), "--format", "html"]),
            Case("compare: a run with itself", ["compare", str(t / "run"), str(t / "run")]),
            Case("compare: one run only", ["compare", str(t / "run")]),
            Case("compare: missing run", ["compare", str(t / "run"), str(t / "missing")]),
            Case("devices: ANDROID_ADB_SERVER_PORT=abc", ["devices"], {"ANDROID_ADB_SERVER_PORT": "abc"}),
            Case("devices: ANDROID_ADB_SERVER_PORT=99999", ["devices"], {"ANDROID_ADB_SERVER_PORT": "99999"}),
            Case("devices: port is an HTTP server", ["devices"], {"ANDROID_ADB_SERVER_PORT": str(self.http_port)}),
            Case("run: --device on an HTTP port", ["run", good, "--out", out, "--device", "emulator-5554", *FAST],
                 {"ANDROID_ADB_SERVER_PORT": str(self.http_port)}),
            Case("emulator start: no SDK", ["emulator", "start", "Pixel_API_34"],
                 {"ANDROID_HOME": str(t / "nosdk"), "ANDROID_SDK_ROOT": str(t / "nosdk"), "PATH": "/usr/bin:/bin"}),
            Case("tui: not a run directory", ["tui", str(t / "empty")]),
            Case("cache prune: --max-gb abc", ["cache", "prune", "--max-gb", "abc"]),
            Case("unknown command", ["frobnicate"]),
        ]

    def __exit__(self, *exc) -> None:
        for undo in reversed(self._cleanup):
            undo()
        for mount in self._mounts:
            subprocess.run(["umount", "-l", str(mount)], check=False)

    def _tmpfs(self, mount: Path, options: str) -> Path:
        mount.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)]).returncode != 0:
            self.root = False
        else:
            self._mounts.append(mount)
        return mount

    def _http_listener(self) -> int:
        server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
        server.RequestHandlerClass.log_message = lambda *a: None
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._cleanup.append(server.shutdown)
        return server.server_port

    def _hold_lock(self, run: Path) -> None:
        holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from nnlite_tui.core.store import RunStore
            store = RunStore({str(run)!r})
            print("ready", flush=True)
            sys.stdin.read()
            """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)})
        holder.stdout.readline()

        def release() -> None:
            holder.stdin.close()
            holder.wait(timeout=30)

        self._cleanup.append(release)


def _python(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fill(mount: Path) -> None:
    with open(mount / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            return  # full, as wanted


if __name__ == "__main__":
    sys.exit(main())
