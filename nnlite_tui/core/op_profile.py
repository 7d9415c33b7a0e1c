"""Per-op timings on the host from LiteRT's C API (libLiteRt.so in the ai-edge-litert wheel), via ctypes.

LiteRT's Python API has no profiler; its C API does: a compiled model built with the runtime option
`enable_profiling = true` owns a profiler whose events carry, per run, one event per node
(builtin kernels) or per XNNPACK operator (the delegate's internal ops). This is the only module
that touches that C API. It is not a documented Python API, so every symbol is looked up first and a
missing one raises ProfilerUnavailable with a clear message, never a crash. So does a library
version whose event layout was not checked (the events' memory layout differs from the upstream C
header; see _MemoryUsage). The version is recorded so a result says what produced it.

`profile_ops(path, kernel_mode, runs, threads)` returns per node or XNNPACK operator one sample per
steady run (profile_events.steady_runs), the runs' totals from the runtime's own "Invoke" events, and
the profiler's own cost inside those totals (profile_events.profiler_cost_us).
"""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass
from importlib import metadata

from nnlite_tui.core.predict.profile_events import MAX_EVENT_US, STEADY_FACTOR, Event, ProfiledOp, fastest_quarter, \
    median, aggregate, profiler_cost_us, snapshot_us, steady_runs
from nnlite_tui.core.predict.profiler_calibration import PAIRS as CALIBRATION_PAIRS, SECONDS as CALIBRATION_SECONDS, \
    calibrate

__all__ = ["MAX_EVENT_US", "STEADY_FACTOR", "Event", "ProfiledOp", "OpProfile", "ProfilerUnavailable", "ProfileError",
           "aggregate", "load_library", "profile_ops", "steady_runs"]

KERNEL_MODES = ("xnnpack", "builtin")
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


class _MemoryUsage(ctypes.Structure):
    # tflite::profiling::memory::MemoryUsage as built into 2.3.0: three 8-byte fields (a 104-byte event,
    # measured from the stride of LiteRtGetProfilerEvents' array), not the two of the upstream C header.
    _fields_ = [("mem_footprint_kb", ctypes.c_int64), ("total_allocated_bytes", ctypes.c_size_t),
                ("in_use_allocated_bytes", ctypes.c_size_t)]


class _Event(ctypes.Structure):
    # ProfiledEventData of litert_profiler_event.h (its C definition).
    _fields_ = [("tag", ctypes.c_char_p), ("event_type", ctypes.c_int), ("start_timestamp_us", ctypes.c_uint64),
                ("elapsed_time_us", ctypes.c_uint64), ("begin_mem_usage", _MemoryUsage),
                ("end_mem_usage", _MemoryUsage), ("event_metadata1", ctypes.c_uint64),
                ("event_metadata2", ctypes.c_uint64), ("event_source", ctypes.c_int)]


@dataclass
class OpProfile:
    kernel_mode: str
    runs: int
    threads: int
    wall_us: float  # median wall time of one profiled run, seen from Python
    invoke_us: float  # mean of the runtime's own "Invoke" events: the profiled pass's total per run
    invoke_median_us: float
    # The profiler's own time inside invoke_us (None: not measurable): one memory snapshot, and the
    # per-op collection and storing of events (profiler_calibration) for this many op events per run.
    profiler_us: float | None
    snapshot_us: float | None
    collection_us: float
    runs_kept: int  # the steady runs the figures come from (see steady_runs)
    ops: list[ProfiledOp]
    library: str
    library_version: str


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
    _declare(lib)
    return lib


def _declare(lib: ctypes.CDLL) -> None:
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
        "LiteRtGetProfilerEvents": (vp, i, ctypes.POINTER(_Event)),
    }
    for name, argtypes in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = list(argtypes)
        fn.restype = ctypes.c_int
    for name in ("LiteRtDestroyEnvironment", "LiteRtDestroyModel", "LiteRtDestroyOptions",
                 "LiteRtDestroyCompiledModel", "LiteRtDestroyTensorBuffer"):
        getattr(lib, name).argtypes, getattr(lib, name).restype = [vp], None


