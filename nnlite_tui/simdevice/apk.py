"""APK files, just enough of them: read the binary AndroidManifest.xml (AXML) of an APK, and write
a tiny APK for tests.

AXML is a chunked format: a RES_XML chunk holding a string pool, a resource-id map for the
attribute names, then start/end namespace and element chunks whose attributes reference the pool.
Only the manifest's package, versionCode, versionName and activities are needed by the simulator.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass, field
from typing import IO

from nnlite_tui.core.devices.apk import ApkError, iter_elements

ANDROID_NS = "http://schemas.android.com/apk/res/android"
RES_IDS = {"label": 0x01010001, "name": 0x01010003, "exported": 0x01010010,
           "minSdkVersion": 0x0101020C, "versionCode": 0x0101021B, "versionName": 0x0101021C,
           "targetSdkVersion": 0x01010270}
TYPE_STRING, TYPE_INT_DEC, TYPE_INT_BOOLEAN = 0x03, 0x10, 0x12
XML, STRING_POOL, RESOURCE_MAP = 0x0003, 0x0001, 0x0180
START_NS, END_NS, START_EL, END_EL = 0x0100, 0x0101, 0x0102, 0x0103
NO_INDEX = 0xFFFFFFFF
V2_SIGNING_MAGIC = b"APK Sig Block 42"


@dataclass
class Manifest:
    package: str
    version_code: int = 0
    version_name: str | None = None
    activities: list[str] = field(default_factory=list)  # fully qualified class names


def parse_axml(data: bytes) -> Manifest:
    """Parse a binary AndroidManifest.xml; raise ApkError if it is not one."""
    manifest: Manifest | None = None
    try:
        for tag, attrs in iter_elements(data):
            if tag == "manifest":
                manifest = Manifest(str(attrs.get("package", "")), int(attrs.get("versionCode", 0) or 0),
                                    None if attrs.get("versionName") is None else str(attrs["versionName"]))
            elif tag in ("activity", "activity-alias") and manifest is not None:
                cls = str(attrs.get("name", ""))
                manifest.activities.append(manifest.package + cls if cls.startswith(".") else cls)
    except (TypeError, ValueError) as exc:
        raise ApkError(f"corrupt binary XML: {exc}") from exc
    if manifest is None or not manifest.package:
        raise ApkError("no <manifest package=...> element")
    return manifest


def read_apk(data: bytes) -> Manifest:
    """Manifest of an APK given as bytes; ApkError if it is not an installable APK."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
            if "AndroidManifest.xml" not in names:
                raise ApkError("AndroidManifest.xml not found")
            manifest = parse_axml(zf.read("AndroidManifest.xml"))
    except zipfile.BadZipFile as exc:
        raise ApkError(f"not a zip archive: {exc}") from exc
    v1_signed = any(n.startswith("META-INF/") and n.endswith((".RSA", ".DSA", ".EC")) for n in names)
    if not v1_signed and V2_SIGNING_MAGIC not in data[-1024 * 1024:]:
        raise ApkError("NO_CERTIFICATES: no signature found in package")
    return manifest


