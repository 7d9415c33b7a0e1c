"""ExecuTorch's runtime as a benchmark session (bench/protocol.py's BenchSession), in the host
benchmark process.

Only ExecuTorch's C++ binding is imported (`executorch.extension.pybindings._C`, 0.01 s after torch):
`executorch.runtime` imports `executorch.exir` first, about 8 s and 130 MB, which this process never
needs. The timed call is the binding's own `Method.execute` (no wrapper of ours inside the timed
region), the counterpart of LiteRT's `Interpreter.invoke`; the binding has no native per-run clock
outside ETDump (which turns XNNPACK's per-operator profiling on and changes what is timed), so the
native clock is null.

Inputs are set again before every run, outside the timed interval (`reset_inputs`): the memory
planner lets later activations reuse an input's buffer once it is consumed, so a second execute() on
inputs set once reads what the last run left there (a different output, or an embedding failing on
garbage ids) unless the whole graph is one XNNPACK partition.

XNNPACK runs on ExecuTorch's process-wide thread pool, sized here once, before the first program is
loaded: resetting it after a method is loaded hangs or crashes the 1.5.1 runtime (the XNNPACK runtimes
hold the old pool), so one process measures at one thread count.
"""

from __future__ import annotations

import functools
from typing import Any

from nnlite_tui.core.bench.block import Delegation, InputDetail, SessionTiming
from nnlite_tui.core.bench.settings import BenchmarkError, BenchSettings
from nnlite_tui.core.runtimes.executorch.program import SCALAR_TYPES, ProgramError, ProgramFacts, read_program

XNNPACK_BACKEND = "XnnpackBackend"  # the name ExecuTorch's XNNPACK delegate registers under
_threads_fixed: list[int] = []  # the pool size once a program has been loaded in this process


def binding():
    """ExecuTorch's C++ binding (it needs libtorch loaded first)."""
    import torch  # noqa: F401

    from executorch.extension.pybindings import _C

    return _C


def set_threads(threads: int) -> int:
    """Size XNNPACK's pool before any program is loaded; BenchmarkError once it cannot change."""
    c = binding()
    if _threads_fixed:
        if _threads_fixed[0] != threads:
            raise BenchmarkError("load", f"threads {threads}: ExecuTorch's thread pool has {_threads_fixed[0]} threads "
                                         "since a program was loaded in this process, and cannot change after that")
        return threads
    if c._threadpool_get_thread_count() != threads:
        c._unsafe_reset_threadpool(threads)
    _threads_fixed.append(int(c._threadpool_get_thread_count()))
    return _threads_fixed[0]


def facts_of(path: str) -> ProgramFacts | None:
    try:
        return read_program(path)
    except ProgramError:
        return None  # the runtime's own load names the problem


def host_backend(requested: str, path: str | None = None) -> tuple[str, str | None]:
    """ExecuTorch's delegates are fixed at export: the program's XNNPACK partitions run, or (a program
    without one) ExecuTorch's own CPU kernels, as the app reports it."""
    facts = facts_of(path) if path else None
    if facts is not None and XNNPACK_BACKEND not in facts.backends:
        return "cpu", (f"xnnpack -> cpu: the program's forward method has no {XNNPACK_BACKEND} delegate (backends: "
                       f"{', '.join(facts.backends) or 'none'}); ExecuTorch ran it on its own CPU kernels")
    if requested != "xnnpack":
        return "xnnpack", (f"{requested} is not available with runtime executorch (its program's delegates are "
                           "fixed at export); ran xnnpack")
    return "xnnpack", None


def delegation_block(facts: ProgramFacts | None) -> Delegation:
    """What the program names (as Android's MethodMetadata.getBackends does) and how many delegate calls
    it makes; how many graph nodes a partition took is in the conversion record, not in the program."""
    if facts is None:
        return {"source": "method metadata", "delegate": None, "delegated_nodes": None, "total_nodes": None,
                "partitions": None, "full": None, "applied": [], "error": "the program's plan could not be read",
                "backends": []}
    return {"source": "method metadata", "delegate": facts.backends[0] if facts.backends else None,
            "delegated_nodes": None, "total_nodes": None, "partitions": facts.delegate_calls,
            "full": facts.fully_delegated, "applied": [], "error": None, "backends": list(facts.backends)}


class ExecuTorchSession:
    """A loaded program's forward method (bench.protocol.BenchSession)."""

    timing: SessionTiming = {"wall_clock": "Method.execute", "native_clock": None}
    native = None

    def __init__(self, program, method, path: str):
        import numpy as np

        self.program, self.method, self.path = program, method, path
        self._facts: list[ProgramFacts | None] = []
        meta = method.method_meta()
        self._details: list[InputDetail] = []
        for i in range(meta.num_inputs()):
            info = meta.input_tensor_meta(i)
            code = int(info.dtype())
            name = SCALAR_TYPES.get(code)
            if name is None or not hasattr(np, name):
                raise BenchmarkError("load", f"input {i} has ExecuTorch scalar type {code}, which cannot be fed from numpy")
            self._details.append({"index": i, "shape": [int(d) for d in info.sizes()], "dtype": getattr(np, name),
                                  "quantization": None})
        self._outputs = [[int(d) for d in meta.output_tensor_meta(i).sizes()] for i in range(meta.num_outputs())]
        self._fed: list[Any] = [None] * len(self._details)
        self.invoke = method.execute
        self.reset_inputs = functools.partial(method.set_inputs, self._fed)

    @property
    def facts(self) -> ProgramFacts | None:
        """Read from the file when first asked (after the load is timed)."""
        if not self._facts:
            self._facts.append(facts_of(self.path))
        return self._facts[0]

    def inputs(self) -> list[InputDetail]:
        return [InputDetail(**d) for d in self._details]

    def set_input(self, detail: InputDetail, value: Any) -> None:
        import numpy as np
        import torch

        self._fed[detail["index"]] = torch.from_numpy(np.ascontiguousarray(value))

    def output_shapes(self) -> list[list[int]]:
        return [list(s) for s in self._outputs]

    def delegation(self) -> Delegation:
        return delegation_block(self.facts)

    def check(self, settings: BenchSettings) -> None:
        if settings.require_full_delegation and (self.facts is None or not self.facts.fully_delegated):
            kernels = self.facts.kernels if self.facts else {}
            where = ", ".join(f"{op} x{n}" for op, n in sorted(kernels.items())) or "no delegate call"
            raise BenchmarkError("load", "require_full_delegation: the program runs "
                                         f"{sum(kernels.values())} calls on ExecuTorch's own kernels ({where})")


def load(path: str, threads: int, etdump: bool = False):
    """(program, method) loaded with `threads` XNNPACK threads; BenchmarkError("load", ...)."""
    c = binding()
    set_threads(threads)
    try:
        program = c._load_program(path, enable_etdump=etdump, program_verification=c.Verification.InternalConsistency)
        # XNNPACK builds its runtime and packs the weights here, as the app's loadMethod does.
        return program, program.load_method("forward")
    except Exception as exc:  # the binding raises RuntimeError with the runtime's error code
        raise BenchmarkError("load", exc) from exc


def open_session(path: str, settings: BenchSettings) -> ExecuTorchSession:
    """Load `path`'s forward method for timing (the protocol's init)."""
    program, method = load(path, settings.threads)
    return ExecuTorchSession(program, method, path)
