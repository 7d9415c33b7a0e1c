"""Dense random weights: re-draw the parameters whose initial value lets the converter fold work away.

Random weights are the documented policy, and a benchmark of them is only worth something when the
converted graph does the work a trained model's graph does. The LiteRT converter simplifies on
constant weights: a multiplication by an all-zero tensor is zero, and everything that feeds only that
product is dead code (measured: resnet18(zero_init_residual=True) keeps 4 of its 20 convolutions;
ReZero gates and zero layer scales fold their branch). So before export:

- a floating-point *parameter* that is entirely zero and is not a bias is re-drawn: a weight of rank
  >= 2 (conv, linear, embedding, projections) from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bound the
  layers' own reset_parameters use; a normalisation scale from U(0.5, 1.5) (around BatchNorm's 1,
  away from 0 and 1); a parameter of unknown role (gate, layer scale, class token) from N(0, 0.02),
  a one-element one from U(0.5, 1.5);
- a *duplicate*, a non-constant weight of rank >= 2 equal to an earlier parameter (the deep-copied
  layers of nn.TransformerEncoder/Decoder at init), gets a seeded permutation of its own values: the
  converter merges identical products on the same input into one (a decoder's cross-attention
  key/value projections of the memory), a trained model has distinct layers. A shared Parameter
  (weight tying) is one tensor and is left alone.

Kept, because measured harmless: biases (they ride in the op's bias input), buffers (running
statistics fold into the convolution as trained ones do; masks and tables are structure), and
non-zero constants (a multiplication by 1e-6 costs what a trained one costs).

Seeded per tensor, crc32(name) ^ seed, so the same model gets the same weights in every worker.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from dataclasses import asdict, dataclass
from typing import Any

_NORMS = ("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RMSNorm", "LocalResponseNorm")
_WEIGHTED = ("Conv", "Linear", "Bilinear", "Embedding", "MultiheadAttention", "LSTM", "GRU", "RNN")
# The report lists the first ones by name; the count is always whole.
LISTED = 20
_REASONS = {"weight": "all-zero weight", "norm-scale": "all-zero normalisation scale",
            "unknown": "all-zero parameter (a multiplier cannot be ruled out)",
            "duplicate": "equal to an earlier parameter (a copied layer)"}


@dataclass(frozen=True)
class Redrawn:
    name: str  # qualified parameter name
    module: str  # the owning module's class
    shape: tuple[int, ...]
    reason: str
    distribution: str

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "shape": list(self.shape)}


@dataclass(frozen=True)
class WeightsRecord:
    """What the weights policy did to one model, for the conversion record."""

    policy: str  # "dense" (re-draw) or "as-built"
    tensors: tuple[Redrawn, ...]  # re-drawn ("dense"), or that would be ("as-built")

    def to_dict(self) -> dict[str, object]:
        key = "redrawn" if self.policy == "dense" else "would_redraw"
        return {"policy": self.policy, key: len(self.tensors),
                "tensors": [t.to_dict() for t in self.tensors[:LISTED]],
                **({"not_listed": len(self.tensors) - LISTED} if len(self.tensors) > LISTED else {})}

    def note(self) -> str:
        """For a failure cause: what was done about folding weights."""
        n = len(self.tensors)
        if self.policy == "dense":
            return f"{n} all-zero or duplicated tensors were re-drawn before export"
        return (f"the weights were used as built (--weights as-built), with {n} all-zero or duplicated tensors "
                "that --weights dense re-draws")


def _role(module_type: str, leaf: str) -> str:
    if leaf.endswith("bias") or leaf.startswith("bias_"):
        return "bias"
    if leaf == "weight" and any(n in module_type for n in _NORMS):
        return "norm-scale"
    if "weight" in leaf and any(n in module_type for n in _WEIGHTED):
        return "weight"
    return "unknown"


def _digest(p) -> str:
    return hashlib.sha1(p.detach().contiguous().view(-1).cpu().numpy().tobytes()).hexdigest()


def plan(model) -> list[tuple[str, str, str, Any]]:
    """(name, module class, role, parameter) of every parameter the rule re-draws, untouched."""
    modules = dict(model.named_modules())
    chosen = []
    seen: set[tuple] = set()
    for name, p in model.named_parameters():
        if not p.is_floating_point() or p.numel() == 0:
            continue
        owner = modules.get(name.rpartition(".")[0])
        mtype = type(owner if owner is not None else model).__name__
        if not bool(p.detach().any()):
            role = _role(mtype, name.rpartition(".")[2])
            if role != "bias":
                chosen.append((name, mtype, role, p))
            continue
        if p.dim() >= 2 and bool(p.detach().min() != p.detach().max()):
            key = (tuple(p.shape), str(p.dtype), _digest(p))
            if key in seen:
                chosen.append((name, mtype, "duplicate", p))
            seen.add(key)
    return chosen


def _draw(torch, t, role: str, gen) -> str:
    if role == "duplicate":  # its own values, permuted: the same distribution, another tensor
        flat = t.view(-1)
        flat.copy_(flat[torch.randperm(flat.numel(), generator=gen)])
        return "a seeded permutation of its own values"
    if role == "weight" and t.dim() >= 2:
        bound = 1.0 / math.sqrt(max(1, t[0].numel()))
        t.copy_(torch.empty_like(t).uniform_(-bound, bound, generator=gen))
        return f"U(-{bound:.3g}, {bound:.3g})"
    if role == "norm-scale" or t.numel() == 1:
        t.copy_(torch.empty_like(t).uniform_(0.5, 1.5, generator=gen))
        return "U(0.5, 1.5)"
    t.copy_(torch.empty_like(t).normal_(0.0, 0.02, generator=gen))
    return "N(0, 0.02)"


def apply_policy(model, policy: str, seed: int = 0) -> WeightsRecord:
    """Re-draw in place what plan() selects ("dense"), or only list it ("as-built")."""
    import torch

    if policy not in ("dense", "as-built"):
        raise ValueError(f"unknown weights policy {policy!r} (dense, as-built)")
    chosen = plan(model)
    done = []
    for name, mtype, role, p in chosen:
        dist = "kept as built"
        if policy == "dense":
            gen = torch.Generator().manual_seed(zlib.crc32(name.encode()) ^ seed)
            with torch.no_grad():
                dist = _draw(torch, p.data, role, gen)
        done.append(Redrawn(name, mtype, tuple(int(d) for d in p.shape), _REASONS[role], dist))
    return WeightsRecord(policy, tuple(done))
