"""A run whose disk fills up: it pauses with an event, goes on by itself when space returns, or stops
cleanly at its deadline; never idles silently. On a real full filesystem (a small tmpfs; needs root)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nnlite_tui.exit_codes import ExitCode
from tests.conftest import FIXTURES
from tests.core.test_cli_faults import FAST

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


class Lines:
    """A process's merged output, read in a thread, waited on by content."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.text = proc, ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.text += line

    def wait_for(self, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text:
            assert time.monotonic() < deadline and self.proc.poll() is None or needle in self.text, \
                f"no {needle!r} in:\n{self.text}"
            time.sleep(0.1)


def start_run(out: Path, *extra: str, env: dict) -> tuple[subprocess.Popen, Lines]:
    proc = subprocess.Popen([sys.executable, "-m", "nnlite_tui", "run", str(FIXTURES / "good_models"),
                             "--out", str(out), *FAST, *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    return proc, Lines(proc)


def fill(mount: Path) -> Path:
    filler = mount / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass  # full: what the test wants
    return filler


def test_a_full_disk_pauses_the_run_which_goes_on_when_space_returns(small_disk):
    out = small_disk / "run"
    proc, lines = start_run(out, "--min-free-gb", "0", env={"NNLITE_DISK_WAIT_S": "300"})
    try:
        lines.wait_for("Starting run", 60)
        filler = fill(small_disk)
        lines.wait_for("disk-full", 240)
        assert "goes on by itself" in lines.text and "Traceback" not in lines.text
        filler.unlink()
        assert proc.wait(timeout=240) == 0, lines.text
    finally:
        proc.kill()
    time.sleep(0.2)
    assert "disk-ok" in lines.text and "done 2" in lines.text, lines.text
    assert len(list((out / "reports").glob("*.json"))) == 2


def test_the_default_free_space_wait_has_a_deadline_and_a_hint(small_disk):
    proc, lines = start_run(small_disk / "run", env={"NNLITE_DISK_WAIT_S": "2"})
    try:
        assert proc.wait(timeout=120) == ExitCode.STOPPED
    finally:
        proc.kill()
    time.sleep(0.2)
    assert "disk-low" in lines.text and "--min-free-gb" in lines.text and "at most 2 s" in lines.text
    assert "disk-wait-expired" in lines.text and "Resume with the same command" in lines.text
    assert "Traceback" not in lines.text
