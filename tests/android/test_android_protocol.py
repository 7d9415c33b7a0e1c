"""PROTOCOL.md, the app's Kotlin core, its build files and Python's benchmark say the same thing."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

from nnlite_tui.core.bench import BACKENDS, HOST_ONLY_SETTINGS, BenchSettings

ANDROID_APP = Path(__file__).resolve().parents[2] / "android-app"
PROTOCOL_MD = (ANDROID_APP / "PROTOCOL.md").read_text()


def extras_table() -> dict[str, tuple[str, str, str]]:
    rows = re.findall(r"^\| `(\w+)` \| `(--e\w)` \| (\w+) \| ([^|]+?) \|", PROTOCOL_MD, re.M)
    return {name: (flag, kind, default) for name, flag, kind, default in rows}


def test_documented_extras_are_the_ones_the_core_parses(core_out):
    core = json.loads((core_out / "protocol.json").read_text())
    table = extras_table()
    assert sorted(table) == core["extras"]
    assert sorted(n for n, (_, _, d) in table.items() if d == "required") == sorted(core["required_extras"])


def test_documented_defaults_equal_the_core_and_python(core_out):
    core = json.loads((core_out / "protocol.json").read_text())["defaults"]
    python = {k: v for k, v in asdict(BenchSettings()).items() if k not in HOST_ONLY_SETTINGS}
    assert core == python
    every = asdict(BenchSettings())  # the profile extras' defaults too (section 9e)
    for name, (_, kind, default) in extras_table().items():
        if default == "required":
            continue
        value = None if default == "none" else {"integer": int, "number": float, "string": str,
                                                "boolean": lambda t: {"true": True, "false": False}[t]}[kind](default)
        assert value == every[name], name


def test_backends_stages_and_versions_agree(core_out, report_schema):
    core = json.loads((core_out / "protocol.json").read_text())
    assert set(BACKENDS) <= set(core["backends"])
    assert set(core["backends"]) == set(report_schema["then"]["properties"]["backend_used"]["enum"])
    assert core["stages"] == report_schema["else"]["properties"]["error_stage"]["enum"]
    for stage in core["stages"]:
        assert f"| `{stage}` |" in PROTOCOL_MD, stage
    for backend, chain in core["fallback"].items():
        assert re.search(rf"^\| `{backend}` \|.*\| {', '.join(chain)} \|$", PROTOCOL_MD, re.M), backend
    assert core["protocol_version"] == max(report_schema["properties"]["protocol_version"]["enum"]) == 2
    assert report_schema["properties"]["protocol_version"]["enum"] == [1, 2]  # the host still reads protocol 1


def test_build_files_match_the_protocol(core_out):
    core = json.loads((core_out / "protocol.json").read_text())
    gradle = (ANDROID_APP / "app" / "build.gradle.kts").read_text()
    assert 'applicationId = "org.nnlite.bench"' in gradle
    assert 'namespace = "org.nnlite.bench"' in gradle
    assert "versionCode = 2\n" in gradle
    assert f'versionName = "{core["app_version"]}"' in gradle
    assert int(re.search(r"minSdk = (\d+)", gradle).group(1)) >= 24
    manifest = (ANDROID_APP / "app" / "src" / "main" / "AndroidManifest.xml").read_text()
    assert 'android:name=".BenchActivity"' in manifest and 'android:exported="true"' in manifest
    assert "android.permission.WAKE_LOCK" in manifest
    app_sources = "".join(p.read_text() for p in (ANDROID_APP / "app" / "src").rglob("*.kt"))
    assert 'const val TAG = "NNLiteBench"' in app_sources
    assert "PARTIAL_WAKE_LOCK" in app_sources and "Build.SOC_MODEL" in app_sources
    for call in ("getExternalFilesDir(null)", "lastNativeInferenceDurationNanoseconds", "currentThermalStatus",
                 "getThermalHeadroom", "setSustainedPerformanceMode(true)", "setShowWhenLocked(true)",
                 "setTurnScreenOn(true)", "/proc/self/status", "Debug.getNativeHeapSize()"):
        assert call in app_sources, call
    assert not re.search(r"\bTODO\b|NotImplementedError", app_sources)


def test_the_core_has_no_android_imports():
    for path in (ANDROID_APP / "core" / "src" / "main").rglob("*.kt"):
        imports = re.findall(r"^import ([\w.]+)", path.read_text(), re.M)
        assert not [i for i in imports if i.startswith(("android.", "androidx.", "org.tensorflow."))], path