class _AxmlWriter:
    def __init__(self) -> None:
        self.strings: list[str] = []
        self.body = bytearray()

    def ref(self, s: str) -> int:
        if s not in self.strings:
            self.strings.append(s)
        return self.strings.index(s)

    def start(self, tag: str, attrs: list[tuple[str, str, object]], line: int) -> None:
        body = bytearray()
        for ns, name, value in attrs:
            if isinstance(value, bool):
                raw, vtype, vdata = NO_INDEX, TYPE_INT_BOOLEAN, 0xFFFFFFFF if value else 0
            elif isinstance(value, int):
                raw, vtype, vdata = NO_INDEX, TYPE_INT_DEC, value
            else:
                raw = self.ref(str(value))
                vtype, vdata = TYPE_STRING, raw
            nsi = self.ref(ANDROID_NS) if ns else NO_INDEX
            body += struct.pack("<IIIHBBI", nsi, self.ref(name), raw, 8, 0, vtype, vdata)
        ext = struct.pack("<IIHHHHHH", NO_INDEX, self.ref(tag), 20, 20, len(attrs), 0, 0, 0)
        self.body += struct.pack("<HHIII", START_EL, 16, 16 + len(ext) + len(body), line, NO_INDEX) + ext + body

    def end(self, tag: str, line: int) -> None:
        self.body += struct.pack("<HHIIIII", END_EL, 16, 24, line, NO_INDEX, NO_INDEX, self.ref(tag))

    def finish(self, ns_prefix: int, ns_uri: int) -> bytes:
        # Attribute names with resource ids must come first in the pool, matching the map.
        pool = self.strings
        encoded = [struct.pack("<H", len(s)) + s.encode("utf-16-le") + b"\0\0" for s in pool]
        offsets, pos = [], 0
        for e in encoded:
            offsets.append(pos)
            pos += len(e)
        data = b"".join(encoded)
        data += b"\0" * (-len(data) % 4)
        header_size = 28
        strings_start = header_size + 4 * len(pool)
        pool_chunk = struct.pack("<HHIIIIII", STRING_POOL, header_size, strings_start + len(data), len(pool), 0, 0,
                                 strings_start, 0) + struct.pack(f"<{len(pool)}I", *offsets) + data
        ids = [RES_IDS[s] for s in pool if s in RES_IDS]
        res_map = struct.pack("<HHI", RESOURCE_MAP, 8, 8 + 4 * len(ids)) + struct.pack(f"<{len(ids)}I", *ids)
        ns_start = struct.pack("<HHIIIII", START_NS, 16, 24, 1, NO_INDEX, ns_prefix, ns_uri)
        ns_end = struct.pack("<HHIIIII", END_NS, 16, 24, 1, NO_INDEX, ns_prefix, ns_uri)
        inner = pool_chunk + res_map + ns_start + bytes(self.body) + ns_end
        return struct.pack("<HHI", XML, 8, 8 + len(inner)) + inner


def build_manifest(package: str, version_code: int, version_name: str, activities: list[str]) -> bytes:
    w = _AxmlWriter()
    for name in RES_IDS:  # resource-id'd attribute names first, in RES_IDS order
        w.ref(name)
    prefix, uri = w.ref("android"), w.ref(ANDROID_NS)
    w.start("manifest", [(True, "versionCode", version_code), (True, "versionName", version_name),
                         (False, "package", package)], 2)
    w.start("uses-sdk", [(True, "minSdkVersion", 26), (True, "targetSdkVersion", 34)], 3)
    w.end("uses-sdk", 3)
    w.start("application", [(True, "label", package.rsplit(".", 1)[-1])], 4)
    for i, activity in enumerate(activities):
        line = 5 + 4 * i
        w.start("activity", [(True, "name", activity), (True, "exported", True)], line)
        w.start("intent-filter", [], line + 1)
        w.start("action", [(True, "name", "android.intent.action.MAIN")], line + 2)
        w.end("action", line + 2)
        w.start("category", [(True, "name", "android.intent.category.LAUNCHER")], line + 3)
        w.end("category", line + 3)
        w.end("intent-filter", line + 3)
        w.end("activity", line + 3)
    w.end("application", 99)
    w.end("manifest", 100)
    return w.finish(prefix, uri)


def build_test_apk(path: str | IO[bytes], package: str = "org.nnlite.bench", version_code: int = 1,
                   version_name: str = "0.1.0", activities: tuple[str, ...] = (".BenchActivity",),
                   signed: bool = True) -> str | IO[bytes]:
    """Write a minimal APK (to a path or a binary file object): binary manifest, a stub classes.dex
    and placeholder v1 signature files (present, not cryptographically valid: the simulator checks
    presence only)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("AndroidManifest.xml", build_manifest(package, version_code, version_name, list(activities)))
        zf.writestr("classes.dex", b"dex\n035\0" + b"\0" * 104)
        if signed:
            zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: nnlite-sim\r\n\r\n")
            zf.writestr("META-INF/CERT.SF", "Signature-Version: 1.0\r\nCreated-By: nnlite-sim\r\n\r\n")
            zf.writestr("META-INF/CERT.RSA", b"\x30\x82\x00\x00")
    return path



def bench_app_apk(protocol: int) -> bytes:
    """The benchmark app's APK as the simulator pre-installs it (`--with-app`): the package, versionCode
    and versionName of the android-app release that speaks `protocol`, so nnlite finds the app it
    would install already there."""
    from nnlite_tui.simdevice.app import PACKAGE, VERSION_CODES, VERSION_NAMES

    buffer = io.BytesIO()
    build_test_apk(buffer, package=PACKAGE, version_code=VERSION_CODES[protocol], version_name=VERSION_NAMES[protocol])
    return buffer.getvalue()
