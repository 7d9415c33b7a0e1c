"""Which construct stopped the export: the source line that raised, read from the error's traceback.

Two frames answer "what prevents export": the deepest frame outside torch's tracing machinery (the
construct itself: a `bool(tensor)`, an `.item()`, a loop bound by a tensor value, in the model or
in a library it calls) and the deepest frame in the model's own file (where the model reaches it).
A data-dependent failure then says "`make_causal = bool((mask == causal_comparison).all())` in
torch/nn/modules/transformer.py:1245, reached from model.py:113" instead of a task's guess.
"""

from __future__ import annotations

import linecache
import os
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

# Frames of the tracer and of nnlite's own export plumbing, not of the code being traced (nor are the
# converter's: its runtime declares where they are, `Runtime.converter_frames`).
_MACHINERY = re.compile(
    r"/torch/(_dynamo|_export|export|fx|_subclasses|_guards|_prims_common|_refs|_decomp|utils/_python_dispatch|"
    r"utils/_stats|_ops|_library|_higher_order_ops|overrides|_functorch|_meta_registrations|_prims|"
    r"__init__|_tensor|sym_|_logging|utils/_sympy|utils/_traceback|_compile)|/sympy/|"
    r"contextlib\.py")
# nnlite's own export plumbing (the wrapper, the rewrites), by where this package is installed.
_OWN = str(Path(__file__).resolve().parents[3]) + os.sep


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str
    code: str

    def where(self) -> str:
        return f"{self.file.split('/site-packages/')[-1]}:{self.line}"

    def to_dict(self) -> dict[str, object]:
        return {"file": self.where().rsplit(":", 1)[0], "line": self.line, "function": self.function,
                "code": self.code}


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The traceback of the first error in the chain that has one (the original error is the deepest)."""
    seen, chain = set(), []
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        chain.append(link)
        link = link.__cause__ or link.__context__
    for e in reversed(chain):
        frames = list(traceback.extract_tb(e.__traceback__))
        if frames:
            return frames
    return []


def blame(exc: BaseException, model_file: str | None,
          converter_frames: tuple[str, ...]) -> tuple[Frame | None, Frame | None]:
    """(the construct's frame, the model file's deepest frame) of an export error; None where unknown.
    Frames whose path holds one of `converter_frames` are the converter's, as the tracer's are."""
    construct = model = None
    for fs in _frames(exc):
        code = (fs.line or linecache.getline(fs.filename, fs.lineno or 0)).strip()
        frame = Frame(fs.filename, fs.lineno or 0, fs.name, code)
        if model_file and fs.filename == model_file:
            model = frame
        if not (_MACHINERY.search(fs.filename) or fs.filename.startswith(_OWN)
                or any(part in fs.filename for part in converter_frames)):
            construct = frame
    return construct, model


def describe(construct: Frame | None, model: Frame | None) -> str | None:
    """`code` at file:line[, reached from model.py:N], or None when no frame is known."""
    if construct is None:
        return None if model is None else f"`{model.code}` at {model.where()}"
    text = f"`{construct.code}` at {construct.where()}"
    if model is not None and model != construct:
        text += f", reached from {model.where()} (`{model.code}`)"
    return text
