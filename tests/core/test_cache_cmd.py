"""`nnlite cache info|prune` on a real cache directory, in a subprocess that must not import torch."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from nnlite_tui.core.convert.cache import ConversionCache
from tests.core.test_convert_cache import MB, _key, _store

REPO = Path(__file__).resolve().parents[2]
PROBE = ("import sys, runpy\nsys.argv = ['nnlite', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('nnlite_tui', run_name='__main__')\n"
         "finally:\n    heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'litert_torch', 'textual'))\n"
         "    print('HEAVY:' + ','.join(heavy), file=sys.stderr)\n")


def nnlite(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=60)
    assert done.stderr.rstrip().endswith("HEAVY:"), f"the cache CLI imported {done.stderr.splitlines()[-1]}"
    return done


def test_info_and_prune_by_size_then_all(tmp_path):
    root = tmp_path / "cache"
    cache = ConversionCache(root, max_gb=1)
    keys = [_key(i) for i in range(3)]
    for key in keys:
        _store(cache, key, MB)
        time.sleep(0.01)
    cache.put(_key(9), {"ok": False, "stage": "export", "error_type": "RuntimeError", "error_message": "x"})
    info = nnlite("cache", "info", "--cache-dir", str(root), env={"NNLITE_CACHE_MAX_GB": "7.5"})
    assert info.returncode == 0, info.stderr
    rows = _rows(info.stdout)
    assert rows["dir"] == str(root)
    assert rows["entries"] == "4 (1 failed conversions)"
    assert rows["size"].startswith("3.0 MB")
    assert rows["cap"] == "7.5 GB (NNLITE_CACHE_MAX_GB=7.5)"
    assert rows["oldest"].startswith(keys[0][:16]) and rows["newest"].startswith(_key(9)[:16])

    pruned = nnlite("cache", "prune", "--max-gb", "0.0015", env={"NNLITE_CACHE_DIR": str(root)})
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.startswith("removed 2 entries (2.0 MB)")
    assert {e.key for e in cache.entries()} == {keys[2], _key(9)}

    everything = nnlite("cache", "prune", "--all", "--cache-dir", str(root))
    assert everything.stdout.startswith("removed 2 entries") and cache.entries() == []
    assert _rows(nnlite("cache", "info", "--cache-dir", str(root)).stdout)["size"] == "0 B"


def _rows(text: str) -> dict[str, str]:
    return dict(line.split(None, 1) for line in text.splitlines() if line.strip())


def test_bad_cap_and_clashing_options_are_usage_errors(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    bad = nnlite("cache", "info", "--cache-dir", str(root), env={"NNLITE_CACHE_MAX_GB": "-3"})
    assert bad.returncode == 2 and "NNLITE_CACHE_MAX_GB='-3'" in bad.stderr
    both = nnlite("cache", "prune", "--all", "--max-gb", "1", "--cache-dir", str(root))
    assert both.returncode == 2 and "not both" in both.stderr
    missing = nnlite("cache", "info", "--cache-dir", str(tmp_path / "nowhere"))
    assert missing.returncode == 0 and "nothing cached" in missing.stdout
