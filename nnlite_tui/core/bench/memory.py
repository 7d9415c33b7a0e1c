"""Memory of the benchmark process: what it holds before loading, after loading, after the runs."""

from __future__ import annotations

import functools

from nnlite_tui.core.bench.block import MemoryFigures


def memory_snapshot() -> MemoryFigures:
    """This process's VmRSS/VmHWM (kB, /proc/self/status) and glibc's heap (mallinfo2), the host's
    counterpart of Debug.getNativeHeapSize/getNativeHeapAllocatedSize; None where unavailable."""
    out: MemoryFigures = {"vm_rss_kb": None, "vm_hwm_kb": None, "native_heap_size_kb": None,
                                  "native_heap_allocated_kb": None}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key == "VmRSS":
                    out["vm_rss_kb"] = int(value.split()[0])
                elif key == "VmHWM":
                    out["vm_hwm_kb"] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass  # not Linux: the values stay None
    heap = _mallinfo2()
    if heap is not None:
        out["native_heap_size_kb"], out["native_heap_allocated_kb"] = heap
    return out


def _mallinfo2() -> tuple[int, int] | None:
    fn = _mallinfo2_function()
    if fn is None:
        return None  # not glibc >= 2.33
    info = fn()
    return (info.arena + info.hblkhd) // 1024, (info.uordblks + info.hblkhd) // 1024


@functools.lru_cache(maxsize=1)
def _mallinfo2_function():
    """glibc's mallinfo2, looked up once: find_library runs ldconfig, tens of ms a benchmark should not pay."""
    import ctypes
    import ctypes.util

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = MallInfo2
    return fn
