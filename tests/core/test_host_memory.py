"""The host benchmark process runs with 2 MB pages for its heap, keeps the operator's own tunables,
and its result says which memory policy it ran under."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nnlite_tui.core.bench.settings import BenchSettings
from nnlite_tui.core.devices.host_bench import thp_mode
from nnlite_tui.core.devices.local import HUGE_PAGES_TUNABLE, LocalDevice, bench_env
from nnlite_tui.core.outcomes import Artifact

# Allocates 64 MB the way XNNPACK's packed weights are (one big malloc), touches it, then reports
# how much of this process's anonymous memory the kernel put in huge pages.
PROBE = """
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
n = 64 << 20
p = libc.malloc(n)
ctypes.memset(p, 1, n)
for line in open("/proc/self/smaps_rollup"):
    if line.startswith("AnonHugePages:"):
        print(int(line.split()[1]))
"""


def _huge_kb(env: dict[str, str]) -> int:
    return int(subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                              check=True).stdout)


def test_operator_tunables_are_kept(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
    assert bench_env()["GLIBC_TUNABLES"] == f"glibc.malloc.arena_max=2:{HUGE_PAGES_TUNABLE}"
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0")
    assert bench_env()["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=0"  # the operator's choice wins
    monkeypatch.delenv("GLIBC_TUNABLES")
    assert "GLIBC_TUNABLES" not in bench_env(huge_pages=False)


@pytest.mark.skipif(thp_mode() in (None, "never"), reason="this kernel gives no transparent huge pages")
def test_the_benchmark_environment_really_gets_huge_pages(monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert _huge_kb(bench_env(huge_pages=True)) >= 32 * 1024
    if thp_mode() == "madvise":  # without the tunable nothing asks for them
        assert _huge_kb(bench_env(huge_pages=False)) == 0


def test_host_result_names_the_memory_policy(tmp_path, good_models):
    from nnlite_tui.core.convert.options import ConvertOptions
    from nnlite_tui.core.convert.converter import Converter
    from nnlite_tui.core.sources.discover import discover

    (spec,) = discover([str(good_models)], include=["wide_conv"])
    with Converter(ConvertOptions(cache_dir=tmp_path / "cache")) as conv:
        converted = conv.convert(spec, tmp_path / "wide_conv.tflite")
    assert converted["ok"], converted
    settings = BenchSettings(warmup=1, runs=5, min_seconds=0)
    on = LocalDevice().benchmark(Artifact(converted["artifact_path"]), settings, "t")
    off = LocalDevice(huge_pages=False).benchmark(Artifact(converted["artifact_path"]), settings, "t")
    assert on["valid"] and off["valid"]
    assert HUGE_PAGES_TUNABLE in on["huge_pages"]["glibc_tunables"]
    assert not (off["huge_pages"]["glibc_tunables"] or "").count("hugetlb=1")
    assert on["huge_pages"]["thp_enabled"] == thp_mode()
