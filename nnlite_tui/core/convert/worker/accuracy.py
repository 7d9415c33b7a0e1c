"""What a precision costs in accuracy: a derived artifact's outputs against PyTorch fp32's.

Measured on a fixed set of seeded inputs (the fp32 validation's two, plus more), so that every
variant of a model is judged on the same inputs. Errors are relative to the output's scale (the
largest |value| PyTorch gives), as the fp32 validation's tolerance is. Beyond the precision's
tolerance the variant is still benchmarked, and flagged "degraded".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

# Random-weight models give near-uniform logits, where a tiny error can flip the top class:
# so top-1 agreement has a looser floor than the error and cosine figures.
TOLERANCES: dict[str, dict[str, float]] = {
    "fp32": {"max_abs_err_rel": 1e-3, "cosine": 0.99999, "top1_agreement": 1.0},
    "fp16": {"max_abs_err_rel": 1e-2, "cosine": 0.9999, "top1_agreement": 0.9},
    "dynamic-int8": {"max_abs_err_rel": 0.1, "cosine": 0.99, "top1_agreement": 0.75},
    "int8": {"max_abs_err_rel": 0.2, "cosine": 0.98, "top1_agreement": 0.6},
}


@dataclass(frozen=True)
class AccuracyCost:
    samples: int
    top1_agreement: float | None
    max_abs_err_rel: float
    mean_abs_err_rel: float
    cosine: float
    max_abs_err: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def measure(references: Sequence[Sequence[np.ndarray]], outputs: Sequence[Sequence[np.ndarray]]) -> AccuracyCost:
    """references[i] / outputs[i]: every output of the model for input i (float arrays, same shapes)."""
    if len(references) != len(outputs) or not references:
        raise ValueError(f"{len(outputs)} outputs for {len(references)} references")
    ref_flat, got_flat, agree, rows = [], [], 0, 0
    for ref, got in zip(references, outputs):
        if len(ref) != len(got):
            raise ValueError(f"the converted model has {len(got)} outputs, PyTorch gives {len(ref)}")
        for r, g in zip(ref, got):
            r, g = np.asarray(r, dtype=np.float64), np.asarray(g, dtype=np.float64)
            if r.shape != g.shape:
                raise ValueError(f"output shape {list(g.shape)} differs from PyTorch {list(r.shape)}")
            ref_flat.append(r.ravel())
            got_flat.append(g.ravel())
        first_r, first_g = np.asarray(ref[0], dtype=np.float64), np.asarray(got[0], dtype=np.float64)
        if first_r.ndim >= 1 and first_r.shape[-1] > 1:
            a = first_r.reshape(-1, first_r.shape[-1]).argmax(axis=1)
            b = first_g.reshape(-1, first_g.shape[-1]).argmax(axis=1)
            agree += int((a == b).sum())
            rows += int(a.size)
    r_all, g_all = np.concatenate(ref_flat), np.concatenate(got_flat)
    diff = np.abs(g_all - r_all)
    scale = max(float(np.max(np.abs(r_all))) if r_all.size else 0.0, 1e-12)
    max_abs = float(diff.max()) if diff.size else 0.0
    norm = float(np.linalg.norm(r_all) * np.linalg.norm(g_all))
    cosine = float(np.dot(r_all, g_all) / norm) if norm > 0 else (1.0 if max_abs == 0 else 0.0)
    if not np.isfinite(max_abs):
        max_abs, cosine = float("inf"), 0.0
    return AccuracyCost(samples=len(references), top1_agreement=(agree / rows) if rows else None,
                        max_abs_err_rel=max_abs / scale, mean_abs_err_rel=float(diff.mean()) / scale if diff.size else 0.0,
                        cosine=cosine, max_abs_err=max_abs)


def verdict(precision: str, cost: AccuracyCost) -> tuple[str, list[str]]:
    """("ok" | "degraded", the figures that are beyond the precision's tolerance)."""
    tol = TOLERANCES[precision]
    beyond = []
    if not cost.max_abs_err_rel <= tol["max_abs_err_rel"]:
        beyond.append(f"max_abs_err_rel {cost.max_abs_err_rel:.3g} > {tol['max_abs_err_rel']:g}")
    if not cost.cosine >= tol["cosine"]:
        beyond.append(f"cosine {cost.cosine:.5f} < {tol['cosine']:g}")
    if cost.top1_agreement is not None and cost.top1_agreement < tol["top1_agreement"]:
        beyond.append(f"top1_agreement {cost.top1_agreement:.2f} < {tol['top1_agreement']:g}")
    return ("degraded" if beyond else "ok"), beyond


def accuracy_block(precision: str, route: str, calibration: Mapping[str, object] | None,
                   cost: AccuracyCost) -> dict[str, object]:
    """The report's `accuracy` block."""
    result, beyond = verdict(precision, cost)
    return {"precision": precision, "route": route, "calibration": calibration,
            "top1_agreement": cost.top1_agreement, "max_abs_err_rel": cost.max_abs_err_rel,
            "mean_abs_err_rel": cost.mean_abs_err_rel, "cosine": cost.cosine, "max_abs_err": cost.max_abs_err,
            "samples": cost.samples, "tolerance": dict(TOLERANCES[precision]), "verdict": result, "beyond": beyond}
