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
from typing import TYPE_CHECKING, TypedDict

from nnlite_tui.core.bench.energy_math import NS_PER_HOUR
from nnlite_tui.core.report.compare_verdict import CONFIDENCE, FASTER, RESAMPLES, SEED, SLOWER, classify
from nnlite_tui.core.report.compare_pair import Pair
from nnlite_tui.core.results.model import EnergyBlock

if TYPE_CHECKING:
    import numpy as np

MORE, LESS = "more", "less"
VERDICTS = {SLOWER: MORE, FASTER: LESS}
NOT_COMPARABLE = "not comparable"


@dataclass
class EnergyPair:
    pair: Pair
    change: str  # more / less / unchanged / uncertain / not comparable
    before_mj: float | None
    after_mj: float | None
    ratio: float | None = None
    ci: tuple[float, float] | None = None
    why: str | None = None  # not comparable: why


Pieces = tuple[list[float], list[float]]  # power (mW) of each piece, its weight (ns)


class WindowSamples(TypedDict, total=False):
    """A window's counter readings, one list per counter, aligned with `t_ns` (PROTOCOL.md 9f)."""

    t_ns: list[int]
    current_ua: list[float | None]
    charge_uah: list[float | None]
    energy_uj: list[list[int]]  # one reading per counter (package, its domains)


class Window(TypedDict):
    """An energy block's `idle` or `load` window, as the app, the simulator and the host write it."""

    samples: WindowSamples
    mean_voltage_uv: float
    seconds: float
    inferences: int


def _current_pieces(w: Window, sign: float) -> Pieces:
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


def _charge_pieces(w: Window) -> Pieces:
    s = w["samples"]
    pts = [(t, x) for t, x in zip(s["t_ns"], s["charge_uah"]) if x is not None]
    # A coarse counter's value is exact only when it steps: rates between consecutive updates.
    updates = [pts[j] for j in range(1, len(pts)) if pts[j][1] != pts[j - 1][1]]
    powers, weights = [], []
    for (ta, xa), (tb, xb) in zip(updates, updates[1:]):
        powers.append(-(xb - xa) * NS_PER_HOUR / (tb - ta) * w["mean_voltage_uv"] / 1e9)
        weights.append(float(tb - ta))
    return powers, weights


def _rapl_pieces(w: Window, ranges: list[int]) -> Pieces:
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


def pieces(block: EnergyBlock) -> tuple[Pieces, Pieces] | None:
    """The independent pieces of a valid block's idle and load windows; None if it has no samples."""
    # The windows are the counter's own keys, not the block's declared ones: read as written, and a
    # window missing or malformed is a KeyError or TypeError below.
    idle: Window = block.extra("idle")
    load: Window = block.extra("load")
    try:
        if block.counter == "current_now":
            sign = -1.0 if block.extra("sign_convention") == "discharge_negative" else 1.0
            return _current_pieces(idle, sign), _current_pieces(load, sign)
        if block.counter == "charge_counter":
            return _charge_pieces(idle), _charge_pieces(load)
        if block.counter == "rapl":
            ranges: list[int] = block.extra("max_energy_range_uj")
            return _rapl_pieces(idle, ranges), _rapl_pieces(load, ranges)
    except (KeyError, TypeError, ZeroDivisionError):
        return None  # a block without its samples (an older or hand-written report): no interval
    return None


def _resampled_means(p: Pieces, resamples: int, rng: "np.random.Generator") -> "np.ndarray":
    import numpy as np

    powers, weights = np.asarray(p[0], dtype=np.float64), np.asarray(p[1], dtype=np.float64)
    idx = rng.integers(0, len(powers), size=(resamples, len(powers)))
    return (powers[idx] * weights[idx]).sum(axis=1) / weights[idx].sum(axis=1)


def _resampled_energy(block: EnergyBlock | None, resamples: int,
                      rng: "np.random.Generator") -> "np.ndarray | None":
    got = pieces(block) if block is not None else None
    if block is None or got is None or not got[0][0] or not got[1][0]:
        return None
    idle, load = _resampled_means(got[0], resamples, rng), _resampled_means(got[1], resamples, rng)
    window: Window = block.extra("load")
    return (load - idle) * window["seconds"] / window["inferences"]


def energy_ratio_ci(before: EnergyBlock | None, after: EnergyBlock | None, resamples: int = RESAMPLES,
                    confidence: float = CONFIDENCE, seed: int = SEED) -> tuple[float, float] | None:
    import numpy as np

    rng = np.random.default_rng(seed)
    b, a = _resampled_energy(before, resamples, rng), _resampled_energy(after, resamples, rng)
    if a is None or b is None or np.any(b <= 0):
        return None  # a resample at or below idle has no ratio: the figure is too close to the noise
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(a / b, [tail, 100 - tail])
    return float(lo), float(hi)


def compare_energy(pairs: list[Pair], threshold: float, resamples: int = RESAMPLES, seed: int = SEED) -> list[EnergyPair]:
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
        ci = energy_ratio_ci(p.before.energy_block, p.after.energy_block, resamples, seed=seed)
        if ci is None:
            out.append(EnergyPair(p, NOT_COMPARABLE, before_mj, after_mj, ratio,
                                  why="no interval: a run's samples are missing or its figure is within its noise"))
            continue
        verdict = classify(ci, threshold)
        out.append(EnergyPair(p, VERDICTS.get(verdict, verdict), before_mj, after_mj, ratio, ci))
    return out
