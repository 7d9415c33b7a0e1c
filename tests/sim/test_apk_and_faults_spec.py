"""APK manifests (binary AXML) and the --faults spec."""

from __future__ import annotations

import shutil
import subprocess
import zipfile

import pytest

from nnlite_tui.simdevice.apk import ApkError, build_manifest, build_test_apk, parse_axml, read_apk
from nnlite_tui.simdevice.faults import FaultSpec


def test_manifest_round_trip(tmp_path):
    apk = build_test_apk(str(tmp_path / "a.apk"), "com.example.x", 42, "4.2", (".Main", "com.other.Second"))
    m = read_apk(open(apk, "rb").read())
    assert (m.package, m.version_code, m.version_name) == ("com.example.x", 42, "4.2")
    assert m.activities == ["com.example.x.Main", "com.other.Second"]


@pytest.mark.skipif(shutil.which("aapt") is None, reason="Debian's aapt not installed (apt-get install aapt)")
def test_aapt_reads_our_manifest(test_apk):
    out = subprocess.run(["aapt", "dump", "badging", str(test_apk)], capture_output=True, text=True).stdout
    assert "package: name='org.nnlite.bench' versionCode='1' versionName='0.1.0'" in out
    assert "launchable-activity: name='org.nnlite.bench.BenchActivity'" in out


def test_not_an_apk(tmp_path):
    with pytest.raises(ApkError, match="not a zip"):
        read_apk(b"hello")
    path = tmp_path / "unsigned.apk"
    build_test_apk(str(path), signed=False)
    with pytest.raises(ApkError, match="NO_CERTIFICATES"):
        read_apk(path.read_bytes())
    with zipfile.ZipFile(tmp_path / "nomanifest.apk", "w") as zf:
        zf.writestr("classes.dex", b"x")
    with pytest.raises(ApkError, match="AndroidManifest.xml not found"):
        read_apk((tmp_path / "nomanifest.apk").read_bytes())
    with pytest.raises(ApkError):
        parse_axml(build_manifest("p.q", 1, "1", [])[:40])


def test_bad_apks_fail_install_like_android(sim_device, adb_server, tmp_path):
    unsigned = build_test_apk(str(tmp_path / "unsigned.apk"), signed=False)
    out = adb_server.run("-s", sim_device.serial, "install", unsigned)
    assert out.returncode == 1 and "INSTALL_PARSE_FAILED_NO_CERTIFICATES" in out.stderr + out.stdout
    newer = build_test_apk(str(tmp_path / "v2.apk"), version_code=2)
    older = build_test_apk(str(tmp_path / "v1.apk"), version_code=1)
    assert adb_server.run("-s", sim_device.serial, "install", newer).returncode == 0
    out = adb_server.run("-s", sim_device.serial, "install", older)
    assert "INSTALL_FAILED_VERSION_DOWNGRADE" in out.stderr + out.stdout


def test_fault_spec_parsing():
    spec = FaultSpec.parse("drop_after=5s,drop_for=500ms,hang_shell=am start|pm install,"
                           "install_fail=INSTALL_FAILED_INSUFFICIENT_STORAGE,app_crash=2,truncated_report=1,"
                           "reboot_after=60,offline_after=1.5s,offline_for=3s")
    assert (spec.drop_after, spec.drop_for, spec.reboot_after, spec.offline_after, spec.offline_for) == \
        (5.0, 0.5, 60.0, 1.5, 3.0)
    assert spec.hang_shell == ["am start", "pm install"]
    assert (spec.install_fail, spec.app_crash, spec.truncated_report) == ("INSTALL_FAILED_INSUFFICIENT_STORAGE", 2, 1)
    assert FaultSpec.parse("") == FaultSpec()
    for bad in ("nonsense=1", "drop_after", "install_fail=NOPE", "app_crash=x", "drop_after=soon"):
        with pytest.raises(ValueError):
            FaultSpec.parse(bad)
