#!/usr/bin/env python3
"""The conversion cache at scale: what a write (with its eviction scan) and a hit cost with many
entries, and how much a cap removes.

    .venv/bin/python bench/cache_scale.py [--entries 10000] [--tflite-kb 64] [--dir DIR]

Builds a real cache of N entries (meta.json + a .tflite of --tflite-kb each) in a temporary
directory (or --dir, on the filesystem you care about), then times: a full scan, a write that
stays far below the cap, one near it (which scans the whole cache), a write that evicts 10% of the
entries, and a hit.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nnlite_tui.core.convert.cache import ConversionCache  # noqa: E402
from nnlite_tui.core.convert.cache_files import META, write_json_durable  # noqa: E402
from nnlite_tui.core.disk import GB  # noqa: E402


def store(cache: ConversionCache, n: int, size: int, evict: bool = True) -> str:
    key = hashlib.sha256(f"bench-{n}".encode()).hexdigest()
    staging = cache.staging(key, ".tflite")
    staging.artifact.write_bytes(b"\0" * size)
    result = {"ok": True, "stage": "done", "artifact_bytes": size}
    if evict:
        cache.commit(staging, result)
    else:  # filling: the same files and rename, without a scan per write
        write_json_durable(staging.dir / META, result)
        cache._rename_into_place(staging)
    return key


def timed(fn, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=10000)
    ap.add_argument("--tflite-kb", type=int, default=64)
    ap.add_argument("--dir", type=Path)
    args = ap.parse_args()
    size = args.tflite_kb * 1000
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        cache = ConversionCache(Path(tmp) / "cache", max_gb=1000)
        t0 = time.perf_counter()
        keys = [store(cache, i, size, evict=False) for i in range(args.entries)]
        fill_s = time.perf_counter() - t0
        total = sum(e.bytes for e in cache.entries())
        print(f"{args.entries} entries of {args.tflite_kb} KB: {total / GB:.2f} GB, written in {fill_s:.1f} s "
              f"({fill_s / args.entries * 1000:.2f} ms per entry without the scan)")
        print(f"scan of all entries:           {timed(cache.entries) * 1000:8.1f} ms")
        extra = iter(range(args.entries, args.entries + 100))
        store(cache, next(extra), size)  # the first write of a process always scans
        print(f"write far below the cap:       {timed(lambda: store(cache, next(extra), size)) * 1000:8.1f} ms "
              "(no scan: the estimate is far from the cap)")
        near = sum(e.bytes for e in cache.entries()) * 1.1
        cache.cap = type(cache.cap)(int(near), "bench")
        print(f"write near the cap (+ scan):   {timed(lambda: store(cache, next(extra), size)) * 1000:8.1f} ms")
        hit_dir = Path(tmp) / "run"
        print(f"hit (lock, read, link, touch): "
              f"{timed(lambda: cache.fetch(keys[0], hit_dir / 'm.tflite'), 20) * 1000:8.2f} ms")
        total = sum(e.bytes for e in cache.entries())
        cache.cap = type(cache.cap)(int(total * 0.9), "bench")
        t0 = time.perf_counter()
        key = store(cache, 10**9, size)
        evict_s = time.perf_counter() - t0
        left = cache.entries()
        print(f"write that evicts to 90%:      {evict_s * 1000:8.1f} ms, {len(keys) + 101 - len(left)} entries "
              f"removed, {len(left)} left, the just-written one kept: {key in {e.key for e in left}}, "
              f"the hit one kept: {keys[0] in {e.key for e in left}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
