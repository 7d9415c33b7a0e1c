"""The conversion cache shared by runs: content-addressed, bounded in size, least recently used out.

Under the root ($NNLITE_CACHE_DIR, default ~/.cache/nnlite/convert):
  <key[:2]>/<key>/meta.json       the conversion result (a deterministic failure has only this file)
  <key[:2]>/<key>/model<suffix>   the artifact, when the conversion succeeded, under the suffix of the
                                  runtime that made it (model.pte); entries of earlier releases hold
                                  model.tflite whatever made them, and are served as they are
  tmp/<key>.<pid>.<rand>/       an entry being written (or, named evict.*, one being deleted)
  cap.json                      the default size cap, decided once at first use

Only whole entries: an entry is written in tmp/ and renamed into place in one step (the first writer
of a key wins, a later one drops its equal copy), so another process sees all of it or nothing, and
a full disk leaves only a tmp/ directory, which is removed. A reader holds a shared flock on
meta.json while it reads it and links the artifact out; eviction takes the exclusive lock without
waiting, skips an entry it cannot lock, and renames the entry out of place before deleting it.
Last use is meta.json's mtime, touched on every hit. A hit's artifact is hashed again and must match
the sha256 recorded when it was stored: an altered entry is a miss, converted again and replaced. An entry of the older flat layout
(<key[:2]>/<key>.json + <key>.<suffix>) is moved into this one when its key is asked for; until then it
counts towards the size and ages out like any other.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from nnlite_tui.core.outcomes import conversion_record
from nnlite_tui.core.convert.cache_cap import resolve_cap
from nnlite_tui.core.convert.cache_files import (
    DISK_FULL, META, TMP, Entry, artifact_name, find_artifact, place_file, write_json_durable,
)
from nnlite_tui.core.convert.cache_scan import clean_tmp, scan_entries
from nnlite_tui.core.convert.record import ConversionRecord
from nnlite_tui.core.disk import free_bytes, fsync_path

ENV_DIR = "NNLITE_CACHE_DIR"
RESCAN_S = 60.0
NEAR_CAP = 0.75
STALE_TMP_S = 7 * 86400  # a tmp/ dir this old goes even if its pid is alive again (reused pid)
# A crashed worker with less than this free on the cache's filesystem ran out of space: its partial
# artifact (still in tmp/ when this is checked) has taken the rest.
CRASH_FULL_BYTES = 4 * 10**6


def default_cache_dir() -> Path:
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nnlite" / "convert"


class CacheWriteError(OSError):
    """The cache could not store an entry (the disk is full); nothing partial was left behind."""


@dataclass(frozen=True)
class Staging:
    """Where one conversion writes its entry before it is stored."""
    key: str
    dir: Path
    suffix: str  # the artifact's, as its runtime declares it (runtimes.base.Runtime.suffix)

    @property
    def artifact(self) -> Path:
        return self.dir / artifact_name(self.suffix)

    def discard(self) -> None:
        if self.dir.exists():  # gone after a successful commit (it was renamed into place)
            shutil.rmtree(self.dir, ignore_errors=True)


def disk_full_failure(root: Path, detail: str) -> ConversionRecord:
    """The result of a conversion that could not be written: transient (a `crash`), never cached."""
    return {"ok": False, "stage": "crash", "error_type": "DiskFull",
            "error_message": f"no space left on the filesystem of the conversion cache {root} ({detail}); "
                             f"{free_bytes(root) // 10**6} MB free: free space (e.g. `nnlite cache prune "
                             f"--max-gb N`, or delete old run directories) and rerun"}


def is_disk_full(result: ConversionRecord) -> bool:
    """A worker's failure that is the disk's fault, not the model's (e.g. at `serialize`)."""
    text = f"{result.get('error_type')} {result.get('error_message')}"
    return not result.get("ok") and ("No space left on device" in text or "Disk quota exceeded" in text)


def explain_crash(root: Path, result: ConversionRecord) -> ConversionRecord:
    """A worker that died while the cache's filesystem is full died of it (the converter's LLVM
    aborts the process with `IO failure on output stream`): say so instead of "worker died"."""
    if result.get("ok") or result.get("error_type") != "WorkerCrash" or free_bytes(root) > CRASH_FULL_BYTES:
        return result
    return disk_full_failure(root, f"{result.get('error_message')} while writing the artifact")


