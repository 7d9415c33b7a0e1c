"""Let models import torchvision when its compiled extension cannot load beside this torch.

The torchvision wheel on the package index is a CUDA build: its `_C.so` needs CUDA libraries that the
CPU torch does not ship, so it does not load. torchvision then marks its compiled operators absent,
but `torchvision/_meta_registrations.py` registers fake kernels for `torchvision::nms` and `::qnms`
unconditionally, and `import torchvision` raises "operator torchvision::nms does not exist".
Defining those two schemas first lets the import (models, ops building blocks, transforms) work; the
compiled operators themselves stay unavailable and say so in one clear sentence.

Runs in the conversion worker before anything imports torchvision; a no-op when torchvision is not
installed, already imported, or its compiled operators load.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

MISSING_OPS = ("torchvision's compiled operators are not available in this environment: "
               "install a torchvision build that matches your torch")
# What torchvision itself raises from ops that check for the extension (roi_pool, deform_conv2d...).
_TORCHVISION_NO_OPS = "Couldn't load custom C++ ops"

_library = None  # the torch.library.Library holding the schemas; kept alive for the process


class CompiledOpsUnavailable(RuntimeError):
    """A model called one of torchvision's compiled operators, which this environment lacks."""


def prepare() -> str:
    """Make `import torchvision` work. Returns what was done: "absent", "native" or "shim"."""
    if "torchvision" in sys.modules:
        return "native"
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    import torch

    if _has_nms(torch) or _load_extension(torch, Path(next(iter(spec.submodule_search_locations)))):
        return "native"
    _define_schemas(torch)
    return "shim"


def _has_nms(torch) -> bool:
    try:
        torch.ops.torchvision.nms  # noqa: B018  (the lookup is the check)
    except (AttributeError, RuntimeError):
        return False
    return True


def _load_extension(torch, package_dir: Path) -> bool:
    """Load torchvision's `_C` the way torchvision does; False when it cannot load here."""
    for path in sorted(package_dir.glob("_C*.so")) + sorted(package_dir.glob("_C*.pyd")):
        try:
            torch.ops.load_library(str(path))
        except (OSError, RuntimeError):
            return False
        return _has_nms(torch)
    return False


def _define_schemas(torch) -> None:
    global _library

    def unavailable(*args, **kwargs):
        raise CompiledOpsUnavailable(MISSING_OPS)

    lib = torch.library.Library("torchvision", "DEF")
    for name in ("nms", "qnms"):
        lib.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.impl(name, unavailable, "CPU")
    _library = lib


def explain(exc: BaseException) -> BaseException | None:
    """CompiledOpsUnavailable for torchvision's own "no compiled ops" error (anywhere in the chain)."""
    seen = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, CompiledOpsUnavailable):
            return link
        if str(link).startswith(_TORCHVISION_NO_OPS) or "torchvision::" in str(link).split("\n", 1)[0]:
            return CompiledOpsUnavailable(MISSING_OPS)
        link = link.__cause__ or link.__context__
    return None