def _check(status: int, what: str) -> None:
    if status != 0:
        raise ProfileError(f"{what} failed (LiteRtStatus {status})")


def _toml(kernel_mode: str, threads: int) -> bytes:
    return f'num_threads = {threads}\nkernel_mode = "{kernel_mode}"\n'.encode()


class _Session:
    """One compiled model with profiling on, and its input/output buffers; closes everything it made."""

    def __init__(self, lib: ctypes.CDLL, model_path: str, kernel_mode: str, threads: int, profiling: bool = True):
        # profiling=False: the same compiled model without a profiler (profiler_calibration).
        self.lib = lib
        self._libc = ctypes.CDLL(None)
        self._libc.strdup.restype = ctypes.c_void_p
        self._libc.strdup.argtypes = [ctypes.c_char_p]
        self.env = self.model = self.options = self.compiled = None
        self.inputs: list[ctypes.c_void_p] = []
        self.outputs: list[ctypes.c_void_p] = []
        try:
            self._open(model_path, kernel_mode, threads, profiling)
        except BaseException:
            self.close()
            raise

    def _opaque(self, identifier: bytes, payload: bytes) -> None:
        lib = self.lib
        data = self._libc.strdup(payload)  # owned by the options from here on, freed by its deleter
        opaque = ctypes.c_void_p()
        free = ctypes.cast(self._libc.free, ctypes.c_void_p)
        _check(lib.LiteRtCreateOpaqueOptions(identifier, data, free, ctypes.byref(opaque)),
               f"LiteRtCreateOpaqueOptions({identifier.decode()})")
        _check(lib.LiteRtAddOpaqueOptions(self.options, opaque), "LiteRtAddOpaqueOptions")

    def _open(self, model_path: str, kernel_mode: str, threads: int, profiling: bool) -> None:
        lib = self.lib
        env, model, options, compiled = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        _check(lib.LiteRtCreateEnvironment(0, None, ctypes.byref(env)), "LiteRtCreateEnvironment")
        self.env = env
        _check(lib.LiteRtCreateModelFromFile(env, model_path.encode(), ctypes.byref(model)),
               f"LiteRtCreateModelFromFile({model_path})")
        self.model = model
        _check(lib.LiteRtCreateOptions(ctypes.byref(options)), "LiteRtCreateOptions")
        self.options = options
        _check(lib.LiteRtSetOptionsHardwareAccelerators(options, HW_CPU), "LiteRtSetOptionsHardwareAccelerators")
        if profiling:
            self._opaque(RUNTIME_OPTIONS_ID, b"enable_profiling = true\n")
        for identifier in CPU_OPTIONS_IDS:
            self._opaque(identifier, _toml(kernel_mode, threads))
        _check(lib.LiteRtCreateCompiledModel(env, model, options, ctypes.byref(compiled)), "LiteRtCreateCompiledModel")
        self.compiled = compiled
        signature = ctypes.c_void_p()
        _check(lib.LiteRtGetModelSignature(model, 0, ctypes.byref(signature)), "LiteRtGetModelSignature")
        for is_input in (True, False):
            count = ctypes.c_size_t()
            get_count = lib.LiteRtGetNumSignatureInputs if is_input else lib.LiteRtGetNumSignatureOutputs
            _check(get_count(signature, ctypes.byref(count)), "LiteRtGetNumSignature{In,Out}puts")
            for index in range(count.value):
                buffer = self._buffer(signature, index, is_input)
                (self.inputs if is_input else self.outputs).append(buffer)

    def _buffer(self, signature: ctypes.c_void_p, index: int, is_input: bool) -> ctypes.c_void_p:
        lib = self.lib
        tensor, requirements, buffer = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        get_tensor = lib.LiteRtGetSignatureInputTensorByIndex if is_input else lib.LiteRtGetSignatureOutputTensorByIndex
        _check(get_tensor(signature, index, ctypes.byref(tensor)), "LiteRtGetSignatureTensorByIndex")
        tensor_type = ctypes.create_string_buffer(TENSOR_TYPE_BYTES)
        _check(lib.LiteRtGetRankedTensorType(tensor, tensor_type), "LiteRtGetRankedTensorType")
        get_req = (lib.LiteRtGetCompiledModelInputBufferRequirements if is_input
                   else lib.LiteRtGetCompiledModelOutputBufferRequirements)
        _check(get_req(self.compiled, 0, index, ctypes.byref(requirements)), "LiteRtGetCompiledModelBufferRequirements")
        _check(lib.LiteRtCreateManagedTensorBufferFromRequirements(self.env, tensor_type, requirements,
                                                                   ctypes.byref(buffer)),
               "LiteRtCreateManagedTensorBufferFromRequirements")
        if is_input:
            self._fill(buffer)
        return buffer

    def _fill(self, buffer: ctypes.c_void_p) -> None:
        """Seeded random bytes, sized by the buffer itself (a wrong size would corrupt memory)."""
        size, host = ctypes.c_size_t(), ctypes.c_void_p()
        _check(self.lib.LiteRtGetTensorBufferSize(buffer, ctypes.byref(size)), "LiteRtGetTensorBufferSize")
        _check(self.lib.LiteRtGetTensorBufferHostMemory(buffer, ctypes.byref(host)), "LiteRtGetTensorBufferHostMemory")
        if host.value and size.value:
            import numpy as np

            # Small floats (a byte pattern of uniform [-1, 1) float32) so no kernel sees NaN or denormals.
            values = np.random.default_rng(0).uniform(-1, 1, size.value // 4 + 1).astype(np.float32).tobytes()
            ctypes.memmove(host.value, values, size.value)

    def run(self) -> None:
        n_in, n_out = len(self.inputs), len(self.outputs)
        ins = (ctypes.c_void_p * max(n_in, 1))(*self.inputs)
        outs = (ctypes.c_void_p * max(n_out, 1))(*self.outputs)
        _check(self.lib.LiteRtRunCompiledModel(self.compiled, 0, n_in, ins, n_out, outs), "LiteRtRunCompiledModel")

    def profiler(self) -> ctypes.c_void_p:
        profiler = ctypes.c_void_p()
        status = self.lib.LiteRtCompiledModelGetProfiler(self.compiled, ctypes.byref(profiler))
        if status != 0 or not profiler.value:
            raise ProfilerUnavailable(
                f"ai-edge-litert {library_version()} gave no profiler (status {status}): its runtime options "
                f"identifier is not {RUNTIME_OPTIONS_ID.decode()!r} in this version")
        return profiler

    def close(self) -> None:
        lib = self.lib
        for buffer in self.inputs + self.outputs:
            lib.LiteRtDestroyTensorBuffer(buffer)
        self.inputs, self.outputs = [], []
        if self.compiled:
            lib.LiteRtDestroyCompiledModel(self.compiled)
        if self.options:
            lib.LiteRtDestroyOptions(self.options)
        if self.model:
            lib.LiteRtDestroyModel(self.model)
        if self.env:
            lib.LiteRtDestroyEnvironment(self.env)
        self.env = self.model = self.options = self.compiled = None


def _events(lib: ctypes.CDLL, profiler: ctypes.c_void_p) -> list[Event]:
    """The profiler's events, copied out: their tags live in the compiled model and die with it."""
    count = ctypes.c_int()
    _check(lib.LiteRtGetNumProfilerEvents(profiler, ctypes.byref(count)), "LiteRtGetNumProfilerEvents")
    if count.value <= 0:
        return []
    events = (_Event * count.value)()
    _check(lib.LiteRtGetProfilerEvents(profiler, count.value, events), "LiteRtGetProfilerEvents")
    return [Event(bytes(ev.tag or b""), int(ev.event_type), int(ev.elapsed_time_us), int(ev.event_metadata1),
                  int(ev.start_timestamp_us)) for ev in events]


def _timed(session: _Session) -> float:
    t0 = time.perf_counter_ns()
    session.run()
    return (time.perf_counter_ns() - t0) / 1e3


def profiler_added_costs(lib, path: str, kernel_mode: str, threads: int) -> tuple[float, float]:
    """What an idle and a recording profiler add to a run of the model at `path`, µs."""
    sessions: list = []
    try:
        for profiling in (False, True, True):  # none, attached but idle, recording
            sessions.append(_Session(lib, path, kernel_mode, threads, profiling=profiling))
        plain, idle, recording = sessions
        idle.profiler()
        profiler = recording.profiler()
        for _ in range(20):
            for session in sessions:
                session.run()
        plain_us, idle_us, recording_us = [], [], []
        until = time.monotonic() + CALIBRATION_SECONDS
        while len(plain_us) < CALIBRATION_PAIRS and time.monotonic() < until:
            plain_us.append(_timed(plain))
            idle_us.append(_timed(idle))
            # Started afresh before every run: a full profile buffer would stop recording.
            _check(lib.LiteRtStartProfiler(profiler), "LiteRtStartProfiler")
            recording_us.append(_timed(recording))
        _check(lib.LiteRtStopProfiler(profiler), "LiteRtStopProfiler")
    finally:
        for session in sessions:
            session.close()
    base = fastest_quarter(plain_us)
    return fastest_quarter(idle_us) - base, fastest_quarter(recording_us) - base


def profile_ops(model_path: str, kernel_mode: str = "xnnpack", runs: int = 20, warmup: int = 3,
                threads: int = 1, lib: ctypes.CDLL | None = None) -> OpProfile:
    """Profile `runs` runs of the model after `warmup` unprofiled ones; raises ProfilerUnavailable/ProfileError."""
    if kernel_mode not in KERNEL_MODES:
        raise ValueError(f"kernel_mode {kernel_mode!r} not one of {KERNEL_MODES}")
    if not os.path.isfile(model_path):
        raise ProfileError(f"model file not found: {model_path}")
    lib = lib or load_library()
    collection = calibrate(lib, kernel_mode, threads, profiler_added_costs)
    session = _Session(lib, model_path, kernel_mode, threads)
    try:
        profiler = session.profiler()
        for _ in range(warmup):
            session.run()
        _check(lib.LiteRtResetProfiler(profiler), "LiteRtResetProfiler")
        _check(lib.LiteRtStartProfiler(profiler), "LiteRtStartProfiler")
        profiled_us = [_timed(session) for _ in range(runs)]
        _check(lib.LiteRtStopProfiler(profiler), "LiteRtStopProfiler")
        events = _events(lib, profiler)
    finally:
        session.close()
    ops, invokes = aggregate(events)
    keep = steady_runs(invokes)
    for op in ops:
        op.samples_us = [op.samples_us[i] for i in keep]
    totals = sorted(invokes[i] for i in keep)
    wall_us = median(profiled_us)
    snapshot = snapshot_us(events)
    return OpProfile(kernel_mode=kernel_mode, runs=runs, threads=threads, wall_us=wall_us,
                     invoke_us=sum(totals) / len(totals) if totals else wall_us,
                     invoke_median_us=float(totals[len(totals) // 2]) if totals else wall_us,
                     profiler_us=profiler_cost_us(snapshot, collection.cost_us(len(ops))), snapshot_us=snapshot,
                     collection_us=collection.cost_us(len(ops)), ops=ops, runs_kept=len(keep),
                     library=os.path.basename(getattr(lib, "_name", "") or "libLiteRt.so"),
                     library_version=library_version())
