"""Exact rewrites around two LiteRT converter failures, applied only while a model is exported to LiteRT.

- `linear-unit-rows-as-conv`: a Linear on a rank-4 input whose second-to-last dimension is 1, e.g.
  MaxVit's (B, G, 1, C) window partitions at a 32x32 input, without a bias (or with one the converter
  drops as zero), fails in the lowering with "'tfl.batch_matmul' op found invalid output rank,
  expected 3 but got 4"; flattening it first does not help (the converter folds the reshapes back).
  The same dot products as a 1x1 convolution over the tokens convert. Decided on the shape alone:
  whether a bias is zero cannot be asked while tracing (it is itself a data-dependent guard), and
  the convolution equals the Linear with any bias.
- `broadcasting-expand-dropped`: `x * y.expand_as(x)` between convolutions (squeeze-and-excitation
  blocks written with expand_as) fails with "'tfl.mul' op operands don't have broadcast-compatible
  shapes": the converter's layout passes move the product to NHWC and mis-shape the explicit
  BROADCAST_TO. An expand whose every user is an elementwise binary op that broadcasts the
  unexpanded tensor to the same result shape is redundant; the pass feeds the op the unexpanded
  tensor. It runs on the program torch.export returns, before the converter sees it.

Both compute the same values by definition; the worker still compares the artifact with PyTorch eager,
which runs the original ops. `installed()` counts what applied, for the conversion record (`rewrites`).
"""

from __future__ import annotations

import contextlib
from collections import Counter

LINEAR_AS_CONV = "linear-unit-rows-as-conv"
EXPAND_DROPPED = "broadcasting-expand-dropped"
WHY = {LINEAR_AS_CONV: "a Linear on a rank-4 (.., 1, C) input, as a 1x1 convolution (tfl.batch_matmul rank error)",
       EXPAND_DROPPED: "an explicit expand before an elementwise op that broadcasts anyway, dropped "
                       "(tfl.mul broadcast error)"}
_BINARY = ("mul.Tensor", "add.Tensor", "sub.Tensor", "div.Tensor")

_applied: Counter[str] = Counter()  # during the current installed() block


def applied() -> list[dict]:
    """The rewrites the last export applied: [{name, count, why}], for the conversion record."""
    return [{"name": name, "count": count, "why": WHY[name]} for name, count in sorted(_applied.items())]


def _linear(original):
    import torch.nn.functional as F

    def linear(input, weight, bias=None):
        if input.dim() > 3 and input.shape[-2] == 1:
            _applied[LINEAR_AS_CONV] += 1
            c = input.shape[-1]
            tokens = input.reshape(1, -1, c).permute(0, 2, 1).unsqueeze(-1)  # (1, C, T, 1)
            y = F.conv2d(tokens, weight[:, :, None, None], bias)
            return y.squeeze(-1).permute(0, 2, 1).reshape(*input.shape[:-1], weight.shape[0])
        return original(input, weight, bias)

    return linear


def _shape(arg):
    """The static shape of a graph argument (a node with a traced value, or a Python number: ())."""
    val = getattr(arg, "meta", {}).get("val") if hasattr(arg, "meta") else None
    if val is not None and hasattr(val, "shape"):
        return tuple(val.shape)
    return () if isinstance(arg, (int, float, bool)) else None


def _redundant(node, torch) -> bool:
    """An expand all of whose users are elementwise binary ops that give the same shape without it."""
    src = node.args[0]
    out = _shape(node)
    if out is None or _shape(src) is None or not node.users:
        return False
    for user in node.users:
        if user.op != "call_function" or not any(str(user.target).endswith(b) for b in _BINARY) or user.kwargs:
            return False
        others = [_shape(a) for a in user.args if a is not node]
        if any(s is None for s in others) or len(user.args) != 2:
            return False
        if tuple(torch.broadcast_shapes(*others, _shape(src))) != tuple(_shape(user)):
            return False
    return True


def drop_broadcasting_expands(gm) -> int:
    """Feed each redundant expand's users its input instead; the number of expands dropped."""
    import torch

    targets = (torch.ops.aten.expand.default, torch.ops.aten.expand_as.default)
    dropped = 0
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target in targets and _redundant(node, torch):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
            dropped += 1
    if dropped:
        gm.graph.lint()
        gm.recompile()
    return dropped


def _export(original):
    def export(*args, **kwargs):
        program = original(*args, **kwargs)
        dropped = drop_broadcasting_expands(program.graph_module)
        if dropped:
            _applied[EXPAND_DROPPED] += dropped
        return program

    return export


@contextlib.contextmanager
def installed():
    """Both rewrites, for one export (entered inside export_fixes.exact_rewrites: innermost, so the
    Linear rewrite sees the input's shape before the rank > 3 flattening there)."""
    import torch
    import torch.nn.functional as F

    _applied.clear()
    originals = F.linear, torch.export.export
    F.linear, torch.export.export = _linear(originals[0]), _export(originals[1])
    try:
        yield
    finally:
        F.linear, torch.export.export = originals
