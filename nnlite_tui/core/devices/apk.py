"""Read an APK's package name and version from its binary AndroidManifest.xml (AXML).

The host needs only `package`, `versionCode` and `versionName` (to decide whether the device's
benchmark app is current). AXML is chunked: a RES_XML chunk with a string pool, then element
chunks whose attributes point into the pool or carry typed values.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

XML, STRING_POOL, START_EL = 0x0003, 0x0001, 0x0102
TYPE_STRING = 0x03
NO_INDEX = 0xFFFFFFFF


class ApkError(Exception):
    pass


@dataclass(frozen=True)
class ApkInfo:
    package: str
    version_code: int
    version_name: str | None


def read_string_pool(data: bytes, offset: int) -> list[str]:
    """The strings of the AXML string-pool chunk at `offset` (UTF-8 or UTF-16)."""
    _t, header, _size, count, _styles, flags, start, _ = struct.unpack_from("<HHIIIIII", data, offset)
    utf8 = bool(flags & 0x100)
    out = []
    for off in struct.unpack_from(f"<{count}I", data, offset + header):
        p = offset + start + off
        if utf8:
            p += 2 if data[p] & 0x80 else 1  # the UTF-16 length comes first; skip it
            n = data[p]
            if n & 0x80:
                n = ((n & 0x7F) << 8) | data[p + 1]
                p += 1
            out.append(data[p + 1:p + 1 + n].decode("utf-8", "replace"))
        else:
            (n,) = struct.unpack_from("<H", data, p)
            if n & 0x8000:
                n = ((n & 0x7FFF) << 16) | struct.unpack_from("<H", data, p + 2)[0]
                p += 2
            out.append(data[p + 2:p + 2 + 2 * n].decode("utf-16-le", "replace"))
    return out


def iter_elements(data: bytes) -> Iterator[tuple[str, dict[str, object]]]:
    """(tag, attributes) of every start element of a binary XML file, in order; ApkError if corrupt."""
    try:
        kind, _hs, total = struct.unpack_from("<HHI", data, 0)
        if kind != XML or total > len(data):
            raise ApkError("not a binary XML file")
        strings: list[str] = []
        offset = 8
        while offset < total:
            ctype, _h, size = struct.unpack_from("<HHI", data, offset)
            if size < 8:
                raise ApkError("corrupt chunk")
            if ctype == STRING_POOL:
                strings = read_string_pool(data, offset)
            elif ctype == START_EL:
                _ns, name, start, asize, count = struct.unpack_from("<IIHHH", data, offset + 16)
                attrs: dict[str, object] = {}
                for i in range(count):
                    a = offset + 16 + start + i * asize
                    _ans, aname, raw, _vs, _r, vtype, value = struct.unpack_from("<IIIHBBI", data, a)
                    attrs[strings[aname]] = strings[raw] if raw != NO_INDEX else (
                        strings[value] if vtype == TYPE_STRING else value)
                yield strings[name], attrs
            offset += size
    except (struct.error, IndexError, ValueError) as exc:
        raise ApkError(f"corrupt binary XML: {exc}") from exc


def parse_manifest(data: bytes) -> ApkInfo:
    """The <manifest> element's package, versionCode and versionName; ApkError if unreadable."""
    for tag, attrs in iter_elements(data):
        if tag != "manifest":
            continue
        if not attrs.get("package"):
            break
        version = attrs.get("versionCode") or 0  # a string or a number, as the binary XML typed it
        try:
            if not isinstance(version, (int, str)):
                raise TypeError(f"a {type(version).__name__}")
            code = int(version)
        except (TypeError, ValueError) as exc:
            raise ApkError(f"corrupt binary XML: versionCode {attrs.get('versionCode')!r}") from exc
        name_attr = attrs.get("versionName")
        return ApkInfo(str(attrs["package"]), code, None if name_attr is None else str(name_attr))
    raise ApkError("no <manifest package=...> element")


def read_apk_info(path: str) -> ApkInfo:
    try:
        with zipfile.ZipFile(path) as zf:
            return parse_manifest(zf.read("AndroidManifest.xml"))
    except KeyError as exc:
        raise ApkError("AndroidManifest.xml not found") from exc
    except (zipfile.BadZipFile, OSError) as exc:
        raise ApkError(f"not a zip archive: {exc}") from exc
