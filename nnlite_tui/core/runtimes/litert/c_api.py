"""LiteRT's C API (libLiteRt.so in the ai-edge-litert wheel) through ctypes: the library, its
symbols and their signatures, the event layout, and the errors a call can end in. Only the op
profiler (op_profile.py) uses it. It is not a documented Python API, so every symbol is looked up
first and a missing one raises ProfilerUnavailable with a clear message, never a crash; so does a
library version whose event layout was not checked (see MemoryUsage).
"""

from __future__ import annotations

import ctypes
import os
from importlib import metadata

# The versions whose option identifiers and event layout were checked against this module.
TESTED_VERSIONS = ("2.3.",)
# On 2.3.0 the runtime options are read under this identifier; the one in the newer upstream header
# ("runtime") yields a null profiler there.
RUNTIME_OPTIONS_ID = b"runtime_options_string"
CPU_OPTIONS_IDS = (b"cpu_delegate", b"xnnpack")
HW_CPU = 1
# LiteRtRankedTensorType is filled and passed back opaquely; its size varies by build (<= ~80 bytes).
TENSOR_TYPE_BYTES = 256

REQUIRED_SYMBOLS = (
    "LiteRtCreateEnvironment", "LiteRtDestroyEnvironment", "LiteRtCreateModelFromFile", "LiteRtDestroyModel",
    "LiteRtGetModelSignature", "LiteRtGetNumSignatureInputs", "LiteRtGetNumSignatureOutputs",
    "LiteRtGetSignatureInputTensorByIndex", "LiteRtGetSignatureOutputTensorByIndex", "LiteRtGetRankedTensorType",
    "LiteRtGetTensorIndex",
    "LiteRtCreateOptions", "LiteRtDestroyOptions", "LiteRtSetOptionsHardwareAccelerators",
    "LiteRtCreateOpaqueOptions", "LiteRtAddOpaqueOptions", "LiteRtCreateCompiledModel",
    "LiteRtDestroyCompiledModel", "LiteRtGetCompiledModelInputBufferRequirements",
    "LiteRtGetCompiledModelOutputBufferRequirements", "LiteRtCreateManagedTensorBufferFromRequirements",
    "LiteRtDestroyTensorBuffer", "LiteRtGetTensorBufferHostMemory", "LiteRtGetTensorBufferSize",
    "LiteRtRunCompiledModel", "LiteRtCompiledModelGetProfiler", "LiteRtResetProfiler", "LiteRtStartProfiler",
    "LiteRtStopProfiler", "LiteRtGetNumProfilerEvents", "LiteRtGetProfilerEvents",
)


class ProfilerUnavailable(RuntimeError):
    """Per-op profiling cannot run with this LiteRT library (missing symbol, no profiler, ...)."""


class ProfileError(RuntimeError):
    """A C API call failed while profiling a model."""


class MemoryUsage(ctypes.Structure):
    # tflite::profiling::memory::MemoryUsage as built into 2.3.0: three 8-byte fields (a 104-byte event,
    # measured from the stride of LiteRtGetProfilerEvents' array), not the two of the upstream C header.
    _fields_ = [("mem_footprint_kb", ctypes.c_int64), ("total_allocated_bytes", ctypes.c_size_t),
                ("in_use_allocated_bytes", ctypes.c_size_t)]


class CEvent(ctypes.Structure):
    # ProfiledEventData of litert_profiler_event.h (its C definition).
    _fields_ = [("tag", ctypes.c_char_p), ("event_type", ctypes.c_int), ("start_timestamp_us", ctypes.c_uint64),
                ("elapsed_time_us", ctypes.c_uint64), ("begin_mem_usage", MemoryUsage),
                ("end_mem_usage", MemoryUsage), ("event_metadata1", ctypes.c_uint64),
                ("event_metadata2", ctypes.c_uint64), ("event_source", ctypes.c_int)]


def library_path() -> str:
    import ai_edge_litert

    return os.path.join(os.path.dirname(ai_edge_litert.__file__), "libLiteRt.so")


def library_version() -> str:
    try:
        return metadata.version("ai-edge-litert")
    except metadata.PackageNotFoundError:
        return "unknown"


