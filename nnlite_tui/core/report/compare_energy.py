"""Energy per inference in `nnlite compare`, by the statistics latency uses (compare.py): the ratio
energy(after) / energy(before), a percentile bootstrap of it with the same resamples and seed, and
the same verdicts against the same threshold ("more" where latency says slower, "less" for faster).

What is resampled is what the counter measured independently: its updates. A battery's CURRENT_NOW
holds each value until the next update, so a window is a set of held values weighted by how long each
held (the protocol's hold mean); a CHARGE_COUNTER or a RAPL counter gives one rate between consecutive
updates. Each resample draws a window's pieces with replacement (idle and load, both runs
independently) and recomputes (P_load - P_idle) * load seconds / inferences. Pairs are compared only
when both runs have a valid figure on the same device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nnlite_tui.core.bench.energy_math import NS_PER_HOUR
from nnlite_tui.core.report.compare_verdict import CONFIDENCE, FASTER, RESAMPLES, SEED, SLOWER, classify

if TYPE_CHECKING:
    import numpy as np

MORE, LESS = "more", "less"
VERDICTS = {SLOWER: MORE, FASTER: LESS}
NOT_COMPARABLE = "not comparable"


@dataclass
class EnergyPair:
    pair: Any  # compare.Pair (not imported: compare imports this module)
    change: str  # more / less / unchanged / uncertain / not comparable
    before_mj: float | None
    after_mj: float | None
    ratio: float | None = None
    ci: tuple[float, float] | None = None
    why: str | None = None  # not comparable: why


Pieces = tuple[list[float], list[float]]  # power (mW) of each piece, its weight (ns)


def _current_pieces(w: dict[str, Any], sign: float) -> Pieces:
    s = w["samples"]
    pts = [(t, x) for t, x in zip(s["t_ns"], s["current_ua"]) if x is not None]
    volts = w["mean_voltage_uv"]
    powers, weights = [], []
    start = 0
    for j in range(1, len(pts) + 1):
        if j == len(pts) or pts[j][1] != pts[start][1]:
            end_t = pts[j][0] if j < len(pts) else pts[-1][0]
            if end_t > pts[start][0]:
                powers.append(sign * pts[start][1] * volts / 1e9)
                weights.append(float(end_t - pts[start][0]))
            start = j
    return powers, weights


def _charge_pieces(w: dict[str, Any]) -> Pieces:
    s = w["samples"]
    pts = [(t, x) for t, x in zip(s["t_ns"], s["charge_uah"]) if x is not None]
    # A coarse counter's value is exact only when it steps: rates between consecutive updates.
    updates = [pts[j] for j in range(1, len(pts)) if pts[j][1] != pts[j - 1][1]]
    powers, weights = [], []
    for (ta, xa), (tb, xb) in zip(updates, updates[1:]):
        powers.append(-(xb - xa) * NS_PER_HOUR / (tb - ta) * w["mean_voltage_uv"] / 1e9)
        weights.append(float(tb - ta))
    return powers, weights


def _rapl_pieces(w: dict[str, Any], ranges: list[int]) -> Pieces:
    from nnlite_tui.core.devices.host_energy import increments

    s = w["samples"]
    inc = increments(s["energy_uj"], ranges)
    powers, weights = [], []
    last, acc = 0, 0
    for j, d in enumerate(inc, start=1):
        acc += d
        if d != 0 and s["t_ns"][j] > s["t_ns"][last]:
            powers.append(acc * 1e6 / (s["t_ns"][j] - s["t_ns"][last]))
            weights.append(float(s["t_ns"][j] - s["t_ns"][last]))
            last, acc = j, 0
    return powers, weights


def pieces(block: dict[str, Any]) -> tuple[Pieces, Pieces] | None:
    """The independent pieces of a valid block's idle and load windows; None if it has no samples."""
    try:
        if block.get("counter") == "current_now":
            sign = -1.0 if block.get("sign_convention") == "discharge_negative" else 1.0
            return _current_pieces(block["idle"], sign), _current_pieces(block["load"], sign)
        if block.get("counter") == "charge_counter":
            return _charge_pieces(block["idle"]), _charge_pieces(block["load"])
        if block.get("counter") == "rapl":
            ranges = block["max_energy_range_uj"]
            return _rapl_pieces(block["idle"], ranges), _rapl_pieces(block["load"], ranges)
    except (KeyError, TypeError, ZeroDivisionError):
        return None  # a block without its samples (an older or hand-written report): no interval
    return None


def _resampled_means(p: Pieces, resamples: int, rng: "np.random.Generator") -> "np.ndarray":
    import numpy as np

    powers, weights = np.asarray(p[0], dtype=np.float64), np.asarray(p[1], dtype=np.float64)
    idx = rng.integers(0, len(powers), size=(resamples, len(powers)))
    return (powers[idx] * weights[idx]).sum(axis=1) / weights[idx].sum(axis=1)


def _resampled_energy(block: dict[str, Any], resamples: int, rng: "np.random.Generator") -> "np.ndarray | None":
    got = pieces(block)
    if got is None or not got[0][0] or not got[1][0]:
        return None
    idle, load = _resampled_means(got[0], resamples, rng), _resampled_means(got[1], resamples, rng)
    return (load - idle) * block["load"]["seconds"] / block["load"]["inferences"]


def energy_ratio_ci(before: dict[str, Any], after: dict[str, Any], resamples: int = RESAMPLES,
                    confidence: float = CONFIDENCE, seed: int = SEED) -> tuple[float, float] | None:
    import numpy as np

    rng = np.random.default_rng(seed)
    b, a = _resampled_energy(before, resamples, rng), _resampled_energy(after, resamples, rng)
    if a is None or b is None or np.any(b <= 0):
        return None  # a resample at or below idle has no ratio: the figure is too close to the noise
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(a / b, [tail, 100 - tail])
    return float(lo), float(hi)


def compare_energy(pairs: list[Any], threshold: float, resamples: int = RESAMPLES, seed: int = SEED) -> list[EnergyPair]:
    """The matched pairs where either run asked for energy."""
    out = []
    for p in pairs:
        b, a = p.before.energy, p.after.energy
        if b is None and a is None:
            continue
        mj = (lambda e: e.energy_per_inference_mj if e is not None and e.valid else None)
        before_mj, after_mj = mj(b), mj(a)
        if before_mj is None or after_mj is None:
            side = "before" if before_mj is None else "after"
            e = b if before_mj is None else a
            why = f"{side}: {(e.reason if e is not None else None) or 'energy not measured'}"
            out.append(EnergyPair(p, NOT_COMPARABLE, before_mj, after_mj, why=why))
            continue
        ratio = after_mj / before_mj
        ci = energy_ratio_ci(p.before.energy_block or {}, p.after.energy_block or {}, resamples, seed=seed)
        if ci is None:
            out.append(EnergyPair(p, NOT_COMPARABLE, before_mj, after_mj, ratio,
                                  why="no interval: a run's samples are missing or its figure is within its noise"))
            continue
        verdict = classify(ci, threshold)
        out.append(EnergyPair(p, VERDICTS.get(verdict, verdict), before_mj, after_mj, ratio, ci))
    return out
