"""The input geometry a LEMUR transform produces, read from its source with `ast` (torchvision is never
imported): follow Resize / crops / Pad / Grayscale from the dataset's native size."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from nnlite_tui.core.sources.datasets import Dataset
from nnlite_tui.core.sources.python_source import parse_source


Op = tuple[str, list[object], dict[str, object]]  # (call name, literal args, literal kwargs); None if not literal

_CROPS = {"CenterCrop", "RandomCrop", "RandomResizedCrop", "FiveCrop", "TenCrop"}
# torchvision transforms that keep size and channel count; anything else unknown makes the size unknown.
_KEEP = {
    "Compose", "ToTensor", "Normalize", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation",
    "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "RandomGrayscale", "RandomPerspective",
    "RandomPosterize", "RandomSolarize", "RandomAffine", "ColorJitter", "GaussianBlur", "ConvertImageDtype",
    "PILToTensor", "RandomInvert", "RandomErasing",
}


@dataclass(frozen=True)
class Geometry:
    hw: tuple[int, int] | None
    channels: int
    note: str = ""  # why hw is None


def parse_transform(path: Path) -> list[Op] | str:
    """The calls in a transform file's `transform()` in source order; a string says why there are none."""
    tree = parse_source(path, path.read_bytes())
    if isinstance(tree, str):
        return tree
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "transform"]
    if not fns:
        return f"no transform() in {path.name}"
    calls = sorted((n for n in ast.walk(fns[0]) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    out: list[Op] = []
    for call in calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "?")
        out.append((name, [literal(a) for a in call.args], {k.arg: literal(k.value) for k in call.keywords if k.arg}))
    return out


def literal(node: ast.expr) -> object:
    """The value of a literal expression, or None (a name, a call, `*norm`...)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None


def _sides(size: object) -> tuple[int, int] | None:
    """(h, w) of a size given as [n] or [h, w] in numbers; None for anything else."""
    if not isinstance(size, (tuple, list)) or len(size) not in (1, 2):
        return None
    numbers = [int(v) for v in size if isinstance(v, (int, float))]
    return (numbers[0], numbers[-1]) if len(numbers) == len(size) else None


def apply_transform(ops: list[Op] | str, ds: Dataset) -> Geometry:
    """Follow the size through a transform's calls, starting from the dataset's native size."""
    if isinstance(ops, str):
        return Geometry(None, ds.channels, ops)
    hw, ch = ds.native_hw, ds.channels
    for name, args, kwargs in ops:
        if name in _KEEP:
            continue
        size = kwargs.get("size", args[0] if args else None)
        if name == "Resize" or name in _CROPS:
            if isinstance(size, int):
                if name == "Resize" and hw is not None and hw[0] != hw[1]:
                    short = min(hw)
                    hw = (round(hw[0] * size / short), round(hw[1] * size / short))
                elif name == "Resize" and hw is None:
                    continue  # short side scaled, long side still unknown; a later crop may fix it
                else:
                    hw = (size, size)
            elif (given := _sides(size)) is not None:
                hw = given
            else:
                return Geometry(None, ch, f"{name} size not a literal")
        elif name == "Pad":
            pad = kwargs.get("padding", args[0] if args else None)
            if hw is None:
                continue
            if isinstance(pad, int):
                pad = (pad, pad, pad, pad)
            elif isinstance(pad, (tuple, list)) and len(pad) == 2:
                pad = (pad[0], pad[1], pad[0], pad[1])
            sides = [p for p in pad if isinstance(p, int)] if isinstance(pad, (tuple, list)) and len(pad) == 4 else []
            if len(sides) != 4:
                return Geometry(None, ch, "Pad padding not a literal")
            left, top, right, bottom = sides
            hw = (hw[0] + top + bottom, hw[1] + left + right)
        elif name == "Grayscale":
            channels = kwargs.get("num_output_channels", args[0] if args else 1)
            if not isinstance(channels, (int, float)):
                return Geometry(None, ch, "Grayscale num_output_channels not a literal")
            ch = int(channels)
        else:
            return Geometry(None, ch, f"custom step {name}()")
    if hw is None:
        return Geometry(None, ch, "dataset images have no fixed size")
    return Geometry(hw, ch)