def load_library(path: str | None = None, required: tuple[str, ...] | None = None) -> ctypes.CDLL:
    """Open libLiteRt.so and check every symbol this module calls; ProfilerUnavailable names the gap."""
    path = path or library_path()
    required = REQUIRED_SYMBOLS if required is None else required
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        raise ProfilerUnavailable(f"cannot load LiteRT's C library {path}: {exc}") from exc
    version = library_version()
    if not version.startswith(TESTED_VERSIONS) and not os.environ.get("NNLITE_PROFILE_ANY_LITERT"):
        # The event layout was measured on these versions; another build could be misread silently.
        raise ProfilerUnavailable(
            f"ai-edge-litert {version} is not a version per-op profiling was checked against "
            f"({', '.join(v + 'x' for v in TESTED_VERSIONS)}); set NNLITE_PROFILE_ANY_LITERT=1 to try anyway")
    missing = [name for name in required if not hasattr(lib, name)]
    if missing:
        raise ProfilerUnavailable(
            f"{path} (ai-edge-litert {library_version()}) lacks {', '.join(missing)}: per-op profiling needs "
            f"a LiteRT whose C API matches {'/'.join(v + 'x' for v in TESTED_VERSIONS)}")
    declare(lib)
    return lib


def declare(lib: ctypes.CDLL) -> None:
    vp, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    pvp = ctypes.POINTER(vp)
    sigs = {
        "LiteRtCreateEnvironment": (i, ctypes.c_void_p, pvp),
        "LiteRtCreateModelFromFile": (vp, ctypes.c_char_p, pvp),
        "LiteRtGetModelSignature": (vp, sz, pvp),
        "LiteRtGetNumSignatureInputs": (vp, ctypes.POINTER(sz)),
        "LiteRtGetNumSignatureOutputs": (vp, ctypes.POINTER(sz)),
        "LiteRtGetSignatureInputTensorByIndex": (vp, sz, pvp),
        "LiteRtGetSignatureOutputTensorByIndex": (vp, sz, pvp),
        "LiteRtGetRankedTensorType": (vp, ctypes.c_char_p),
        "LiteRtGetTensorIndex": (vp, ctypes.POINTER(ctypes.c_uint32)),
        "LiteRtCreateOptions": (pvp,),
        "LiteRtSetOptionsHardwareAccelerators": (vp, i),
        "LiteRtCreateOpaqueOptions": (ctypes.c_char_p, vp, vp, pvp),
        "LiteRtAddOpaqueOptions": (vp, vp),
        "LiteRtCreateCompiledModel": (vp, vp, vp, pvp),
        "LiteRtGetCompiledModelInputBufferRequirements": (vp, sz, sz, pvp),
        "LiteRtGetCompiledModelOutputBufferRequirements": (vp, sz, sz, pvp),
        "LiteRtCreateManagedTensorBufferFromRequirements": (vp, ctypes.c_char_p, vp, pvp),
        "LiteRtGetTensorBufferHostMemory": (vp, pvp),
        "LiteRtGetTensorBufferSize": (vp, ctypes.POINTER(sz)),
        "LiteRtRunCompiledModel": (vp, sz, sz, pvp, sz, pvp),
        "LiteRtCompiledModelGetProfiler": (vp, pvp),
        "LiteRtResetProfiler": (vp,),
        "LiteRtStartProfiler": (vp,),
        "LiteRtStopProfiler": (vp,),
        "LiteRtGetNumProfilerEvents": (vp, ctypes.POINTER(i)),
        "LiteRtGetProfilerEvents": (vp, i, ctypes.POINTER(CEvent)),
    }
    for name, argtypes in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = list(argtypes)
        fn.restype = ctypes.c_int
    for name in ("LiteRtDestroyEnvironment", "LiteRtDestroyModel", "LiteRtDestroyOptions",
                 "LiteRtDestroyCompiledModel", "LiteRtDestroyTensorBuffer"):
        getattr(lib, name).argtypes, getattr(lib, name).restype = [vp], None


def check_status(status: int, what: str) -> None:
    if status != 0:
        raise ProfileError(f"{what} failed (LiteRtStatus {status})")
