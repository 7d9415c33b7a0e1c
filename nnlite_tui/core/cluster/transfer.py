"""Moving an artifact between nodes through Ray's object store, in chunks, without a second copy.

The sender maps the file (numpy memmap) and puts it in CHUNK-sized pieces: each piece is copied
once, from the page cache into the object store. The receiver gets each piece as a read-only view
of the object store (numpy arrays come back zero-copy) and writes it straight to disk. Pieces
keep a 100s-of-MB model from needing one 100s-of-MB buffer anywhere, and let Ray move them
between nodes as they come.
"""

from __future__ import annotations

import os
from pathlib import Path

CHUNK = 32 * 2**20


def put_file(path: str | Path) -> list:
    """The file as a list of ObjectRefs (owned by the caller's process)."""
    import numpy as np
    import ray

    size = os.path.getsize(path)
    if size == 0:
        return [ray.put(np.zeros(0, dtype=np.uint8))]
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    try:
        return [ray.put(mapped[start:start + CHUNK].view(np.ndarray)) for start in range(0, size, CHUNK)]
    finally:
        del mapped


def write_file(chunks: list, dest: str | Path) -> int:
    """Write the pieces to dest (atomically: a temporary name, then rename); the bytes written."""
    import ray

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.part")
    written = 0
    try:
        with open(tmp, "wb") as f:
            for ref in chunks:
                piece = ray.get(ref)
                f.write(piece.data)
                written += piece.nbytes
                del piece  # release the object store's page before fetching the next
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return written
