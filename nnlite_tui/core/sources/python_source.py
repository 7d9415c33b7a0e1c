"""Parsing a model's or a transform's Python source with `ast` (never importing it)."""

from __future__ import annotations

import ast
from pathlib import Path

# The largest model file of LEMUR's release is 178 kB; a source file is read whole and parsed here.
MAX_SOURCE_BYTES = 4 * 2**20


def parse_source(path: Path, data: bytes) -> ast.Module | str:
    """The file's syntax tree, or one line saying why it has none. A file is data from outside: too large,
    nested past the parser's recursion limit or past memory, it is refused, never the run stopped."""
    if len(data) > MAX_SOURCE_BYTES:
        return f"{path.name}: {len(data):,} bytes, over the {MAX_SOURCE_BYTES // 2**20} MB a model source may have"
    try:
        return ast.parse(data, filename=str(path))
    except (SyntaxError, ValueError) as e:  # ValueError: source contains NUL bytes
        line = getattr(e, "lineno", None)
        where = f"{path.name}:{line}" if line else path.name
        msg = getattr(e, "msg", None) or str(e)
        return f"{type(e).__name__} at {where}: {msg}"
    except (RecursionError, MemoryError) as e:
        return f"{type(e).__name__} at {path.name}: nested too deeply to parse"
