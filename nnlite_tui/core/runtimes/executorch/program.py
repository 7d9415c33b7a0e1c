"""What a .pte says about itself, read from its flatbuffer without ExecuTorch: its forward method's
inputs (shapes and dtypes), the delegates it calls (their backend ids, e.g. XnnpackBackend), its
delegate calls (one per XNNPACK partition) and the operators it runs on ExecuTorch's own kernels.

ExecuTorch's Python pybindings give input shapes but neither the delegates nor the instruction list,
and `executorch.exir`'s reader costs an 8 s import. This reads only the program's flatbuffer (the
file's first `program_size` bytes; weights and delegate blobs are segments after it) with the
`flatbuffers` package, by the field order of ExecuTorch's schema/program.fbs (file identifier ET12).
So the orchestrator (which must not import torch) can tell the benchmark app the inputs it needs,
and the benchmark process names the delegates as Android's MethodMetadata.getBackends() does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TypedDict

IDENTIFIER = b"ET12"
HEADER_MAGIC = b"eh00"
# executorch/schema/scalar_type.fbs -> numpy dtype names
SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
                7: "float64", 11: "bool", 15: "bfloat16", 27: "uint16", 28: "uint32", 29: "uint64"}
_TENSOR = 5  # KernelTypes union: Null, Int, Bool, Double, Tensor, ...
_KERNEL_CALL, _DELEGATE_CALL = 1, 2  # InstructionArguments union: KernelCall, DelegateCall, ...


class ProgramError(ValueError):
    """Not a readable ExecuTorch program; the message names the file."""


class ProgramBlock(TypedDict):
    input_shapes: list[list[int]]
    input_dtypes: list[str]
    backends: list[str]
    delegate_calls: int
    kernels: dict[str, int]


@dataclass
class ProgramFacts:
    input_shapes: list[list[int]]
    input_dtypes: list[str]
    backends: list[str]  # distinct delegate backend ids, in the program's order
    delegate_calls: int  # XNNPACK partitions the method calls
    kernels: dict[str, int] = field(default_factory=dict)  # operators on ExecuTorch's own kernels -> calls

    @property
    def fully_delegated(self) -> bool:
        return self.delegate_calls > 0 and not self.kernels

    def to_dict(self) -> ProgramBlock:
        return {"input_shapes": self.input_shapes, "input_dtypes": self.input_dtypes, "backends": self.backends,
                "delegate_calls": self.delegate_calls, "kernels": dict(self.kernels)}


class _Table:
    """A flatbuffer table: field i is at vtable slot 4 + 2 i."""

    def __init__(self, buf: bytes, pos: int):
        from flatbuffers.table import Table

        self.t = Table(buf, pos)

    def _off(self, i: int) -> int:
        return self.t.Offset(4 + 2 * i)

    def scalar(self, i: int, fmt: str, default: int = 0) -> int:
        off = self._off(i)
        return struct.unpack_from("<" + fmt, self.t.Bytes, self.t.Pos + off)[0] if off else default

    def table(self, i: int) -> _Table | None:
        off = self._off(i)
        return _Table(self.t.Bytes, self.t.Indirect(self.t.Pos + off)) if off else None

    def union(self, i: int) -> _Table | None:
        off = self._off(i)
        if not off:
            return None
        from flatbuffers.table import Table

        child = Table(self.t.Bytes, 0)
        self.t.Union(child, off)
        return _Table(self.t.Bytes, child.Pos)

    def string(self, i: int) -> str | None:
        off = self._off(i)
        return self.t.String(self.t.Pos + off).decode() if off else None

    def _vector(self, i: int) -> tuple[int, int]:
        off = self._off(i)
        if not off:
            return 0, 0
        return self.t.Vector(off), self.t.VectorLen(off)

    def tables(self, i: int) -> list[_Table]:
        start, n = self._vector(i)
        return [_Table(self.t.Bytes, self.t.Indirect(start + 4 * k)) for k in range(n)]

    def numbers(self, i: int, fmt: str) -> list[int]:
        start, n = self._vector(i)
        size = struct.calcsize(fmt)
        return [struct.unpack_from("<" + fmt, self.t.Bytes, start + size * k)[0] for k in range(n)]


def _flatbuffer(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if len(head) < 8 or head[4:8] != IDENTIFIER:
                raise ProgramError(f"{path}: not an ExecuTorch program (no {IDENTIFIER.decode()} identifier)")
            size = None
            if head[8:12] == HEADER_MAGIC:  # the extended header: the flatbuffer's own size
                size = struct.unpack_from("<Q", head, 16)[0]
            fh.seek(0)
            return fh.read(size) if size else fh.read()
    except OSError as exc:
        raise ProgramError(f"{path}: unreadable ({exc})") from exc


def read_program(path: str, method: str = "forward") -> ProgramFacts:
    """The facts of `method` in the .pte at `path`; ProgramError when it is not one."""
    buf = _flatbuffer(path)
    try:
        root = _Table(buf, struct.unpack_from("<I", buf, 0)[0])
        plans = root.tables(1)  # Program.execution_plan
        plan = next((p for p in plans if p.string(0) == method), None)  # ExecutionPlan.name
        if plan is None:
            raise ProgramError(f"{path}: no method {method!r} (has {', '.join(p.string(0) or '?' for p in plans)})")
        values = plan.tables(2)
        shapes: list[list[int]] = []
        dtypes: list[str] = []
        for index in plan.numbers(3, "i"):  # ExecutionPlan.inputs: indices into values
            value = values[index]
            if value.scalar(0, "B") != _TENSOR:
                raise ProgramError(f"{path}: input {len(shapes)} of {method} is not a tensor")
            tensor = value.union(1)
            if tensor is None:
                raise ProgramError(f"{path}: input {len(shapes)} of {method} has no tensor")
            code = tensor.scalar(0, "b")
            shapes.append([int(d) for d in tensor.numbers(2, "i")])
            dtypes.append(SCALAR_TYPES.get(code, f"scalar_type_{code}"))
        operators = [f"{op.string(0)}.{op.string(1)}" if op.string(1) else str(op.string(0)) for op in plan.tables(6)]
        backends: list[str] = []
        for delegate in plan.tables(7):  # ExecutionPlan.delegates: BackendDelegate.id
            name = delegate.string(0) or "?"
            if name not in backends:
                backends.append(name)
        calls = 0
        kernels: dict[str, int] = {}
        for chain in plan.tables(5):
            for instruction in chain.tables(2):
                kind = instruction.scalar(0, "B")
                if kind == _DELEGATE_CALL:
                    calls += 1
                elif kind == _KERNEL_CALL:
                    call = instruction.union(1)
                    if call is None:
                        raise ProgramError(f"{path}: a kernel call of {method} without its arguments")
                    op = operators[call.scalar(0, "i")]
                    kernels[op] = kernels.get(op, 0) + 1
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise ProgramError(f"{path}: a malformed ExecuTorch program ({type(exc).__name__}: {exc})") from exc
    return ProgramFacts(shapes, dtypes, backends, calls, kernels)