def _intact(path: Path, sha256: object) -> bool:
    """Whether the entry's artifact is a regular file (no link followed) whose bytes still hash to the
    sha256 its meta.json recorded when it was stored."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not isinstance(sha256, str):
            return False
        os.set_blocking(fd, True)
        digest = hashlib.sha256()
        with os.fdopen(os.dup(fd), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest() == sha256
    finally:
        os.close(fd)


class ConversionCache:
    def __init__(self, root: Path, max_gb: float | None = None):
        self.root = Path(root)
        self.cap = resolve_cap(self.root, max_gb)
        # The total as of the last scan plus what this process wrote since. A write scans the whole
        # cache (about 1 s at 10,000 entries) and evicts when this estimate reaches NEAR_CAP of the
        # cap, or RESCAN_S after the last scan: other processes' writes are counted at the next
        # scan, so far below the cap (the common case) most writes skip it.
        self._estimate: int | None = None
        self._scanned_at = 0.0
        self._estimate_lock = threading.Lock()

    # ----- paths -----
    def entry_dir(self, key: str) -> Path:
        return self.root / key[:2] / key

    def meta_path(self, key: str) -> Path:
        return self.entry_dir(key) / META

    def artifact_of(self, key: str) -> Path | None:
        """The stored artifact of key's entry, whatever its suffix, or None."""
        return find_artifact(self.entry_dir(key))

    # ----- reading -----
    def fetch(self, key: str, dest: Path | None = None) -> ConversionRecord | None:
        """The cached result (None on a miss); the artifact linked to dest; the entry marked used."""
        meta = self.meta_path(key)
        try:
            f = open(meta, "rb")
        except FileNotFoundError:
            if not self._adopt_legacy(key):
                return None
            try:
                f = open(meta, "rb")
            except FileNotFoundError:
                return None  # adopted, then evicted by another process at once
        with f:  # closing releases the lock
            fcntl.flock(f, fcntl.LOCK_SH)
            try:
                if os.stat(meta).st_ino != os.fstat(f.fileno()).st_ino:
                    return None  # evicted (and maybe stored anew) while we waited for the lock
                # an entry commit() wrote, of this release or an earlier one (renamed to today's keys)
                result = cast(ConversionRecord, conversion_record(json.loads(f.read())))
            except FileNotFoundError:
                return None  # evicted while we waited for the lock
            except (OSError, ValueError):
                return None  # a damaged entry is a miss; commit() replaces it
            if result.get("ok"):
                artifact = self.artifact_of(key)
                if artifact is None or not _intact(artifact, result.get("artifact_sha256")):
                    return None  # missing or altered since it was stored: converted again, and replaced
                if dest is not None:
                    place_file(artifact, dest)
                    result["artifact_path"] = str(dest)
            os.utime(meta)
        return result

    def get(self, key: str) -> ConversionRecord | None:
        return self.fetch(key)

    # ----- writing -----
    def staging(self, key: str, suffix: str) -> Staging:
        """A private directory for key's entry; its artifact is to be written as model<suffix>."""
        d = self.root / TMP / f"{key}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            d.mkdir(parents=True)
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise CacheWriteError(exc.errno, f"{self.root}: no space left to start an entry") from exc
            raise
        return Staging(key, d, suffix)

    def commit(self, staging: Staging, result: ConversionRecord, dest: Path | None = None) -> ConversionRecord:
        """Store `result` (and the staged artifact when ok) as the key's entry, place the artifact at
        dest, then evict down to the cap. Returns the result as the caller should see it: with
        artifact_path=dest, or a transient disk-full failure when nothing could be stored."""
        if is_disk_full(result):
            staging.discard()
            return disk_full_failure(self.root, result.get("error_message") or "")
        ok = bool(result.get("ok"))
        try:
            if ok:
                fsync_path(staging.artifact)
            write_json_durable(staging.dir / META, {k: v for k, v in result.items() if k != "artifact_path"})
            if ok and dest is not None:
                place_file(staging.artifact, dest)
            written = sum(f.stat().st_size for f in staging.dir.iterdir())
            self._rename_into_place(staging)
        except OSError as exc:
            staging.discard()
            if exc.errno in DISK_FULL:
                return disk_full_failure(self.root, f"storing {staging.key[:16]}: {exc.strerror}")
            raise
        self._after_write(staging.key, written)
        out = result.copy()
        if ok and dest is not None:
            out["artifact_path"] = str(dest)
        return out

    def put(self, key: str, result: ConversionRecord, artifact: Path | None = None) -> None:
        """Store a result (a successful one with its artifact, kept under the artifact's suffix);
        CacheWriteError if the disk is full."""
        staging = self.staging(key, artifact.suffix if artifact is not None else "")
        try:
            if artifact is not None:
                shutil.copyfile(artifact, staging.artifact)
            stored = self.commit(staging, result)
        except OSError as exc:
            staging.discard()
            if exc.errno in DISK_FULL:
                raise CacheWriteError(exc.errno, f"{self.root}: no space left for {key[:16]}") from exc
            raise
        if stored.get("error_type") == "DiskFull":
            raise CacheWriteError(errno.ENOSPC, stored.get("error_message") or "")

    def _rename_into_place(self, staging: Staging) -> None:
        final = self.entry_dir(staging.key)
        final.parent.mkdir(exist_ok=True)
        for _ in range(2):
            try:
                os.rename(staging.dir, final)
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            if self.fetch(staging.key) is not None:
                staging.discard()  # another process stored the same key first; its entry is as good
                return
            self._remove(self._entry_of(final))  # a damaged entry: ours replaces it

    def _adopt_legacy(self, key: str) -> bool:
        """Move an entry of the older flat layout (<kk>/<key>.json + <key>.<suffix>) into this one, so
        an existing cache keeps its conversions. True if there is now an entry for key."""
        old_meta = self.root / key[:2] / f"{key}.json"
        try:
            result = json.loads(old_meta.read_text())
        except FileNotFoundError:
            return False
        except (OSError, ValueError):
            return False  # damaged: never adopted, it ages out like any entry
        # Its artifact: the one <key>.<suffix> beside the .json that is not a half-written .json.tmp.
        old_artifacts = [p for p in old_meta.parent.glob(f"{key}.*") if p.suffix not in (".json", ".tmp")]
        old_artifact = old_artifacts[0] if len(old_artifacts) == 1 else None
        try:
            staging = self.staging(key, old_artifact.suffix if old_artifact is not None else "")
        except CacheWriteError:
            return False  # no room to move it now: a miss, and the conversion says why it cannot be stored
        try:
            if result.get("ok"):
                if old_artifact is None:
                    return False
                try:
                    os.link(old_artifact, staging.artifact)
                except FileNotFoundError:
                    return False
            stored = self.commit(staging, result)
        finally:
            staging.discard()
        if stored.get("error_type") == "DiskFull":
            return False
        old_meta.unlink(missing_ok=True)
        if old_artifact is not None:
            old_artifact.unlink(missing_ok=True)
        return True

    # ----- size -----
    def _after_write(self, key: str, written: int) -> None:
        with self._estimate_lock:
            due = (self._estimate is None or self._estimate + written >= NEAR_CAP * self.cap.max_bytes
                   or time.monotonic() - self._scanned_at > RESCAN_S)
            if not due and self._estimate is not None:
                self._estimate += written
                return
        self.evict(keep={key})

    def entries(self) -> list[Entry]:
        return scan_entries(self.root)

    def evict(self, max_bytes: int | None = None, keep: set[str] | frozenset[str] = frozenset()) -> "Pruned":
        """Remove least recently used entries until the total is at most max_bytes (default the cap).
        Entries being read (locked) and the keys in `keep` stay."""
        limit = self.cap.max_bytes if max_bytes is None else max_bytes
        clean_tmp(self.root, STALE_TMP_S)
        entries = sorted(self.entries(), key=lambda e: e.last_used)
        total = sum(e.bytes for e in entries)
        removed: list[Entry] = []
        busy = 0
        for entry in entries:
            if total <= limit:
                break
            if entry.key in keep:
                continue
            if self._remove(entry):
                total -= entry.bytes
                removed.append(entry)
            else:
                busy += 1
        with self._estimate_lock:
            self._estimate, self._scanned_at = total, time.monotonic()
        return Pruned(removed, busy, total)

    def clear(self) -> "Pruned":
        return self.evict(max_bytes=-1)

    def _entry_of(self, path: Path) -> Entry:
        return Entry(path.name, path, 0, 0.0, False, False)

    def _remove(self, entry: Entry) -> bool:
        """Delete one entry unless another process is reading it; True if it is gone."""
        if entry.legacy:
            for p in entry.path.parent.glob(entry.key + ".*"):
                p.unlink(missing_ok=True)
            return True
        try:
            f = open(entry.path / META, "rb")
        except FileNotFoundError:
            f = None  # no meta.json: nothing can be reading it
        try:
            if f is not None:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return False
            graveyard = self.root / TMP / f"evict.{os.getpid()}.{secrets.token_hex(4)}"
            graveyard.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(entry.path, graveyard)
            except FileNotFoundError:
                return True  # another process evicted it first
        finally:
            if f is not None:
                f.close()
        shutil.rmtree(graveyard, ignore_errors=True)
        return True


@dataclass(frozen=True)
class Pruned:
    removed: list[Entry]
    busy: int  # entries skipped because another process was reading them
    remaining_bytes: int

    @property
    def freed_bytes(self) -> int:
        return sum(e.bytes for e in self.removed)
