"""Per-op timings on the host from LiteRT's C API (libLiteRt.so in the ai-edge-litert wheel), via ctypes.

LiteRT's Python API has no profiler; its C API does (c_api.py): a compiled model built with the
runtime option `enable_profiling = true` owns a profiler whose events carry, per run, one event per
node (builtin kernels) or per XNNPACK operator (the delegate's internal ops). The library's version
is recorded so a result says what produced it.

`profile_ops(path, kernel_mode, runs, threads)` returns per node or XNNPACK operator one sample per
steady run (profile_events.steady_runs), the runs' totals from the runtime's own "Invoke" events, and
the profiler's own cost inside those totals (profile_events.profiler_cost_us).
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nnlite_tui.core.runtimes.litert.c_api import (CPU_OPTIONS_IDS, HW_CPU, RUNTIME_OPTIONS_ID, TENSOR_TYPE_BYTES,
                                                   REQUIRED_SYMBOLS, CEvent, ProfileError, ProfilerUnavailable, check_status,
                                                   library_version, load_library)
from nnlite_tui.core.runtimes.litert.profile_events import MAX_EVENT_US, STEADY_FACTOR, Event, ProfiledOp, fastest_quarter, median, aggregate, profiler_cost_us, snapshot_us, steady_runs
from nnlite_tui.core.runtimes.litert.profiler_calibration import PAIRS as CALIBRATION_PAIRS, SECONDS as CALIBRATION_SECONDS, calibrate

__all__ = ["MAX_EVENT_US", "REQUIRED_SYMBOLS", "STEADY_FACTOR", "Event", "ProfiledOp", "OpProfile", "ProfilerUnavailable",
           "ProfileError", "aggregate", "load_library", "profile_ops", "steady_runs"]

KERNEL_MODES = ("xnnpack", "builtin")


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


def _toml(kernel_mode: str, threads: int) -> bytes:
    return f'num_threads = {threads}\nkernel_mode = "{kernel_mode}"\n'.encode()


class _Session:
    """One compiled model with profiling on, and its input/output buffers; closes everything it made."""

    def __init__(self, lib: ctypes.CDLL, model_path: str, kernel_mode: str, threads: int, profiling: bool = True,
                 fills: Mapping[int, bytes] | None = None):
        # profiling=False: the same compiled model without a profiler (profiler_calibration).
        # fills: {tensor index: bytes} for input buffers (the timed runs' inputs); others get _fill's pattern.
        self.lib = lib
        self.fills = dict(fills or {})
        self._libc = ctypes.CDLL(None)
        self._libc.strdup.restype = ctypes.c_void_p
        self._libc.strdup.argtypes = [ctypes.c_char_p]
        self.env: ctypes.c_void_p | None = None
        self.model: ctypes.c_void_p | None = None
        self.options: ctypes.c_void_p | None = None
        self.compiled: ctypes.c_void_p | None = None
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
        check_status(lib.LiteRtCreateOpaqueOptions(identifier, data, free, ctypes.byref(opaque)),
               f"LiteRtCreateOpaqueOptions({identifier.decode()})")
        check_status(lib.LiteRtAddOpaqueOptions(self.options, opaque), "LiteRtAddOpaqueOptions")

    def _open(self, model_path: str, kernel_mode: str, threads: int, profiling: bool) -> None:
        lib = self.lib
        env, model, options, compiled = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        check_status(lib.LiteRtCreateEnvironment(0, None, ctypes.byref(env)), "LiteRtCreateEnvironment")
        self.env = env
        check_status(lib.LiteRtCreateModelFromFile(env, model_path.encode(), ctypes.byref(model)),
               f"LiteRtCreateModelFromFile({model_path})")
        self.model = model
        check_status(lib.LiteRtCreateOptions(ctypes.byref(options)), "LiteRtCreateOptions")
        self.options = options
        check_status(lib.LiteRtSetOptionsHardwareAccelerators(options, HW_CPU), "LiteRtSetOptionsHardwareAccelerators")
        if profiling:
            self._opaque(RUNTIME_OPTIONS_ID, b"enable_profiling = true\n")
        for identifier in CPU_OPTIONS_IDS:
            self._opaque(identifier, _toml(kernel_mode, threads))
        check_status(lib.LiteRtCreateCompiledModel(env, model, options, ctypes.byref(compiled)), "LiteRtCreateCompiledModel")
        self.compiled = compiled
        signature = ctypes.c_void_p()
        check_status(lib.LiteRtGetModelSignature(model, 0, ctypes.byref(signature)), "LiteRtGetModelSignature")
        for is_input in (True, False):
            count = ctypes.c_size_t()
            get_count = lib.LiteRtGetNumSignatureInputs if is_input else lib.LiteRtGetNumSignatureOutputs
            check_status(get_count(signature, ctypes.byref(count)), "LiteRtGetNumSignature{In,Out}puts")
            for index in range(count.value):
                buffer = self._buffer(signature, index, is_input)
                (self.inputs if is_input else self.outputs).append(buffer)

    def _buffer(self, signature: ctypes.c_void_p, index: int, is_input: bool) -> ctypes.c_void_p:
        lib = self.lib
        tensor, requirements, buffer = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        get_tensor = lib.LiteRtGetSignatureInputTensorByIndex if is_input else lib.LiteRtGetSignatureOutputTensorByIndex
        check_status(get_tensor(signature, index, ctypes.byref(tensor)), "LiteRtGetSignatureTensorByIndex")
        tensor_type = ctypes.create_string_buffer(TENSOR_TYPE_BYTES)
        check_status(lib.LiteRtGetRankedTensorType(tensor, tensor_type), "LiteRtGetRankedTensorType")
        get_req = (lib.LiteRtGetCompiledModelInputBufferRequirements if is_input
                   else lib.LiteRtGetCompiledModelOutputBufferRequirements)
        check_status(get_req(self.compiled, 0, index, ctypes.byref(requirements)), "LiteRtGetCompiledModelBufferRequirements")
        check_status(lib.LiteRtCreateManagedTensorBufferFromRequirements(self.env, tensor_type, requirements,
                                                                   ctypes.byref(buffer)),
               "LiteRtCreateManagedTensorBufferFromRequirements")
        if is_input:
            self._fill(buffer, self.fills.get(self._tensor_index(tensor)))
        return buffer

    def _tensor_index(self, tensor: ctypes.c_void_p) -> int:
        index = ctypes.c_uint32()
        check_status(self.lib.LiteRtGetTensorIndex(tensor, ctypes.byref(index)), "LiteRtGetTensorIndex")
        return index.value

    def _fill(self, buffer: ctypes.c_void_p, data: bytes | None = None) -> None:
        """`data` (a tensor's bytes), else seeded random bytes; never more than the buffer holds (a wrong
        size would corrupt memory)."""
        size, host = ctypes.c_size_t(), ctypes.c_void_p()
        check_status(self.lib.LiteRtGetTensorBufferSize(buffer, ctypes.byref(size)), "LiteRtGetTensorBufferSize")
        check_status(self.lib.LiteRtGetTensorBufferHostMemory(buffer, ctypes.byref(host)), "LiteRtGetTensorBufferHostMemory")
        if data is not None:
            if len(data) > size.value or not host.value:
                raise ProfileError(f"an input of {len(data)} bytes does not fit its {size.value}-byte buffer")
            ctypes.memmove(host.value, data, len(data))
        elif host.value and size.value:
            import numpy as np

            # Small floats (a byte pattern of uniform [-1, 1) float32) so no kernel sees NaN or denormals.
            values = np.random.default_rng(0).uniform(-1, 1, size.value // 4 + 1).astype(np.float32).tobytes()
            ctypes.memmove(host.value, values, size.value)

    def run(self) -> None:
        n_in, n_out = len(self.inputs), len(self.outputs)
        ins = (ctypes.c_void_p * max(n_in, 1))(*self.inputs)
        outs = (ctypes.c_void_p * max(n_out, 1))(*self.outputs)
        check_status(self.lib.LiteRtRunCompiledModel(self.compiled, 0, n_in, ins, n_out, outs), "LiteRtRunCompiledModel")

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
    check_status(lib.LiteRtGetNumProfilerEvents(profiler, ctypes.byref(count)), "LiteRtGetNumProfilerEvents")
    if count.value <= 0:
        return []
    events = (CEvent * count.value)()
    check_status(lib.LiteRtGetProfilerEvents(profiler, count.value, events), "LiteRtGetProfilerEvents")
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
        plain_us: list[float] = []
        idle_us: list[float] = []
        recording_us: list[float] = []
        until = time.monotonic() + CALIBRATION_SECONDS
        while len(plain_us) < CALIBRATION_PAIRS and time.monotonic() < until:
            plain_us.append(_timed(plain))
            idle_us.append(_timed(idle))
            # Started afresh before every run: a full profile buffer would stop recording.
            check_status(lib.LiteRtStartProfiler(profiler), "LiteRtStartProfiler")
            recording_us.append(_timed(recording))
        check_status(lib.LiteRtStopProfiler(profiler), "LiteRtStopProfiler")
    finally:
        for session in sessions:
            session.close()
    base = fastest_quarter(plain_us)
    return fastest_quarter(idle_us) - base, fastest_quarter(recording_us) - base


def timed_fills(model_path: str, seed: int, ranges: Sequence[Sequence[int] | None] = ()) -> dict[int, bytes]:
    """{input tensor index: bytes} of the inputs the timed runs fed (bench/input_fill.py's seeded fill,
    integer inputs inside `ranges`, in the interpreter's input order as the protocol fills them)."""
    from ai_edge_litert.interpreter import Interpreter

    from nnlite_tui.core.bench.input_fill import make_input

    details = Interpreter(model_path=model_path).get_input_details()
    if ranges and len(ranges) != len(details):
        raise ProfileError(f"{len(ranges)} input ranges given for a model of {len(details)} inputs")
    return {int(d["index"]): make_input(d["shape"], d["dtype"], seed, d.get("quantization"),
                                        ranges[i] if ranges else None).tobytes()
            for i, d in enumerate(details)}


def profile_ops(model_path: str, kernel_mode: str = "xnnpack", runs: int = 20, warmup: int = 3,
                threads: int = 1, lib: ctypes.CDLL | None = None, fills: Mapping[int, bytes] | None = None) -> OpProfile:
    """Profile `runs` runs of the model after `warmup` unprofiled ones; raises ProfilerUnavailable/ProfileError.
    `fills`: {input tensor index: bytes}, the inputs to run on (timed_fills)."""
    if kernel_mode not in KERNEL_MODES:
        raise ValueError(f"kernel_mode {kernel_mode!r} not one of {KERNEL_MODES}")
    if not os.path.isfile(model_path):
        raise ProfileError(f"model file not found: {model_path}")
    lib = lib or load_library()
    collection = calibrate(lib, kernel_mode, threads, profiler_added_costs)
    session = _Session(lib, model_path, kernel_mode, threads, fills=fills)
    try:
        profiler = session.profiler()
        for _ in range(warmup):
            session.run()
        check_status(lib.LiteRtResetProfiler(profiler), "LiteRtResetProfiler")
        check_status(lib.LiteRtStartProfiler(profiler), "LiteRtStartProfiler")
        profiled_us = [_timed(session) for _ in range(runs)]
        check_status(lib.LiteRtStopProfiler(profiler), "LiteRtStopProfiler")
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
