"""Taking an artifact that model code wrote: only a plain file, copied by descriptor, hashed by the runner.

The staged file is the worker's, so it may be anything: a symlink to a host file, a FIFO (whose
open() blocks until a writer comes), a directory, a sparse file of terabytes, a hard link to a file
the model should not reach. It is opened without following links (every path component below the
runner's own directory) and without blocking, checked on the open descriptor (a regular file, one
link, at most MAX_BYTES, not sparse), and copied from that descriptor while the copy is hashed: the
size and sha256 that go into the cache and the report are the runner's measurement of the bytes it
keeps, never a figure the worker sent.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.convert.record import ConversionRecord

MAX_BYTES = 2**31  # a .tflite is a flatbuffer (2 GiB at most); a .pte of a LEMUR model is far smaller
CHUNK = 1 << 20
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


class Refused(ValueError):
    """The staged artifact is not a plain file the runner may take."""


@dataclass(frozen=True)
class Taken:
    path: Path
    bytes: int
    sha256: str


def _open_below(root: Path, relative: Path) -> int:
    """A read descriptor of root/relative, no component of `relative` followed if it is a link."""
    fd = os.open(root, _DIR)
    try:
        for part in relative.parts[:-1]:
            nxt = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(relative.parts[-1], _FILE, dir_fd=fd)
    finally:
        os.close(fd)


def _check(fd: int, limit: int) -> os.stat_result:
    st = os.fstat(fd)
    if stat.S_ISLNK(st.st_mode):
        raise Refused("a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise Refused(kind)
    if st.st_nlink != 1:
        raise Refused(f"a file with {st.st_nlink} hard links")
    if st.st_size > limit:
        raise Refused(f"{st.st_size} bytes, over the {limit}-byte limit")
    # A file whose blocks cover much less than its size has holes no converter writes.
    if st.st_size > CHUNK and st.st_blocks * 512 < st.st_size // 2:
        raise Refused(f"a sparse file ({st.st_blocks * 512} bytes stored of {st.st_size})")
    return st


def take(root: Path, relative: Path, dest: Path, limit: int = MAX_BYTES) -> Taken:
    """Copy root/relative (written by model code) to dest (a new file) and hash it; Refused if it is not a
    plain file within the limit. OSError for a failure of the copy itself (a full disk)."""
    try:
        fd = _open_below(root, relative)
    except FileNotFoundError:
        raise Refused("missing") from None
    except OSError as exc:  # ELOOP: a link where a directory or the file should be
        raise Refused(f"not openable as a plain file ({exc.strerror})") from None
    digest = hashlib.sha256()
    written = 0
    try:
        _check(fd, limit)
        os.set_blocking(fd, True)
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            while chunk := os.read(fd, CHUNK):
                written += len(chunk)
                if written > limit:  # it grew while being copied
                    raise Refused(f"over the {limit}-byte limit while being copied")
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
        except BaseException:
            os.close(out)
            dest.unlink(missing_ok=True)
            raise
        os.close(out)
    finally:
        os.close(fd)
    return Taken(dest, written, digest.hexdigest())


def open_plain(root: Path, relative: Path, limit: int = MAX_BYTES) -> int:
    """A blocking read descriptor of root/relative (written by model code), with the checks of take();
    Refused otherwise. The caller closes it."""
    try:
        fd = _open_below(root, relative)
    except FileNotFoundError:
        raise Refused("missing") from None
    except OSError as exc:
        raise Refused(f"not openable as a plain file ({exc.strerror})") from None
    try:
        _check(fd, limit)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def hash_in_place(path: Path, limit: int = MAX_BYTES) -> Taken:
    """The size and sha256 of a file the runner keeps where it is (the unsandboxed worker's output), with
    the same checks as take()."""
    try:
        fd = os.open(path, _FILE)
    except FileNotFoundError:
        raise Refused("missing") from None
    except OSError as exc:
        raise Refused(f"not openable as a plain file ({exc.strerror})") from None
    digest = hashlib.sha256()
    size = 0
    try:
        _check(fd, limit)
        os.set_blocking(fd, True)
        while chunk := os.read(fd, CHUNK):
            size += len(chunk)
            digest.update(chunk)
    finally:
        os.close(fd)
    return Taken(path, size, digest.hexdigest())


def refused_result(why: str) -> ConversionRecord:
    return {"ok": False, "stage": "sandbox", "error_type": "ArtifactRefused", "cause": "artifact-refused",
            "error_message": f"the staged artifact was not taken: it is {why}"}
