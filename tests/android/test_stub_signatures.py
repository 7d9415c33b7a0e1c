"""The API stubs the app is type-checked against match the real libraries at the pinned versions.

android-app/stubs/api-signatures.txt is the public API of the LiteRT and ExecuTorch classes the app
uses, extracted from the libraries' published sources by android-app/stubs/api_signatures.py (its
header says from where, and the command). Every member a stub declares must be in it, with the same
parameter and return types; and the list must be for the versions the Gradle build pins, so a pin
that changes without a new list fails here.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUBS = ROOT / "android-app" / "stubs"
sys.path.insert(0, str(STUBS))
import api_signatures  # noqa: E402

LIST = STUBS / "api-signatures.txt"


def _listed() -> tuple[dict[str, str], set[str]]:
    text = LIST.read_text(encoding="utf-8")
    pins = dict(p.split("=") for p in re.search(r"^# pins: (\S+)$", text, re.M).group(1).split(","))
    return pins, {line for line in text.splitlines() if line and not line.startswith("#")}


def not_in_real_api(stubs: Path) -> list[str]:
    _, real = _listed()
    return sorted(set(api_signatures.stub_signatures(stubs)) - real)


def test_every_stub_member_is_in_the_real_api():
    assert not_in_real_api(STUBS / "src") == []
    # the check covers the classes the app calls, not an empty set
    assert len(api_signatures.stub_signatures()) > 150


def test_a_changed_stub_fails_the_check(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(STUBS / "src", copy)
    module = copy / "org" / "pytorch" / "executorch" / "Module.kt"
    module.write_text(module.read_text().replace("fun loadMethod(methodName: String)", "fun loadMethod(methodName: String?)"))
    interpreter = copy / "org" / "tensorflow" / "lite" / "Interpreter.java"
    interpreter.write_text(interpreter.read_text().replace("public Long getLastNative", "public long getLastNative"))
    assert not_in_real_api(copy) == [
        "org.pytorch.executorch.Module fun loadMethod(String?): Unit",
        "org.tensorflow.lite.Interpreter fun getLastNativeInferenceDurationNanoseconds(): long",
    ]


def test_the_list_is_for_the_versions_the_build_pins():
    pins, _ = _listed()
    toml = (ROOT / "android-app" / "gradle" / "libs.versions.toml").read_text()
    for runtime in ("litert", "executorch"):
        pinned = re.search(rf'^{runtime} = "([^"]+)"', toml, re.M).group(1)
        assert pins[runtime] == pinned, (
            f"libs.versions.toml pins {runtime} {pinned} but api-signatures.txt is for {pins[runtime]}: "
            "remake the list from that version's sources (android-app/stubs/README.md)")


def test_the_app_s_executorch_is_the_one_the_host_installs():
    """A .pte runs on the runtime that exported it: the app packages the host's executorch version."""
    toml = (ROOT / "android-app" / "gradle" / "libs.versions.toml").read_text()
    app = re.search(r'^executorch = "([^"]+)"', toml, re.M).group(1)
    host = re.search(r"^executorch==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M).group(1)
    assert app == host
    assert f'executorch = ["executorch=={host}"]' in (ROOT / "pyproject.toml").read_text()
