"""The host's APK reader against APKs made by the real Android tool (aapt2) and Debian's framework-res."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from nnlite_tui.core.devices.apk import ApkError, read_apk_info

FRAMEWORK_RES = Path("/usr/share/android-framework-res/framework-res.apk")
MANIFEST = """<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="org.nnlite.bench">
  <application android:label="NNLite bench">
    <activity android:name=".BenchActivity" android:exported="true"/>
  </application>
</manifest>
"""
needs_aapt2 = pytest.mark.skipif(
    shutil.which("aapt2") is None or not FRAMEWORK_RES.is_file(),
    reason="needs aapt2 and Debian's android-framework-res (apt-get install aapt android-framework-res)",
)


@needs_aapt2
def test_reads_what_aapt2_links(tmp_path):
    (tmp_path / "AndroidManifest.xml").write_text(MANIFEST)
    apk = tmp_path / "app.apk"
    subprocess.run(["aapt2", "link", "--manifest", str(tmp_path / "AndroidManifest.xml"), "-I", str(FRAMEWORK_RES),
                    "--version-code", "7", "--version-name", "0.7.1", "-o", str(apk)], check=True, timeout=120)
    info = read_apk_info(str(apk))
    assert (info.package, info.version_code, info.version_name) == ("org.nnlite.bench", 7, "0.7.1")


@needs_aapt2
def test_reads_the_framework_resources_apk():
    info = read_apk_info(str(FRAMEWORK_RES))
    assert info.package == "android" and info.version_code > 0


def test_not_an_apk(tmp_path):
    junk = tmp_path / "x.apk"
    junk.write_bytes(b"PK not really")
    with pytest.raises(ApkError, match="not a zip archive"):
        read_apk_info(str(junk))
