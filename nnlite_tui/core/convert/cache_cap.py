"""The conversion cache's size cap: --cache-max-gb, else $NNLITE_CACHE_MAX_GB, else a default
decided once from the free disk space and kept in <cache>/cap.json."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.convert.cache_files import TMP, write_json_durable
from nnlite_tui.core.disk import GB, fmt_bytes, free_bytes

ENV_MAX_GB = "NNLITE_CACHE_MAX_GB"
CAP_FILE = "cap.json"
DEFAULT_MAX_BYTES = 20 * GB  # the default cap is min(this, DEFAULT_FREE_SHARE of the free space)
DEFAULT_FREE_SHARE = 0.25


@dataclass(frozen=True)
class Cap:
    max_bytes: int
    source: str  # where the figure comes from, for `nnlite cache info`


def parse_max_gb(text: str, source: str = ENV_MAX_GB) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also catches nan
        raise ValueError(f"{source}={text!r}: give the cache's size cap in GB, e.g. 20 or 0.5")
    return value


def resolve_cap(root: Path, max_gb: float | None = None) -> Cap:
    """--cache-max-gb, else $NNLITE_CACHE_MAX_GB, else the default decided at first use."""
    if max_gb is not None:
        return Cap(int(max_gb * GB), f"--cache-max-gb {max_gb:g}")
    env = os.environ.get(ENV_MAX_GB)
    if env:
        return Cap(int(parse_max_gb(env) * GB), f"{ENV_MAX_GB}={env}")
    return _default_cap(root)


def _default_cap(root: Path) -> Cap:
    # Decided once and kept: recomputed later, the cap would shrink as the cache itself fills the disk.
    path = root / CAP_FILE
    try:
        data = json.loads(path.read_text())
        return Cap(int(data["max_bytes"]), _cap_source(data))
    except FileNotFoundError:
        pass  # first use: decide it below
    except (OSError, ValueError, KeyError, TypeError):
        pass  # a damaged cap file is decided again and rewritten
    free = free_bytes(root)
    data = {"max_bytes": min(DEFAULT_MAX_BYTES, int(DEFAULT_FREE_SHARE * free)), "free_bytes": free,
            "decided": time.strftime("%Y-%m-%d %H:%M", time.localtime())}
    try:
        root.mkdir(parents=True, exist_ok=True)
        write_json_durable(path, data, root / TMP)
    except OSError:
        pass  # unwritable or full: the figure still holds for this process
    return Cap(data["max_bytes"], _cap_source(data))


def _cap_source(data: dict) -> str:
    return (f"default: min({fmt_bytes(DEFAULT_MAX_BYTES)}, {DEFAULT_FREE_SHARE:.0%} of the "
            f"{fmt_bytes(data.get('free_bytes', 0))} free at first use, {data.get('decided', '?')})")
