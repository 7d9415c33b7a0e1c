"""Nothing a model controls reaches a terminal unfiltered: a model whose file name holds an escape
sequence and whose error message holds OSC/CSI/C1 sequences, a bell and a bidi override, run by
`nnlite run --headless` and then looked at with `nnlite status`: no ESC, BEL, C1 control or bidi
override reaches stdout or stderr, while the report keeps the message as the model raised it."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from nnlite_tui.core.results import load_reports
from tests.security.limits_helpers import HOSTILE, QUICK, models, nnlite

EVIL_NAME = "evil\x1b]0;pwned\x07\x1b[2J"
# ESC, BEL, CR (no line of ours is redrawn when stdout is not a terminal), C1 controls, bidi controls.
UNSAFE = re.compile("[\x1b\x07\r\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def _unsafe(raw: bytes) -> list[str]:
    return sorted({repr(ch) for ch in UNSAFE.findall(raw.decode("utf-8", "replace"))})


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("terminal")
    folder = models(tmp / "m", ["escapes_in_error"])
    shutil.copy(HOSTILE / "escapes_in_error.py", folder / f"{EVIL_NAME}.py")
    run = tmp / "run"
    ran = nnlite(["run", str(folder), "--out", str(run), *QUICK])
    status = nnlite(["status", str(run)])
    return {"run": run, "ran": ran, "status": status}


def test_the_run_reached_the_models(shown):
    assert shown["ran"].returncode == 0, shown["ran"].stderr[-2000:]
    names = {r["model_name"] for r in load_reports(shown["run"])}
    assert names == {"escapes_in_error", EVIL_NAME}


@pytest.mark.parametrize("command", ["ran", "status"])
def test_no_control_sequence_reaches_the_terminal(shown, command):
    proc = shown[command]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _unsafe(proc.stdout) == [] and _unsafe(proc.stderr) == []
    # ...and what was there is still shown, as visible escapes.
    assert "look here\\x1b]0;pwned\\x07" in proc.stdout.decode()
    assert "evil\\x1b]0;pwned\\x07" in proc.stdout.decode()


def test_the_report_keeps_the_message_as_raised(shown):
    report = next(r for r in load_reports(shown["run"]) if r["model_name"] == "escapes_in_error")
    assert "\x1b]0;pwned\x07\x1b[2J" in report["conversion"]["error_message"]
    text = next((shown["run"] / "reports").glob("escapes_in_error*.json")).read_text()
    assert "\x1b" not in text and "\\u001b]0;pwned" in text  # JSON's own escape on disk
    json.loads(text)
