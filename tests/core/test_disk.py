"""Free-space checks on a real small filesystem (the tmpfs fixture of test_convert_cache)."""

from __future__ import annotations

from nnlite_tui.core.convert.cache_scan import cached_bytes
from nnlite_tui.core.disk import GB, MIN_FREE_FLOOR, default_min_free, free_bytes, low_space
from tests.core import test_convert_cache
from tests.core.test_convert_cache import MB, ConversionCache, _fill, _key, _store

small_fs = test_convert_cache.small_fs  # the 8 MB tmpfs fixture


def test_default_threshold_is_two_gb_or_five_percent():
    assert default_min_free(10 * GB) == MIN_FREE_FLOOR == 2 * GB
    assert default_min_free(1000 * GB) == 50 * GB


def test_a_small_filesystem_is_low_and_the_message_says_what_to_free(small_fs):
    cache = ConversionCache(small_fs / "cache", max_gb=1)
    _store(cache, _key(1), 3 * MB)
    run_dir = small_fs / "runs" / "r1"  # not created yet: its filesystem is still known
    check = low_space(run_dir, cache_dir=cache.root, cache_bytes=cached_bytes)
    assert check.low and check.mount == small_fs and check.min_free_bytes == 2 * GB
    assert check.free_bytes == free_bytes(run_dir) < 6 * MB
    assert f"low disk space on {small_fs}" in check.message and str(run_dir) in check.message
    assert "3.0 MB" in check.message and "nnlite cache prune" in check.message
    assert "delete run directories" in check.message

    assert not low_space(run_dir, min_free_bytes=MB).low
    _fill(small_fs)
    full = low_space(run_dir, min_free_bytes=MB)
    assert full.low and full.free_bytes == 0 and "free at least 1.0 MB" in full.message


def test_a_cache_on_another_filesystem_is_not_offered(small_fs, tmp_path):
    check = low_space(small_fs, cache_dir=tmp_path / "elsewhere", cache_bytes=cached_bytes)
    assert check.low and "nnlite cache prune" not in check.message
