"""The simulated package manager: installed packages, installs from APK bytes, their failures."""

from __future__ import annotations

import base64
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nnlite_tui.simdevice.apk import ApkError, read_apk

if TYPE_CHECKING:
    from nnlite_tui.simdevice.device import SimDevice

SYSTEM_PACKAGES = ("android", "com.android.shell", "com.android.settings", "com.android.systemui",
                   "com.android.providers.settings", "com.google.android.gms")


@dataclass
class Package:
    name: str
    path: str
    version_code: int = 0
    version_name: str | None = None
    activities: list[str] = field(default_factory=list)
    system: bool = False
    first_install: float = field(default_factory=time.time)
    last_update: float = field(default_factory=time.time)

    def dumpsys(self) -> str:
        def fmt(t: float) -> str:
            return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
        flags = "SYSTEM HAS_CODE" if self.system else "HAS_CODE ALLOW_CLEAR_USER_DATA"
        return (f"Packages:\n  Package [{self.name}] (5f3a2b1):\n    userId=10{abs(hash(self.name)) % 1000:03d}\n"
                f"    pkg=Package{{5f3a2b1 {self.name}}}\n    codePath={os.path.dirname(self.path)}\n"
                f"    versionCode={self.version_code} minSdk=26 targetSdk=34\n"
                f"    versionName={self.version_name or 'null'}\n    pkgFlags=[ {flags} ]\n"
                f"    timeStamp={fmt(self.last_update)}\n    firstInstallTime={fmt(self.first_install)}\n"
                f"    lastUpdateTime={fmt(self.last_update)}\n"
                f"    signatures=PackageSignatures{{9d1c3e2 version:2, signatures:[2f5b1c7a], past signatures:[]}}\n")


class InstallFailure(Exception):
    def __init__(self, code: str, detail: str = ""):
        self.code, self.detail = code, detail
        super().__init__(f"Failure [{code}{': ' + detail if detail else ''}]")


class PackageManager:
    def __init__(self, device: "SimDevice"):
        self.device = device
        self.packages: dict[str, Package] = {
            name: Package(name, f"/system/app/{name}/{name}.apk", 34, "14", system=True)
            for name in SYSTEM_PACKAGES}

    def get(self, name: str) -> Package | None:
        return self.packages.get(name)

    def install(self, data: bytes, flags: list[str]) -> Package:
        """Install APK bytes; raise InstallFailure with a real INSTALL_ code on failure."""
        faults = self.device.faults
        if faults.install_fail:
            raise InstallFailure(faults.install_fail)
        return self.preinstall(data, flags)

    def preinstall(self, data: bytes, flags: list[str] = ()) -> Package:
        """Install as part of the device's image: install faults do not apply."""
        session = f"/data/app/vmdl{int(time.time() * 1000) % 1_000_000_000}.tmp/base.apk"
        try:
            manifest = read_apk(data)
        except ApkError as exc:
            text = str(exc)
            if text.startswith("NO_CERTIFICATES"):
                raise InstallFailure("INSTALL_PARSE_FAILED_NO_CERTIFICATES",
                                     f"Failed collecting certificates for {session}: {text[17:]}") from exc
            raise InstallFailure("INSTALL_PARSE_FAILED_NOT_APK", f"Failed to parse {session}: {text}") from exc
        old = self.packages.get(manifest.package)
        if old is not None and old.version_code > manifest.version_code and "-d" not in list(flags):
            raise InstallFailure("INSTALL_FAILED_VERSION_DOWNGRADE",
                                 f"Downgrade detected: Update version code {manifest.version_code} is older "
                                 f"than current {old.version_code}")
        token = base64.urlsafe_b64encode(os.urandom(12)).decode()
        path = f"/data/app/~~{token[:8]}==/{manifest.package}-{token[8:]}==/base.apk"
        host = self.device.fs.resolve(path)
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(data)
        if old is not None and not old.system:
            old_host = self.device.fs.resolve(old.path)
            old_host.unlink(missing_ok=True)
        pkg = Package(manifest.package, path, manifest.version_code, manifest.version_name,
                      manifest.activities, first_install=old.first_install if old else time.time())
        self.packages[pkg.name] = pkg
        self.device.log("PackageManager", "I", f"installed {pkg.name} versionCode={pkg.version_code}")
        return pkg

    def uninstall(self, name: str) -> bool:
        pkg = self.packages.get(name)
        if pkg is None or pkg.system:
            return False
        self.device.app.force_stop(name)
        del self.packages[name]
        self.device.fs.resolve(pkg.path).unlink(missing_ok=True)
        return True
