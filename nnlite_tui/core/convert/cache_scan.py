"""Reading the conversion cache's directory: its entries, their sizes and last use, and the
leftovers of processes that died while writing or deleting an entry (layout: convert_cache.py)."""

from __future__ import annotations

import os
import shutil
import string
import time
from dataclasses import dataclass, field
from pathlib import Path

from nnlite_tui.core.convert.cache_files import META, TMP, Entry, is_artifact_name

HEX = set(string.hexdigits.lower())


def _is_shard(name: str) -> bool:
    return len(name) == 2 and set(name) <= HEX


def _dir_entry(path: Path) -> Entry:
    size, ok, shared = 0, False, False
    last_used = 0.0
    for f in os.scandir(path):
        st = f.stat(follow_symlinks=False)
        size += st.st_size
        if f.name == META:
            last_used = st.st_mtime
        elif is_artifact_name(f.name):
            ok, shared = True, st.st_nlink > 1
    if not last_used:  # no meta.json: a damaged entry, aged by the directory itself
        last_used = path.stat().st_mtime
    return Entry(path.name, path, size, last_used, ok, shared)


def scan_entries(root: Path) -> list[Entry]:
    """Every stored entry (entries being written in tmp/ are not listed)."""
    out: list[Entry] = []
    try:
        shards = [d for d in os.scandir(root) if d.is_dir(follow_symlinks=False) and _is_shard(d.name)]
    except FileNotFoundError:
        return out
    for shard in shards:
        legacy: dict[str, list[tuple[str, os.stat_result]]] = {}
        try:
            items = list(os.scandir(shard.path))
        except FileNotFoundError:
            continue  # removed by a prune in another process
        for item in items:
            try:
                if item.is_dir(follow_symlinks=False):
                    out.append(_dir_entry(Path(item.path)))
                else:  # the older flat layout: <key>.json, <key>.<suffix> (the artifact), <key>.json.tmp
                    key = item.name.split(".", 1)[0]
                    legacy.setdefault(key, []).append((item.name, item.stat(follow_symlinks=False)))
            except FileNotFoundError:
                continue  # evicted by another process while we looked
        for key, files in legacy.items():
            stats = [st for _, st in files]
            out.append(Entry(key, Path(shard.path) / files[0][0], sum(s.st_size for s in stats),
                             max(s.st_mtime for s in stats), any(not n.endswith((".json", ".tmp")) for n, _ in files),
                             any(s.st_nlink > 1 for s in stats), legacy=True))
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def _tmp_owner(name: str) -> int | None:
    """The pid in `<key>.<pid>.<rand>` or `evict.<pid>.<rand>`."""
    parts = name.split(".")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


@dataclass
class TmpState:
    in_progress: int = 0
    in_progress_bytes: int = 0
    removed: list[str] = field(default_factory=list)


def clean_tmp(root: Path, stale_s: float, remove: bool = True) -> TmpState:
    """Remove what dead processes left in tmp/ (half-written or half-deleted entries); count the rest."""
    state = TmpState()
    try:
        items = list(os.scandir(root / TMP))
    except FileNotFoundError:
        return state
    now = time.time()
    for item in items:
        try:
            age = now - item.stat(follow_symlinks=False).st_mtime
        except FileNotFoundError:
            continue  # committed or removed meanwhile
        pid = _tmp_owner(item.name)
        dead = pid is None or not _pid_alive(pid) or age > stale_s
        if dead and remove:
            if item.is_dir(follow_symlinks=False):
                shutil.rmtree(item.path, ignore_errors=True)
            else:
                Path(item.path).unlink(missing_ok=True)
            state.removed.append(item.name)
        elif not dead:
            state.in_progress += 1
            state.in_progress_bytes += _tree_bytes(Path(item.path))
    return state


def _tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(dirpath, name), follow_symlinks=False).st_size
            except FileNotFoundError:
                continue  # a .part renamed meanwhile
    return total


@dataclass(frozen=True)
class CacheUsage:
    root: Path
    entries: int
    total_bytes: int
    failed: int  # deterministic failures (no artifact)
    legacy: int  # entries of the older flat layout
    shared_bytes: int  # artifact bytes also linked from run directories
    oldest: Entry | None
    newest: Entry | None
    in_progress: int
    in_progress_bytes: int


def cached_bytes(root: Path) -> int:
    """How many bytes the cache at `root` holds (disk.low_space's hint on a low disk)."""
    return cache_usage(root).total_bytes


def cache_usage(root: Path) -> CacheUsage:
    entries = scan_entries(root)
    tmp = clean_tmp(root, float("inf"), remove=False)
    by_use = sorted(entries, key=lambda e: e.last_used)
    return CacheUsage(root, len(entries), sum(e.bytes for e in entries),
                      sum(1 for e in entries if not e.ok and not e.legacy), sum(1 for e in entries if e.legacy),
                      sum(e.bytes for e in entries if e.shared), by_use[0] if by_use else None,
                      by_use[-1] if by_use else None, tmp.in_progress, tmp.in_progress_bytes)
