"""PROTOCOL.md, the app's Kotlin core, its build files and Python's benchmark say the same thing."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

from nnlite_tui.core.bench.settings import BACKENDS, ENERGY_SETTINGS, HOST_ONLY_SETTINGS, BenchSettings
from nnlite_tui.core.runtimes import DEFAULT_RUNTIME

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
    # ExecuTorch's inputs come from the artifact, as the model path does: required for that runtime only.
    assert sorted(n for n, (_, _, d) in table.items() if d.startswith("required (")) == ["input_shapes"]


def test_documented_defaults_equal_the_core_and_python(core_out):
    protocol = json.loads((core_out / "protocol.json").read_text())
    core = protocol["defaults"]
    python = {k: v for k, v in asdict(BenchSettings()).items() if k not in HOST_ONLY_SETTINGS + ENERGY_SETTINGS}
    assert core == python
    # The runtime is a unit's (its artifact's), not a setting of the run; energy's are plain settings.
    every = {**asdict(BenchSettings()), "runtime": DEFAULT_RUNTIME}  # the profile extras' defaults too (9e)
    assert protocol["runtime_defaults"] == {k: every[k] for k in ("runtime", *ENERGY_SETTINGS)}
    for name, (_, kind, default) in extras_table().items():
        if default.startswith("required") or name in ("input_dtypes", "input_ranges"):  # per artifact, not a setting
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
    assert core["protocol_version"] == max(report_schema["properties"]["protocol_version"]["enum"]) == 3
    assert report_schema["properties"]["protocol_version"]["enum"] == [1, 2, 3]  # the host still reads 1 and 2
    assert sorted(core["runtimes"]) == sorted(report_schema["then"]["properties"]["runtime"]["enum"])
    for runtime, facts in core["runtimes"].items():
        assert re.search(rf"^\| `{runtime}` \| {', '.join(f'`{b}`' for b in facts['backends'])} \| `{facts['wall_clock']}` \|",
                         PROTOCOL_MD, re.M), runtime
    energy = core["energy"]
    assert energy["reason_codes"] == report_schema["$defs"]["energy_block"]["properties"]["reason_codes"]["items"]["enum"]
    for code in energy["reason_codes"]:
        assert f"| `{code}` |" in PROTOCOL_MD, code


def test_build_files_match_the_protocol(core_out):
    core = json.loads((core_out / "protocol.json").read_text())
    gradle = (ANDROID_APP / "app" / "build.gradle.kts").read_text()
    assert 'applicationId = "org.nnlite.bench"' in gradle
    assert 'namespace = "org.nnlite.bench"' in gradle
    assert "versionCode = 3\n" in gradle
    assert f'versionName = "{core["app_version"]}"' in gradle
    # ExecuTorch's native library is built for API 26, so the app cannot promise less.
    assert int(re.search(r"minSdk = (\d+)", gradle).group(1)) >= 26
    manifest = (ANDROID_APP / "app" / "src" / "main" / "AndroidManifest.xml").read_text()
    assert 'android:name=".BenchActivity"' in manifest and 'android:exported="true"' in manifest
    assert "android.permission.WAKE_LOCK" in manifest
    app_sources = "".join(p.read_text() for p in (ANDROID_APP / "app" / "src").rglob("*.kt"))
    assert 'const val TAG = "NNLiteBench"' in app_sources
    assert "PARTIAL_WAKE_LOCK" in app_sources and "Build.SOC_MODEL" in app_sources
    for call in ("getExternalFilesDir(null)", "lastNativeInferenceDurationNanoseconds", "currentThermalStatus",
                 "getThermalHeadroom", "setSustainedPerformanceMode(true)", "setShowWhenLocked(true)",
                 "setTurnScreenOn(true)", "/proc/self/status", "Debug.getNativeHeapSize()",
                 "Module.load(modelPath, Module.LOAD_MODE_MMAP, threads)", "loadMethod(METHOD)", "getMethodMetadata(METHOD)",
                 ".forward(*inputs)", "EValue.from(", "Tensor.fromBlob(", "getIntProperty(",
                 "BATTERY_PROPERTY_CURRENT_NOW", "BATTERY_PROPERTY_CHARGE_COUNTER", "Intent.ACTION_BATTERY_CHANGED",
                 "/sys/class/power_supply/battery"):
        assert call in app_sources, call
    assert not re.search(r"\bTODO\b|NotImplementedError", app_sources)


def test_the_core_has_no_android_imports():
    for path in (ANDROID_APP / "core" / "src" / "main").rglob("*.kt"):
        imports = re.findall(r"^import ([\w.]+)", path.read_text(), re.M)
        assert not [i for i in imports if i.startswith(("android.", "androidx.", "org.tensorflow."))], path


def test_runtime_versions_agree_in_the_build_the_app_and_the_fixtures(core_out):
    """The version a report gives for each runtime is the one the APK packages."""
    core = json.loads((core_out / "protocol.json").read_text())["runtimes"]
    toml = (ANDROID_APP / "gradle" / "libs.versions.toml").read_text()
    app = (ANDROID_APP / "app" / "src" / "main" / "kotlin" / "org" / "nnlite" / "bench" / "AppRuntimes.kt").read_text()
    for runtime in ("litert", "executorch"):
        gradle = re.search(rf'^{runtime} = "([^"]+)"', toml, re.M).group(1)
        assert re.search(rf'const val {runtime.upper()}_VERSION = "{re.escape(gradle)}"', app), runtime
        assert core[runtime]["version"] == gradle, runtime
    assert 'implementation(libs.executorch.android)' in (ANDROID_APP / "app" / "build.gradle.kts").read_text()
    assert 'module = "org.pytorch:executorch-android"' in toml
