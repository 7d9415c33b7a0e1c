"""The memory-bound reference: weights well beyond any last-level cache, made at first use and kept.

The compute reference (reference_model.py, 0.1 ms, fits in the L1/L2 caches) does not feel what
large models feel when a neighbour takes memory bandwidth or last-level cache: on a shared host it
moved 8% between sessions while 20-80 ms models moved 20%. This one is a chain of fully connected
layers at batch 1 (written by the LiteRT runtime, core/runtimes/litert/dense_chain.py) whose 128 MiB
of float32 weights are read once per inference: four times a 32 MiB server L3 and far beyond a
phone's, so its time is that of the memory system. It is generated deterministically (seeded; the same bytes on every machine, its
sha256 checked) the first time a device needs it and kept beside the conversion cache, not shipped.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from nnlite_tui.core.bench.settings import BenchSettings

WIDTH, LAYERS, SEED = 2048, 8, 0  # 8 x 2048 x 2048 float32 = 128 MiB of weights
VERSION = 1  # in the file name: figures of different versions are never compared
SHA256 = "bab546e778203c1cbd9f8e2925ce6601dd14eef226626d4a66448daabd2a1258"
# About 8 ms an inference on a desktop-class core: ~0.3 s of timed work after a short warm-up.
SETTINGS = BenchSettings(warmup=2, warmup_seconds=0.05, runs=15, min_seconds=0.3, max_seconds=5.0)
ENV_DIR = "NNLITE_REFERENCES_DIR"
_lock = threading.Lock()
_verified: set[Path] = set()  # files checked in this process (hashing 128 MiB costs a few tenths of a second)


def references_dir(cache_root: str | Path) -> Path:
    """Beside the conversion cache (its sibling), so that the cache's size cap never evicts it;
    $NNLITE_REFERENCES_DIR instead when set (the test suite shares one file across its many caches)."""
    return Path(os.environ.get(ENV_DIR) or Path(cache_root).resolve().parent / "references")


def memory_reference(cache_root: str | Path) -> Path:
    """The memory reference's file, written on first use; a file whose bytes are not the expected
    ones (a partial write, another version) is written again."""
    from nnlite_tui.core.runtimes import REFERENCE_RUNTIME, get_runtime

    runtime = get_runtime(REFERENCE_RUNTIME)
    path = references_dir(cache_root) / f"memory-v{VERSION}.reference{runtime.suffix}"
    with _lock:
        if path in _verified or (path.is_file() and _sha256(path) == SHA256):
            _verified.add(path)
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Only the reference runtime writes it; the Runtime protocol does not ask the others for it.
        make = getattr(runtime, "dense_chain")
        make(str(path), WIDTH, LAYERS, SEED)
        digest = _sha256(path)
        if digest != SHA256:
            raise RuntimeError(f"{path}: the memory reference came out with sha256 {digest}, not {SHA256}")
        _verified.add(path)
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
